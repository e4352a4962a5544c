//! The in-memory ledger's bounds and thread safety.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use kun_ports::{BeginOutcome, OperationKey, OperationLedger, ToolResult};
use kun_registry::ledger::{InMemoryLedger, LedgerBounds};
use serde_json::json;
use std::sync::Arc;

fn key(call: impl Into<String>) -> OperationKey {
    OperationKey {
        thread_id: "thread".into(),
        turn_id: "turn".into(),
        call_id: call.into(),
        tool_name: "noop".into(),
        args_hash: "hash".into(),
    }
}

fn run(ledger: &InMemoryLedger, call: &str) -> ToolResult {
    assert_eq!(
        ledger.begin(&key(call)).unwrap(),
        BeginOutcome::Started,
        "{call}"
    );
    let result = ToolResult::ok(json!({ "call": call }));
    ledger.complete(&key(call), &result).unwrap();
    result
}

#[test]
fn default_bound_keeps_the_newest_1024_completed_records() {
    let ledger = InMemoryLedger::default();
    for i in 0..1_100 {
        run(&ledger, &format!("c{i}"));
    }
    assert_eq!(ledger.len(), 1_024);
    assert_eq!(
        ledger.begin(&key("c75")).unwrap(),
        BeginOutcome::Started,
        "evicted"
    );
    assert!(
        matches!(ledger.begin(&key("c76")).unwrap(), BeginOutcome::Replay(_)),
        "kept"
    );
    assert!(matches!(
        ledger.begin(&key("c1099")).unwrap(),
        BeginOutcome::Replay(_)
    ));
}

#[test]
fn eviction_never_touches_started_or_unknown_records() {
    let ledger = InMemoryLedger::new(LedgerBounds {
        max_completed: 2,
        max_unknown: 8,
    });
    assert_eq!(
        ledger.begin(&key("running")).unwrap(),
        BeginOutcome::Started
    );
    ledger.begin(&key("lost")).unwrap();
    ledger
        .mark_unknown(&key("lost"), "aborted mid-run")
        .unwrap();
    for i in 0..50 {
        run(&ledger, &format!("c{i}"));
    }
    assert_eq!(
        ledger.begin(&key("running")).unwrap(),
        BeginOutcome::InProgress
    );
    assert_eq!(
        ledger.begin(&key("lost")).unwrap(),
        BeginOutcome::OutcomeUnknown {
            reason: "aborted mid-run".into()
        }
    );
    assert_eq!(
        ledger.len(),
        4,
        "two live records and the two newest completed"
    );
}

#[test]
fn unknown_records_past_their_bound_are_evicted_oldest_first() {
    let ledger = InMemoryLedger::new(LedgerBounds {
        max_completed: 8,
        max_unknown: 2,
    });
    for call in ["u1", "u2", "u3"] {
        ledger.begin(&key(call)).unwrap();
        ledger.mark_unknown(&key(call), "lost").unwrap();
    }
    assert_eq!(ledger.begin(&key("u1")).unwrap(), BeginOutcome::Started);
    assert!(matches!(
        ledger.begin(&key("u3")).unwrap(),
        BeginOutcome::OutcomeUnknown { .. }
    ));
}

#[test]
fn a_replayed_record_survives_being_read_many_times() {
    let ledger = InMemoryLedger::new(LedgerBounds {
        max_completed: 1,
        max_unknown: 1,
    });
    let result = run(&ledger, "only");
    for _ in 0..10 {
        assert_eq!(
            ledger.begin(&key("only")).unwrap(),
            BeginOutcome::Replay(result.clone())
        );
    }
}

#[test]
fn concurrent_duplicates_start_exactly_once() {
    let ledger = Arc::new(InMemoryLedger::default());
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let ledger = Arc::clone(&ledger);
            std::thread::spawn(move || {
                (0..200)
                    .filter(|i| {
                        ledger.begin(&key(format!("c{i}"))).unwrap() == BeginOutcome::Started
                    })
                    .count()
            })
        })
        .collect();
    let started: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(
        started, 200,
        "each of the 200 operations started once across 8 threads"
    );
    assert!(!ledger.is_empty());
}
