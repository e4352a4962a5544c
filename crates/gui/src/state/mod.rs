//! [`ThreadState`] adapters: [`MemoryThreadState`] for one process,
//! [`FileThreadState`] for a file per thread under the user state directory (a second
//! process, or a restarted `serve`, sees the same goal and todos).

mod file;

pub use file::{FileThreadState, default_thread_state_dir};

/// Keeps every thread's record under one fixed thread id: `serve` keys goals and todos by a
/// stable id per workspace (or `--thread`), whatever the session's own thread id.
///
/// ```
/// use std::sync::Arc;
/// use kun_gui::{MemoryThreadState, PinnedThreadState};
/// use kun_ports::{Goal, ThreadState};
/// let inner = Arc::new(MemoryThreadState::default());
/// let pinned = PinnedThreadState::new(inner.clone(), "workspace-1");
/// pinned.modify("mcp-session-a", &mut |r| { r.goal = Some(Goal::new("ship")); Ok(()) }).unwrap();
/// assert!(pinned.load("mcp-session-b").unwrap().goal.is_some());
/// assert!(inner.load("workspace-1").unwrap().goal.is_some());
/// ```
pub struct PinnedThreadState {
    inner: std::sync::Arc<dyn ThreadState>,
    thread_id: String,
}

impl PinnedThreadState {
    /// `inner`, always under `thread_id`.
    #[must_use]
    pub fn new(inner: std::sync::Arc<dyn ThreadState>, thread_id: impl Into<String>) -> Self {
        Self {
            inner,
            thread_id: thread_id.into(),
        }
    }
}

impl ThreadState for PinnedThreadState {
    fn load(&self, _thread_id: &str) -> Result<ThreadRecord, ThreadStateError> {
        self.inner.load(&self.thread_id)
    }

    fn modify(
        &self,
        _thread_id: &str,
        change: &mut RecordChange<'_>,
    ) -> Result<ThreadRecord, ThreadStateError> {
        self.inner.modify(&self.thread_id, change)
    }
}

use kun_ports::{RecordChange, ThreadRecord, ThreadState, ThreadStateError};
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Records held in memory: gone with the process.
///
/// ```
/// use kun_gui::MemoryThreadState;
/// use kun_ports::{Goal, ThreadState};
/// let store = MemoryThreadState::default();
/// store.modify("t", &mut |r| { r.goal = Some(Goal::new("ship")); Ok(()) }).unwrap();
/// assert_eq!(store.load("t").unwrap().goal.unwrap().objective, "ship");
/// assert!(store.load("other").unwrap().goal.is_none());
/// ```
#[derive(Debug, Default)]
pub struct MemoryThreadState {
    records: Mutex<HashMap<String, ThreadRecord>>,
}

impl ThreadState for MemoryThreadState {
    fn load(&self, thread_id: &str) -> Result<ThreadRecord, ThreadStateError> {
        let records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(records.get(thread_id).cloned().unwrap_or_default())
    }

    fn modify(
        &self,
        thread_id: &str,
        change: &mut RecordChange<'_>,
    ) -> Result<ThreadRecord, ThreadStateError> {
        let mut records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        let mut record = records.get(thread_id).cloned().unwrap_or_default();
        change(&mut record)?;
        records.insert(thread_id.to_owned(), record.clone());
        Ok(record)
    }
}
