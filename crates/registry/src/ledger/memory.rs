//! The in-memory ledger: replay and in-progress detection within one process.

use super::LedgerBounds;
use super::state::LedgerState;
use kun_ports::{BeginOutcome, LedgerError, OperationKey, OperationLedger, ToolResult};
use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// An [`OperationLedger`] held in memory: a retried call is replayed and a concurrent duplicate
/// is refused, but nothing survives the process.
///
/// Bounded by [`LedgerBounds`]: the oldest completed record is evicted in O(1) once more than
/// `max_completed` are held; started records are never evicted; unknown ones only past
/// `max_unknown`, with a warning. Every method takes one uncontended mutex and does one or two
/// hash lookups, so it stays far below the host's per-call budget.
///
/// ```
/// use kun_ports::{BeginOutcome, OperationKey, OperationLedger, ToolResult};
/// use kun_registry::ledger::InMemoryLedger;
///
/// let ledger = InMemoryLedger::default();
/// let key = OperationKey {
///     thread_id: "thread".into(),
///     turn_id: "turn".into(),
///     call_id: "call_1".into(),
///     tool_name: "read".into(),
///     args_hash: "ab12".into(),
/// };
/// assert_eq!(ledger.begin(&key)?, BeginOutcome::Started);
/// assert_eq!(ledger.begin(&key)?, BeginOutcome::InProgress);
/// let result = ToolResult::ok(serde_json::json!({"text": "hi"}));
/// ledger.complete(&key, &result)?;
/// assert_eq!(ledger.begin(&key)?, BeginOutcome::Replay(result));
/// # Ok::<(), kun_ports::LedgerError>(())
/// ```
pub struct InMemoryLedger {
    state: Mutex<LedgerState>,
    pid: u32,
}

impl InMemoryLedger {
    /// An empty ledger with these bounds.
    #[must_use]
    pub fn new(bounds: LedgerBounds) -> Self {
        Self {
            state: Mutex::new(LedgerState::new(bounds)),
            pid: std::process::id(),
        }
    }

    /// How many operations are recorded (started, completed and unknown).
    #[must_use]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no operation is recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, LedgerState> {
        // No code path panics while holding the lock, so a poisoned state is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for InMemoryLedger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // No lock here: formatting must never wait on (or deadlock with) a ledger call.
        f.debug_struct("InMemoryLedger").finish_non_exhaustive()
    }
}

impl Default for InMemoryLedger {
    fn default() -> Self {
        Self::new(LedgerBounds::default())
    }
}

impl OperationLedger for InMemoryLedger {
    fn begin(&self, key: &OperationKey) -> Result<BeginOutcome, LedgerError> {
        let mut state = self.lock();
        if let Some(outcome) = state.blocking_outcome(key) {
            return Ok(outcome);
        }
        state.start(key, self.pid);
        Ok(BeginOutcome::Started)
    }

    fn complete(&self, key: &OperationKey, result: &ToolResult) -> Result<(), LedgerError> {
        self.lock().complete(key, result.clone());
        Ok(())
    }

    fn fail(&self, key: &OperationKey) -> Result<(), LedgerError> {
        self.lock().forget(key);
        Ok(())
    }

    fn mark_unknown(&self, key: &OperationKey, reason: &str) -> Result<(), LedgerError> {
        self.lock().mark_unknown(key, reason.to_owned());
        Ok(())
    }
}
