//! The read-before-edit tracker: an edit needs a prior read of the file in the same thread,
//! and the file must not have changed on disk since (its [`FileRevision`]).
//!
//! | latest observation of the file in this thread | file on disk now | `check_edit` |
//! |---|---|---|
//! | none (never read, evicted, thread cleared) | — | [`ReadCheck::NotRead`] |
//! | with a revision | another revision | [`ReadCheck::Changed`] |
//! | with a revision | the same revision | [`ReadCheck::Ok`]: an `oldText` missing from it is simply not in the file, and the edit tool says so (`edit_not_found`, with the closest region) |
//! | without a revision (or the file cannot be stat'ed) | — | the content check: [`ReadCheck::StaleOldText`] when a fragment is missing from a complete read, else `Ok` |
//!
//! Reads, and successful `edit`s and `write`s, are observations: after an edit the tracker
//! holds the file as the edit left it, so a chained edit of the text just inserted passes
//! without a re-read.

use crate::ReadObservation;
use std::fmt;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// The tracker's verdict on an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadCheck {
    /// The edit may go ahead.
    Ok,
    /// The file was not read in this thread.
    NotRead,
    /// The file changed on disk since the thread last saw it (read, edited or wrote it).
    Changed,
    /// A fragment is not in the latest full read, and no revision tells whether the file
    /// changed since: the model's view may be stale.
    StaleOldText,
}

/// Which version of a file an observation saw: its size and modification time. Two equal
/// revisions mean the file was not changed in between (as far as the file system can tell).
///
/// ```
/// use kun_ports::FileRevision;
/// let revision = FileRevision { size: 12, modified_ns: 1_700_000_000_000_000_000 };
/// assert_eq!(revision.to_string(), "12:1700000000000000000");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileRevision {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch (0 when unknown).
    pub modified_ns: u128,
}

impl FileRevision {
    /// The revision of a file as its metadata describes it.
    #[must_use]
    pub fn of(metadata: &std::fs::Metadata) -> Self {
        let modified_ns = metadata
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Self {
            size: metadata.len(),
            modified_ns,
        }
    }
}

/// `<size>:<mtime in ns>`: the `revision` token `read` returns.
impl fmt::Display for FileRevision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.size, self.modified_ns)
    }
}

/// Parses the `<size>:<mtime in ns>` token back.
///
/// ```
/// use kun_ports::FileRevision;
/// let revision: FileRevision = "12:345".parse().unwrap();
/// assert_eq!(revision, FileRevision { size: 12, modified_ns: 345 });
/// assert!("12".parse::<FileRevision>().is_err());
/// ```
impl std::str::FromStr for FileRevision {
    type Err = String;

    fn from_str(token: &str) -> Result<Self, Self::Err> {
        let invalid = || format!("`{token}` is not a revision (`<size>:<mtime in ns>`)");
        let (size, modified) = token.split_once(':').ok_or_else(invalid)?;
        Ok(Self {
            size: size.parse().map_err(|_| invalid())?,
            modified_ns: modified.parse().map_err(|_| invalid())?,
        })
    }
}

/// Remembers what each thread saw of each file.
#[cfg_attr(feature = "testkit", mockall::automock)]
pub trait ReadTracker: Send + Sync {
    /// Records a successful observation (replaces the earlier record of that file). The
    /// observation's path is absolute and lexical (the host resolves it).
    fn record_read(&self, thread_id: &str, observation: ReadObservation);

    /// Checks an edit of `path` (absolute, lexical) with these fragments, given the file's
    /// revision on disk now (`None` when it cannot be stat'ed).
    fn check_edit(
        &self,
        thread_id: &str,
        path: &Path,
        old_texts: &[String],
        current: Option<FileRevision>,
    ) -> ReadCheck;

    /// Forgets a thread (on compaction).
    fn clear_thread(&self, thread_id: &str);
}
