//! The read-before-edit tracker: an edit needs a prior read of the file in the same thread,
//! and each `oldText` must appear in the latest full read.

use crate::ReadObservation;
use std::path::Path;

/// The tracker's verdict on an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadCheck {
    /// The edit may go ahead.
    Ok,
    /// The file was not read in this thread.
    NotRead,
    /// A fragment is not in the latest full read: the model's view is stale.
    StaleOldText,
}

/// Remembers what each thread read.
#[cfg_attr(feature = "testkit", mockall::automock)]
pub trait ReadTracker: Send + Sync {
    /// Records a successful read (replaces the earlier record of that file).
    fn record_read(&self, thread_id: &str, observation: ReadObservation);

    /// Checks an edit of `path` (absolute, lexical) with these fragments.
    fn check_edit(&self, thread_id: &str, path: &Path, old_texts: &[String]) -> ReadCheck;

    /// Forgets a thread (on compaction).
    fn clear_thread(&self, thread_id: &str);
}
