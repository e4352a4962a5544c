//! The durable ledger: an append-only journal of JSON lines.
//!
//! # Format
//!
//! One UTF-8 JSON object per line, each ending in `\n`, appended in the order things happen:
//!
//! ```text
//! {"v":1,"op":"begin","key":{…},"pid":4242}
//! {"v":1,"op":"complete","key":{…},"result":{"output":…,"is_error":false}}
//! {"v":1,"op":"fail","key":{…}}
//! {"v":1,"op":"unknown","key":{…},"reason":"…"}
//! ```
//!
//! * `v`: the format version, `1`. Lines of another version are skipped with a warning.
//! * `op`: `begin` (the tool is about to run), `complete` (it finished, `result` is the
//!   [`ToolResult`] to replay), `fail` (it failed without effects and may run again),
//!   `unknown` (its effects are unknown, `reason` says why).
//! * `key`: the [`OperationKey`] as an object with `thread_id`, `turn_id`, `call_id`,
//!   `tool_name` and `args_hash`.
//! * `pid`: on `begin`, the process that runs the tool (for the diagnosis after a crash).
//!
//! # Replay
//!
//! Opening the journal applies its lines in order (the last record of a key wins). An
//! operation whose last record is `begin` was running when its process stopped: it answers
//! `OutcomeUnknown`, with a reason saying so. A last line cut short by a crash mid-write is
//! ignored with a warning (the journal is then terminated with `\n` so new lines start clean);
//! other unreadable lines are skipped with a warning too, never an error.
//!
//! # Durability and concurrency
//!
//! `begin` writes its line (one `write` on an `O_APPEND` handle) before it returns, so the
//! tool runs only after its record is in the file: a `kill -9` mid-tool cannot lose it. With
//! [`Durability::Synced`] every line is also `fdatasync`ed, surviving a power loss as well.
//! Threads serialise on a mutex; processes append whole lines under a shared `flock` and
//! notice when another process's compaction replaced the file (see `journal_file`).
//!
//! # Compaction
//!
//! Past [`JournalOptions::compact_after_bytes`], the journal is rewritten through a temporary
//! file and `rename`, keeping started and unknown operations and the newest completed ones.

use super::LedgerBounds;
use super::compaction::{compact, read_all};
use super::journal_file::{JournalFile, LockKind};
use super::record::RecordRef;
use super::replay::replay;
use super::state::LedgerState;
use kun_ports::{BeginOutcome, LedgerError, OperationKey, OperationLedger, ToolResult};
use std::fmt::{self, Display};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// How far a record has got when the ledger call returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Durability {
    /// Written to the file with one `write`: survives the process being killed, not a power
    /// loss or kernel crash. One syscall per record.
    #[default]
    Written,
    /// Written and `fdatasync`ed: survives a power loss too, at the cost of a disk flush per
    /// record.
    Synced,
}

/// How a [`JournalLedger`] behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JournalOptions {
    /// When records count as recorded. Default [`Durability::Written`].
    pub durability: Durability,
    /// How many records survive compaction and stay in memory.
    pub bounds: LedgerBounds,
    /// Compact once the file grows past this many bytes. Default 8 MiB.
    pub compact_after_bytes: u64,
}

impl Default for JournalOptions {
    fn default() -> Self {
        Self {
            durability: Durability::Written,
            bounds: LedgerBounds::default(),
            compact_after_bytes: 8 << 20,
        }
    }
}

/// What opening the journal found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JournalRecovery {
    /// Records applied.
    pub records: usize,
    /// Unreadable lines skipped (each logged as a warning).
    pub skipped_lines: usize,
    /// Whether the last line was cut short by a crash mid-write (ignored).
    pub torn_tail: bool,
    /// Operations that were running when their process stopped: now `OutcomeUnknown`.
    pub interrupted: usize,
}

/// A durable [`OperationLedger`] backed by an append-only journal file (format in the
/// [module docs](self)).
///
/// ```
/// use kun_ports::{BeginOutcome, OperationKey, OperationLedger, ToolResult};
/// use kun_registry::ledger::JournalLedger;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("operations.jsonl");
/// let key = OperationKey {
///     thread_id: "thread".into(),
///     turn_id: "turn".into(),
///     call_id: "call_1".into(),
///     tool_name: "write".into(),
///     args_hash: "ab12".into(),
/// };
/// let ledger = JournalLedger::open(&path)?;
/// assert_eq!(ledger.begin(&key)?, BeginOutcome::Started);
/// drop(ledger); // the process "stops" while the tool runs
///
/// let reopened = JournalLedger::open(&path)?;
/// assert!(matches!(reopened.begin(&key)?, BeginOutcome::OutcomeUnknown { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct JournalLedger {
    path: PathBuf,
    options: JournalOptions,
    recovery: JournalRecovery,
    pid: u32,
    inner: Mutex<Inner>,
}

struct Inner {
    state: LedgerState,
    file: JournalFile,
    /// Compact when the file grows past this.
    compact_at: u64,
    /// An earlier write may have left part of a line: start the next one on a new line.
    needs_newline: bool,
    /// Reused encoding buffer.
    buf: Vec<u8>,
}

impl JournalLedger {
    /// Opens (or creates, with its directory) the journal at `path` with default options.
    ///
    /// # Errors
    /// When the path cannot be created, opened, locked or read.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self, LedgerError> {
        Self::open_with(path, JournalOptions::default())
    }

    /// Opens (or creates, with its directory) the journal at `path` and replays it.
    ///
    /// # Errors
    /// When the path cannot be created, opened, locked or read.
    pub fn open_with(
        path: impl Into<PathBuf>,
        options: JournalOptions,
    ) -> Result<Self, LedgerError> {
        let path = path.into();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| open_error(&path, "create the directory of", e))?;
        }
        let mut file = JournalFile::open(&path).map_err(|e| open_error(&path, "open", e))?;
        let (replayed, len) = file
            .with_lock(LockKind::Exclusive, |handle, _len| {
                let bytes = read_all(handle)?;
                let replayed = replay(&bytes, options.bounds, &path);
                let mut len = bytes.len() as u64;
                if replayed.needs_newline {
                    let mut handle = handle;
                    handle.write_all(b"\n")?;
                    len += 1;
                }
                Ok((replayed, len))
            })
            .map_err(|e| open_error(&path, "read", e))?;
        let mut state = replayed.state;
        let interrupted = state.interrupt_started(interrupted_reason);
        let recovery = JournalRecovery {
            records: replayed.records,
            skipped_lines: replayed.skipped_lines,
            torn_tail: replayed.torn_tail,
            interrupted,
        };
        let mut inner = Inner {
            state,
            file,
            compact_at: options.compact_after_bytes,
            needs_newline: false,
            buf: Vec::with_capacity(512),
        };
        if len > options.compact_after_bytes {
            inner.compact_or_warn(&path, &options);
        }
        Ok(Self {
            path,
            options,
            recovery,
            pid: std::process::id(),
            inner: Mutex::new(inner),
        })
    }

    /// The journal's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What opening the journal found.
    #[must_use]
    pub const fn recovery(&self) -> JournalRecovery {
        self.recovery
    }

    /// How many operations are held in memory (started, completed and unknown).
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().state.len()
    }

    /// Whether no operation is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rewrites the journal now, keeping only what a replay needs.
    ///
    /// # Errors
    /// When the new file cannot be written or renamed into place; the old journal stays.
    pub fn compact(&self) -> Result<(), LedgerError> {
        self.lock().compact(&self.path, &self.options).map_err(|e| {
            ledger_error(
                &self.path,
                "cannot compact the journal; the old one is kept",
                e,
            )
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // No code path panics while holding the lock, so a poisoned state is still consistent.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn append(
        &self,
        inner: &mut Inner,
        record: RecordRef<'_>,
        doing: &str,
    ) -> Result<(), LedgerError> {
        inner.buf.clear();
        if inner.needs_newline {
            inner.buf.push(b'\n');
        }
        record
            .encode_into(&mut inner.buf)
            .map_err(|e| ledger_error(&self.path, doing, e))?;
        let durability = self.options.durability;
        let Inner { file, buf, .. } = inner;
        let written = file.with_lock(LockKind::Shared, |mut handle, len| {
            handle.write_all(buf)?;
            if durability == Durability::Synced {
                handle.sync_data()?;
            }
            Ok(len + buf.len() as u64)
        });
        match written {
            Ok(size) => {
                inner.needs_newline = false;
                if size > inner.compact_at {
                    inner.compact_or_warn(&self.path, &self.options);
                }
                Ok(())
            }
            Err(error) => {
                inner.needs_newline = true;
                Err(ledger_error(&self.path, doing, error))
            }
        }
    }
}

impl fmt::Debug for JournalLedger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JournalLedger")
            .field("path", &self.path)
            .field("options", &self.options)
            .field("recovery", &self.recovery)
            .finish_non_exhaustive()
    }
}

impl Inner {
    /// Rewrites the file; the next compaction waits until it has doubled (or reached the bound).
    fn compact(&mut self, path: &Path, options: &JournalOptions) -> io::Result<()> {
        let size = compact(&mut self.file, path, options.bounds, options.durability)?;
        self.compact_at = options.compact_after_bytes.max(size.saturating_mul(2));
        self.needs_newline = false;
        Ok(())
    }

    fn compact_or_warn(&mut self, path: &Path, options: &JournalOptions) {
        if let Err(error) = self.compact(path, options) {
            // Try again only after as much growth again, so a failing compaction does not
            // run on every record.
            self.compact_at = self.compact_at.saturating_mul(2);
            tracing::warn!(
                journal = %path.display(),
                %error,
                "operation journal: compaction failed; the journal keeps growing until it succeeds"
            );
        }
    }
}

impl OperationLedger for JournalLedger {
    fn begin(&self, key: &OperationKey) -> Result<BeginOutcome, LedgerError> {
        let mut inner = self.lock();
        if let Some(outcome) = inner.state.blocking_outcome(key) {
            return Ok(outcome);
        }
        let record = RecordRef::Begin { key, pid: self.pid };
        self.append(
            &mut inner,
            record,
            "cannot record the start of the call, so it was not run",
        )?;
        inner.state.start(key, self.pid);
        Ok(BeginOutcome::Started)
    }

    fn complete(&self, key: &OperationKey, result: &ToolResult) -> Result<(), LedgerError> {
        let mut inner = self.lock();
        let record = RecordRef::Complete { key, result };
        self.append(&mut inner, record, "cannot record the result of the call")?;
        inner.state.complete(key, result.clone());
        Ok(())
    }

    fn fail(&self, key: &OperationKey) -> Result<(), LedgerError> {
        let mut inner = self.lock();
        self.append(
            &mut inner,
            RecordRef::Fail { key },
            "cannot record the failed call",
        )?;
        inner.state.forget(key);
        Ok(())
    }

    fn mark_unknown(&self, key: &OperationKey, reason: &str) -> Result<(), LedgerError> {
        let mut inner = self.lock();
        let record = RecordRef::Unknown { key, reason };
        self.append(
            &mut inner,
            record,
            "cannot record the call's unknown outcome",
        )?;
        inner.state.mark_unknown(key, reason.to_owned());
        Ok(())
    }
}

/// The reason given for an operation whose process stopped mid-run.
fn interrupted_reason(pid: u32) -> String {
    let process = if pid == 0 {
        "the process that started this call".to_owned()
    } else {
        format!("the process that started this call (pid {pid})")
    };
    format!(
        "{process} stopped while the tool was running, so its effects may or may not have \
         happened; check them before running the call again"
    )
}

fn open_error(path: &Path, action: &str, error: impl Display) -> LedgerError {
    LedgerError {
        message: format!(
            "cannot {action} the journal {}: {error}. The journal path must name a file (not a \
             directory) in a directory this process can write; fix that or configure another path",
            path.display()
        ),
    }
}

fn ledger_error(path: &Path, what: &str, error: impl Display) -> LedgerError {
    LedgerError {
        message: format!("{what} (journal {}: {error})", path.display()),
    }
}
