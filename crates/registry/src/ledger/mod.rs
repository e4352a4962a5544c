//! Operation ledgers: a retried call is replayed instead of re-run, a duplicate of a running
//! call is refused, and a call whose outcome is unknown is never repeated automatically
//! (pipeline step 14; step 18 completes the record).
//!
//! * [`InMemoryLedger`]: one process, no I/O, bounded.
//! * [`JournalLedger`]: durable; an append-only JSON-lines journal that survives a `kill -9`
//!   mid-tool, after which the call answers `OutcomeUnknown` (format in [`journal`]).
//!
//! Both share one state machine:
//!
//! | earlier record                       | `begin` answers            |
//! |--------------------------------------|----------------------------|
//! | none, or `fail`ed                    | `Started` (and records it) |
//! | started, not resolved                | `InProgress`               |
//! | completed                            | `Replay(result)`           |
//! | `mark_unknown`, or its process died  | `OutcomeUnknown{reason}`   |
//!
//! `complete`, `fail` and `mark_unknown` apply to whatever record is there (the last write
//! wins), so the host's sequence `begin` → one of them is all a caller needs.

mod compaction;
pub mod journal;
mod journal_file;
mod memory;
mod order;
mod record;
mod replay;
mod state;

pub use journal::{Durability, JournalLedger, JournalOptions, JournalRecovery};
pub use memory::InMemoryLedger;

/// How many records a ledger keeps.
///
/// Started records are never evicted (the host resolves each one when its tool returns).
/// Failed records are forgotten at once: a failed operation is the same as a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LedgerBounds {
    /// Completed records kept for replay; beyond it the oldest is evicted (O(1)), and a retry
    /// of that call would run again. Default 1,024.
    pub max_completed: usize,
    /// Records with an unknown outcome kept; beyond it the oldest is evicted with a warning.
    /// Default 1,024.
    pub max_unknown: usize,
}

impl Default for LedgerBounds {
    fn default() -> Self {
        Self {
            max_completed: 1_024,
            max_unknown: 1_024,
        }
    }
}
