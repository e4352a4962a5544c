//! The ledger's state machine, shared by the in-memory and the journal ledger.
//!
//! | record      | `begin` answers            | kept                                      |
//! |-------------|----------------------------|-------------------------------------------|
//! | none        | `Started` (records it)     | —                                         |
//! | `Started`   | `InProgress`               | until resolved; never evicted             |
//! | `Completed` | `Replay(result)`           | the newest `max_completed`; oldest evicted |
//! | `Unknown`   | `OutcomeUnknown{reason}`   | the newest `max_unknown`; eviction warns   |
//!
//! `fail` forgets the record: a failed operation had no effects, so it is the same as a new
//! one. Every transition is O(1): each state has its own [`Order`], and a record moves between
//! them through its [`Link`].

use super::LedgerBounds;
use super::order::{Link, Order};
use kun_ports::{BeginOutcome, OperationKey, ToolResult};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// One operation's record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Record {
    /// Running, started by the process with this id.
    Started {
        /// The process that began it.
        pid: u32,
    },
    /// Finished with this result.
    Completed(ToolResult),
    /// Its effects are unknown, for this reason.
    Unknown(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Started,
    Completed,
    Unknown,
}

impl Record {
    const fn class(&self) -> Class {
        match self {
            Self::Started { .. } => Class::Started,
            Self::Completed(_) => Class::Completed,
            Self::Unknown(_) => Class::Unknown,
        }
    }
}

#[derive(Debug)]
struct Slot {
    record: Record,
    link: Link,
}

#[derive(Debug, Default)]
struct Orders {
    started: Order,
    completed: Order,
    unknown: Order,
}

impl Orders {
    const fn of(&mut self, class: Class) -> &mut Order {
        match class {
            Class::Started => &mut self.started,
            Class::Completed => &mut self.completed,
            Class::Unknown => &mut self.unknown,
        }
    }
}

/// All records, with their per-state order.
///
/// Invariant: every key in `slots` is in exactly one order, the one of its record's state, at
/// the slot's `link`.
#[derive(Debug)]
pub(crate) struct LedgerState {
    slots: FxHashMap<Arc<OperationKey>, Slot>,
    orders: Orders,
    bounds: LedgerBounds,
}

impl LedgerState {
    /// An empty state with these bounds.
    pub(crate) fn new(bounds: LedgerBounds) -> Self {
        Self {
            slots: FxHashMap::default(),
            orders: Orders::default(),
            bounds,
        }
    }

    /// What `begin` must answer without starting the operation, or `None` when it may start.
    pub(crate) fn blocking_outcome(&self, key: &OperationKey) -> Option<BeginOutcome> {
        match &self.slots.get(key)?.record {
            Record::Started { .. } => Some(BeginOutcome::InProgress),
            Record::Completed(result) => Some(BeginOutcome::Replay(result.clone())),
            Record::Unknown(reason) => Some(BeginOutcome::OutcomeUnknown {
                reason: reason.clone(),
            }),
        }
    }

    /// Records the operation as started by process `pid`.
    pub(crate) fn start(&mut self, key: &OperationKey, pid: u32) {
        self.set(key, Record::Started { pid });
    }

    /// Records the operation's result.
    pub(crate) fn complete(&mut self, key: &OperationKey, result: ToolResult) {
        self.set(key, Record::Completed(result));
        while self.orders.completed.len() > self.bounds.max_completed {
            let Some(oldest) = self.orders.completed.pop_front() else {
                break;
            };
            self.slots.remove(&oldest);
        }
    }

    /// Forgets the operation (it failed without effects and may run again).
    pub(crate) fn forget(&mut self, key: &OperationKey) {
        if let Some(slot) = self.slots.remove(key) {
            self.orders.of(slot.record.class()).remove(slot.link);
        }
    }

    /// Records that the operation's outcome is unknown.
    pub(crate) fn mark_unknown(&mut self, key: &OperationKey, reason: String) {
        self.set(key, Record::Unknown(reason));
        self.enforce_unknown_bound();
    }

    /// Turns every started record into an unknown one (their process is gone), oldest first,
    /// with the reason `reason(pid)`. Returns how many there were.
    pub(crate) fn interrupt_started(&mut self, reason: impl Fn(u32) -> String) -> usize {
        let mut moved = 0;
        while let Some(key) = self.orders.started.pop_front() {
            if let Some(slot) = self.slots.get_mut(&key) {
                if let Record::Started { pid } = slot.record {
                    slot.record = Record::Unknown(reason(pid));
                }
                slot.link = self.orders.unknown.push_back(Arc::clone(&key));
                moved += 1;
            }
        }
        self.enforce_unknown_bound();
        moved
    }

    /// Every record, grouped by state (started, unknown, completed), oldest first within each.
    pub(crate) fn records(&self) -> impl Iterator<Item = (&OperationKey, &Record)> {
        let orders = [
            &self.orders.started,
            &self.orders.unknown,
            &self.orders.completed,
        ];
        orders
            .into_iter()
            .flat_map(Order::iter)
            .filter_map(|key| Some((key.as_ref(), &self.slots.get(key)?.record)))
    }

    /// How many records are held.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    fn set(&mut self, key: &OperationKey, record: Record) {
        let class = record.class();
        if let Some(slot) = self.slots.get_mut(key) {
            let old = slot.record.class();
            if old != class
                && let Some(shared) = self.orders.of(old).remove(slot.link)
            {
                slot.link = self.orders.of(class).push_back(shared);
            }
            slot.record = record;
        } else {
            let shared = Arc::new(key.clone());
            let link = self.orders.of(class).push_back(Arc::clone(&shared));
            self.slots.insert(shared, Slot { record, link });
        }
    }

    fn enforce_unknown_bound(&mut self) {
        while self.orders.unknown.len() > self.bounds.max_unknown {
            let Some(oldest) = self.orders.unknown.pop_front() else {
                break;
            };
            self.slots.remove(&oldest);
            tracing::warn!(
                thread_id = %oldest.thread_id,
                turn_id = %oldest.turn_id,
                call_id = %oldest.call_id,
                tool = %oldest.tool_name,
                max_unknown = self.bounds.max_unknown,
                "operation ledger: forgetting the oldest operation with an unknown outcome; \
                 a retry of that exact call would run again"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(call: &str) -> OperationKey {
        OperationKey {
            thread_id: "t".into(),
            turn_id: "u".into(),
            call_id: call.into(),
            tool_name: "noop".into(),
            args_hash: "h".into(),
        }
    }

    fn bounds(max_completed: usize, max_unknown: usize) -> LedgerBounds {
        LedgerBounds {
            max_completed,
            max_unknown,
        }
    }

    #[test]
    fn evicts_only_the_oldest_completed_record() {
        let mut state = LedgerState::new(bounds(2, 8));
        state.start(&key("running"), 1);
        state.mark_unknown(&key("lost"), "gone".into());
        for call in ["a", "b", "c"] {
            state.start(&key(call), 1);
            state.complete(&key(call), ToolResult::ok(json!(call)));
        }
        assert_eq!(state.blocking_outcome(&key("a")), None, "oldest evicted");
        assert_eq!(
            state.blocking_outcome(&key("b")),
            Some(BeginOutcome::Replay(ToolResult::ok(json!("b"))))
        );
        assert_eq!(
            state.blocking_outcome(&key("running")),
            Some(BeginOutcome::InProgress)
        );
        assert!(matches!(
            state.blocking_outcome(&key("lost")),
            Some(BeginOutcome::OutcomeUnknown { .. })
        ));
        assert_eq!(state.len(), 4);
    }

    #[test]
    fn moving_between_states_keeps_orders_consistent() {
        let mut state = LedgerState::new(bounds(1, 1));
        state.start(&key("a"), 1);
        state.complete(&key("a"), ToolResult::ok(json!(1)));
        state.mark_unknown(&key("a"), "crashed".into());
        state.start(&key("b"), 1);
        state.complete(&key("b"), ToolResult::ok(json!(2)));
        assert!(
            matches!(state.blocking_outcome(&key("a")), Some(BeginOutcome::OutcomeUnknown { reason }) if reason == "crashed"),
            "a completed record that became unknown no longer counts as completed"
        );
        state.forget(&key("a"));
        assert_eq!(state.blocking_outcome(&key("a")), None);
        let listed: Vec<_> = state.records().map(|(k, _)| k.call_id.clone()).collect();
        assert_eq!(listed, ["b"]);
    }

    #[test]
    fn interrupting_started_records_respects_the_unknown_bound() {
        let mut state = LedgerState::new(bounds(4, 2));
        for call in ["a", "b", "c"] {
            state.start(&key(call), 7);
        }
        assert_eq!(state.interrupt_started(|pid| format!("pid {pid}")), 3);
        assert_eq!(
            state.blocking_outcome(&key("a")),
            None,
            "oldest unknown evicted"
        );
        assert_eq!(
            state.blocking_outcome(&key("c")),
            Some(BeginOutcome::OutcomeUnknown {
                reason: "pid 7".into()
            })
        );
    }
}
