//! The operation ledger: one record per operation, so that a retried call is replayed, not
//! re-run, and a call whose outcome is unknown (the process died mid-run) is never repeated
//! automatically.

use crate::ToolResult;
use serde::{Deserialize, Serialize};

/// The identity of one operation: (thread, turn, call id, tool, hash of the arguments).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OperationKey {
    /// Thread.
    pub thread_id: String,
    /// Turn.
    pub turn_id: String,
    /// Call id.
    pub call_id: String,
    /// Tool.
    pub tool_name: String,
    /// blake3 of the canonical arguments, hex.
    pub args_hash: String,
}

/// What `begin` found.
#[derive(Debug, Clone, PartialEq)]
pub enum BeginOutcome {
    /// No earlier record (or only a failed one): the operation is now `started`.
    Started,
    /// It completed before: replay this result, do not run.
    Replay(ToolResult),
    /// It is running now.
    InProgress,
    /// It started and never finished (a crash) or its outcome is otherwise unknown.
    OutcomeUnknown {
        /// Why the outcome is unknown.
        reason: String,
    },
}

/// The ledger could not record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("operation ledger: {message}")]
pub struct LedgerError {
    /// What failed.
    pub message: String,
}

/// Records operations. `begin` must be durable (for durable adapters) before it returns, since
/// the tool runs right after.
#[cfg_attr(feature = "testkit", mockall::automock)]
pub trait OperationLedger: Send + Sync {
    /// Looks up the operation and, when new (or failed before), records it as started.
    ///
    /// # Errors
    /// When the record cannot be written; the tool must then not run.
    fn begin(&self, key: &OperationKey) -> Result<BeginOutcome, LedgerError>;

    /// Records the result; later `begin`s replay it.
    ///
    /// # Errors
    /// When the record cannot be written.
    fn complete(&self, key: &OperationKey, result: &ToolResult) -> Result<(), LedgerError>;

    /// Records a failure without side effects; the operation may run again.
    ///
    /// # Errors
    /// When the record cannot be written.
    fn fail(&self, key: &OperationKey) -> Result<(), LedgerError>;

    /// Records that the outcome is unknown; later `begin`s answer `OutcomeUnknown`.
    ///
    /// # Errors
    /// When the record cannot be written.
    fn mark_unknown(&self, key: &OperationKey, reason: &str) -> Result<(), LedgerError>;
}
