//! A file per thread: `<dir>/<hash of the thread id>.json`.
//!
//! * The file name is the first 32 hex digits of the thread id's blake3, so any id (`../x`,
//!   `/`, NUL) is one plain file name in the directory; the id itself is stored inside and
//!   checked on every read.
//! * [`ThreadState::modify`] holds an exclusive `flock` on `<hash>.lock` while it reads,
//!   changes and writes, so two processes never lose each other's update; the record is
//!   written to a temporary file and renamed into place, so a reader never sees half a file.
//! * A file that cannot be parsed is an error naming it (nothing is overwritten): delete it
//!   to start the thread over.

use kun_ports::{RecordChange, ThreadRecord, ThreadState, ThreadStateError};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Hex digits of the id hash in a file name.
const HASH_DIGITS: usize = 32;

/// What one file holds.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    thread_id: String,
    #[serde(flatten)]
    record: ThreadRecord,
}

/// `$XDG_STATE_HOME/kun/threads` (or `~/.local/state/kun/threads`); `None` without a home.
#[must_use]
pub fn default_thread_state_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state")))
        .map(|state| state.join("kun").join("threads"))
}

/// Records stored as one JSON file per thread in a directory (see the module docs).
///
/// ```
/// use kun_gui::FileThreadState;
/// use kun_ports::{ThreadState, TodoItem, TodoStatus};
/// let dir = tempfile::tempdir().unwrap();
/// let store = FileThreadState::new(dir.path());
/// store.modify("t", &mut |r| { r.todos = vec![TodoItem::new("a", TodoStatus::Pending)]; Ok(()) }).unwrap();
/// // Another store over the same directory (another process) sees it.
/// assert_eq!(FileThreadState::new(dir.path()).load("t").unwrap().todos.len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct FileThreadState {
    dir: PathBuf,
}

/// Makes temporary names unique within the process (the pid covers other processes).
static TEMP_SERIAL: AtomicU64 = AtomicU64::new(0);

impl FileThreadState {
    /// A store in `dir` (created on the first write).
    #[must_use]
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory holding the files.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `thread_id`.
    #[must_use]
    pub fn file_of(&self, thread_id: &str) -> PathBuf {
        self.dir.join(format!("{}.json", hash_of(thread_id)))
    }

    fn read(&self, thread_id: &str) -> Result<ThreadRecord, ThreadStateError> {
        let path = self.file_of(thread_id);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Ok(ThreadRecord::default());
            }
            Err(err) => return Err(store_error("cannot read", &path, &err)),
        };
        let stored: Stored = serde_json::from_str(&text).map_err(|err| {
            ThreadStateError::Store(format!(
                "{} is not a thread-state file ({err}); delete it to start the thread's goal and \
                 todos over",
                path.display()
            ))
        })?;
        if stored.thread_id != thread_id {
            return Err(ThreadStateError::Store(format!(
                "{} belongs to another thread; delete it to start over",
                path.display()
            )));
        }
        Ok(stored.record)
    }

    fn write(&self, thread_id: &str, record: &ThreadRecord) -> Result<(), ThreadStateError> {
        let path = self.file_of(thread_id);
        let stored = Stored {
            thread_id: thread_id.to_owned(),
            record: record.clone(),
        };
        let text = serde_json::to_vec_pretty(&stored)
            .map_err(|err| ThreadStateError::Store(format!("cannot encode the record: {err}")))?;
        let serial = TEMP_SERIAL.fetch_add(1, Ordering::Relaxed);
        let temp = self.dir.join(format!(
            ".{}.{}.{serial}.tmp",
            hash_of(thread_id),
            std::process::id()
        ));
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut file| {
                file.write_all(&text)?;
                file.sync_data()
            })
            .and_then(|()| fs::rename(&temp, &path));
        if let Err(err) = written {
            let _ = fs::remove_file(&temp);
            return Err(store_error("cannot write", &path, &err));
        }
        Ok(())
    }

    /// Opens and locks `<hash>.lock` (exclusive until the file is dropped).
    fn lock(&self, thread_id: &str) -> Result<File, ThreadStateError> {
        fs::create_dir_all(&self.dir)
            .map_err(|err| store_error("cannot create the directory", &self.dir, &err))?;
        let path = self.dir.join(format!("{}.lock", hash_of(thread_id)));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|err| store_error("cannot open the lock", &path, &err))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|err| store_error("cannot lock", &path, &io::Error::from(err)))?;
        Ok(file)
    }
}

impl ThreadState for FileThreadState {
    fn load(&self, thread_id: &str) -> Result<ThreadRecord, ThreadStateError> {
        self.read(thread_id)
    }

    fn modify(
        &self,
        thread_id: &str,
        change: &mut RecordChange<'_>,
    ) -> Result<ThreadRecord, ThreadStateError> {
        let _lock = self.lock(thread_id)?;
        let mut record = self.read(thread_id)?;
        change(&mut record)?;
        self.write(thread_id, &record)?;
        Ok(record)
    }
}

fn hash_of(thread_id: &str) -> String {
    let hex = blake3::hash(thread_id.as_bytes()).to_hex();
    hex[..HASH_DIGITS].to_owned()
}

fn store_error(what: &str, path: &Path, err: &io::Error) -> ThreadStateError {
    ThreadStateError::Store(format!("{what} {}: {err}", path.display()))
}
