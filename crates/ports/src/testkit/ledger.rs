//! Contract suite for [`OperationLedger`]: the `begin` state machine and key independence.
//!
//! | earlier calls for the key      | `begin` must answer         |
//! |--------------------------------|-----------------------------|
//! | none                           | `Started`                   |
//! | `begin`                        | `InProgress`                |
//! | `begin`, `complete(r)`         | `Replay(r)` (every time)    |
//! | `begin`, `fail`                | `Started`                   |
//! | `begin`, `mark_unknown(why)`   | `OutcomeUnknown` naming why |
//!
//! Keys that differ in any one field are different operations.

use crate::{BeginOutcome, OperationKey, OperationLedger, ToolResult};
use serde_json::json;

/// A key for the suite; `call` tells keys apart.
#[must_use]
pub fn operation_key(call: &str) -> OperationKey {
    OperationKey {
        thread_id: "thread-contract".to_owned(),
        turn_id: "turn-contract".to_owned(),
        call_id: call.to_owned(),
        tool_name: "contract_tool".to_owned(),
        args_hash: "0123abcd".to_owned(),
    }
}

/// Runs every rule of the ledger contract. `make` must build a new, empty ledger each call.
pub fn operation_ledger_contract<F: Fn() -> Box<dyn OperationLedger>>(make: F) {
    new_operation_starts_then_is_in_progress(&*make());
    completed_operation_replays_its_result(&*make());
    failed_operation_may_start_again(&*make());
    unknown_operation_is_never_started(&*make());
    keys_differing_in_one_field_are_independent(&*make());
    ledgers_from_the_factory_are_independent(&make);
}

fn begin(ledger: &dyn OperationLedger, key: &OperationKey, rule: &str) -> BeginOutcome {
    ledger
        .begin(key)
        .unwrap_or_else(|e| panic!("ledger contract ({rule}): begin failed: {e}"))
}

fn new_operation_starts_then_is_in_progress(ledger: &dyn OperationLedger) {
    let key = operation_key("call-new");
    let rule = "a new operation starts; a second begin sees it in progress";
    assert_eq!(
        begin(ledger, &key, rule),
        BeginOutcome::Started,
        "ledger contract: {rule}"
    );
    assert_eq!(
        begin(ledger, &key, rule),
        BeginOutcome::InProgress,
        "ledger contract: {rule}"
    );
    assert_eq!(
        begin(ledger, &key, rule),
        BeginOutcome::InProgress,
        "ledger contract: {rule}"
    );
}

fn completed_operation_replays_its_result(ledger: &dyn OperationLedger) {
    let rule = "a completed operation replays the same result on every later begin";
    for (call, result) in [
        (
            "call-ok",
            ToolResult::ok(json!({"text": "done", "lines": [1, 2, 3]})),
        ),
        (
            "call-err",
            ToolResult::tool_error("the tool reported an error"),
        ),
    ] {
        let key = operation_key(call);
        assert_eq!(
            begin(ledger, &key, rule),
            BeginOutcome::Started,
            "ledger contract: {rule}"
        );
        ledger
            .complete(&key, &result)
            .unwrap_or_else(|e| panic!("ledger contract ({rule}): complete failed: {e}"));
        for _ in 0..2 {
            assert_eq!(
                begin(ledger, &key, rule),
                BeginOutcome::Replay(result.clone()),
                "ledger contract: {rule}"
            );
        }
    }
}

fn failed_operation_may_start_again(ledger: &dyn OperationLedger) {
    let key = operation_key("call-failed");
    let rule = "a failed operation starts again, and can then complete";
    assert_eq!(
        begin(ledger, &key, rule),
        BeginOutcome::Started,
        "ledger contract: {rule}"
    );
    ledger
        .fail(&key)
        .unwrap_or_else(|e| panic!("ledger contract ({rule}): fail failed: {e}"));
    assert_eq!(
        begin(ledger, &key, rule),
        BeginOutcome::Started,
        "ledger contract: {rule}"
    );
    let result = ToolResult::ok(json!("second try"));
    ledger
        .complete(&key, &result)
        .unwrap_or_else(|e| panic!("ledger contract ({rule}): complete failed: {e}"));
    assert_eq!(
        begin(ledger, &key, rule),
        BeginOutcome::Replay(result),
        "ledger contract: {rule}"
    );
}

fn unknown_operation_is_never_started(ledger: &dyn OperationLedger) {
    let key = operation_key("call-unknown");
    let rule = "an operation marked unknown answers OutcomeUnknown with the reason, every time";
    assert_eq!(
        begin(ledger, &key, rule),
        BeginOutcome::Started,
        "ledger contract: {rule}"
    );
    let why = "aborted while the tool was writing";
    ledger
        .mark_unknown(&key, why)
        .unwrap_or_else(|e| panic!("ledger contract ({rule}): mark_unknown failed: {e}"));
    for _ in 0..2 {
        match begin(ledger, &key, rule) {
            BeginOutcome::OutcomeUnknown { reason } => assert!(
                reason.contains(why),
                "ledger contract ({rule}): reason {reason:?} does not mention {why:?}"
            ),
            other => panic!("ledger contract ({rule}): got {other:?}"),
        }
    }
}

/// Changes one field of a key.
type ChangeField = fn(&mut OperationKey);

fn keys_differing_in_one_field_are_independent(ledger: &dyn OperationLedger) {
    let rule = "keys differing in any one field are different operations";
    let base = operation_key("call-base");
    assert_eq!(
        begin(ledger, &base, rule),
        BeginOutcome::Started,
        "ledger contract: {rule}"
    );
    let result = ToolResult::ok(json!("base"));
    ledger
        .complete(&base, &result)
        .unwrap_or_else(|e| panic!("ledger contract ({rule}): complete failed: {e}"));
    let variants: [(&str, ChangeField); 5] = [
        ("thread_id", |k| k.thread_id.push_str("-other")),
        ("turn_id", |k| k.turn_id.push_str("-other")),
        ("call_id", |k| k.call_id.push_str("-other")),
        ("tool_name", |k| k.tool_name.push_str("_other")),
        ("args_hash", |k| k.args_hash.push_str("ff")),
    ];
    for (field, change) in variants {
        let mut key = base.clone();
        change(&mut key);
        assert_eq!(
            begin(ledger, &key, rule),
            BeginOutcome::Started,
            "ledger contract ({rule}): a key differing only in {field} was not new"
        );
    }
    assert_eq!(
        begin(ledger, &base, rule),
        BeginOutcome::Replay(result),
        "ledger contract ({rule}): the other keys disturbed the base key"
    );
}

fn ledgers_from_the_factory_are_independent<F: Fn() -> Box<dyn OperationLedger>>(make: &F) {
    let rule = "the factory builds empty, independent ledgers";
    let key = operation_key("call-factory");
    let first = make();
    assert_eq!(
        begin(&*first, &key, rule),
        BeginOutcome::Started,
        "ledger contract: {rule}"
    );
    let second = make();
    assert_eq!(
        begin(&*second, &key, rule),
        BeginOutcome::Started,
        "ledger contract: {rule}"
    );
}
