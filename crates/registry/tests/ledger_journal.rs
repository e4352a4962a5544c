//! The journal ledger: durability across reopen, the file format, crash leftovers, compaction,
//! concurrency and errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use kun_ports::{BeginOutcome, OperationKey, OperationLedger, ToolResult};
use kun_registry::ledger::{JournalLedger, JournalOptions, LedgerBounds};
use serde_json::{Value, json};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn key(call: impl Into<String>) -> OperationKey {
    OperationKey {
        thread_id: "thread".into(),
        turn_id: "turn".into(),
        call_id: call.into(),
        tool_name: "write".into(),
        args_hash: "hash".into(),
    }
}

fn journal() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join("operations.jsonl");
    (dir, path)
}

fn lines(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn append_raw(path: &Path, bytes: &[u8]) {
    fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

#[test]
fn records_survive_reopening() {
    let (_dir, path) = journal();
    let result = ToolResult::ok(json!({"written": 12}));
    {
        let ledger = JournalLedger::open(&path).unwrap();
        for call in ["done", "failed", "lost", "running"] {
            assert_eq!(ledger.begin(&key(call)).unwrap(), BeginOutcome::Started);
        }
        ledger.complete(&key("done"), &result).unwrap();
        ledger.fail(&key("failed")).unwrap();
        ledger
            .mark_unknown(&key("lost"), "aborted by the user")
            .unwrap();
    }
    let ledger = JournalLedger::open(&path).unwrap();
    assert_eq!(ledger.recovery().records, 7);
    assert_eq!(ledger.recovery().interrupted, 1);
    assert_eq!(
        ledger.begin(&key("done")).unwrap(),
        BeginOutcome::Replay(result)
    );
    assert_eq!(ledger.begin(&key("failed")).unwrap(), BeginOutcome::Started);
    assert_eq!(
        ledger.begin(&key("lost")).unwrap(),
        BeginOutcome::OutcomeUnknown {
            reason: "aborted by the user".into()
        }
    );
    match ledger.begin(&key("running")).unwrap() {
        BeginOutcome::OutcomeUnknown { reason } => {
            assert!(
                reason.contains("stopped while the tool was running"),
                "{reason}"
            );
            assert!(
                reason.contains(&format!("pid {}", std::process::id())),
                "{reason}"
            );
        }
        other => panic!("expected OutcomeUnknown, got {other:?}"),
    }
}

#[test]
fn begin_is_in_the_file_before_it_returns() {
    let (_dir, path) = journal();
    let ledger = JournalLedger::open(&path).unwrap();
    ledger.begin(&key("c1")).unwrap();
    let written = lines(&path);
    assert_eq!(written.len(), 1);
    assert_eq!(written[0]["op"], "begin");
    assert_eq!(written[0]["key"]["call_id"], "c1");
}

#[test]
fn the_format_is_one_json_object_per_line() {
    let (_dir, path) = journal();
    let ledger = JournalLedger::open(&path).unwrap();
    let k = key("c1");
    ledger.begin(&k).unwrap();
    ledger.complete(&k, &ToolResult::tool_error("no")).unwrap();
    ledger.begin(&key("c2")).unwrap();
    ledger.fail(&key("c2")).unwrap();
    ledger.mark_unknown(&key("c3"), "why").unwrap();
    assert!(fs::read_to_string(&path).unwrap().ends_with('\n'));
    let written = lines(&path);
    let ops: Vec<_> = written.iter().map(|l| l["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["begin", "complete", "begin", "fail", "unknown"]);
    assert!(written.iter().all(|l| l["v"] == 1));
    assert_eq!(
        written[0]["key"],
        json!({"thread_id": "thread", "turn_id": "turn", "call_id": "c1", "tool_name": "write", "args_hash": "hash"})
    );
    assert_eq!(written[0]["pid"], std::process::id());
    assert_eq!(
        written[1]["result"],
        json!({"output": {"error": "no"}, "is_error": true})
    );
    assert_eq!(written[4]["reason"], "why");
}

#[test]
fn a_torn_last_line_is_ignored_and_new_lines_start_clean() {
    let (_dir, path) = journal();
    let result = ToolResult::ok(json!(1));
    {
        let ledger = JournalLedger::open(&path).unwrap();
        ledger.begin(&key("done")).unwrap();
        ledger.complete(&key("done"), &result).unwrap();
    }
    append_raw(&path, br#"{"v":1,"op":"begin","key":{"thread_id":"thr"#);
    let ledger = JournalLedger::open(&path).unwrap();
    let recovery = ledger.recovery();
    assert!(recovery.torn_tail);
    assert_eq!((recovery.records, recovery.skipped_lines), (2, 0));
    assert_eq!(
        ledger.begin(&key("done")).unwrap(),
        BeginOutcome::Replay(result.clone())
    );
    ledger.begin(&key("next")).unwrap();
    ledger.complete(&key("next"), &result).unwrap();
    drop(ledger);
    let ledger = JournalLedger::open(&path).unwrap();
    assert!(!ledger.recovery().torn_tail);
    assert_eq!(
        ledger.recovery().skipped_lines,
        1,
        "the old torn line is now a skipped line"
    );
    assert_eq!(
        ledger.begin(&key("next")).unwrap(),
        BeginOutcome::Replay(result)
    );
}

#[test]
fn an_unterminated_but_whole_last_line_still_counts() {
    let (_dir, path) = journal();
    drop(JournalLedger::open(&path).unwrap());
    let line = serde_json::to_string(&json!({
        "v": 1, "op": "complete", "key": key("c"), "result": {"output": "ok", "is_error": false}
    }))
    .unwrap();
    append_raw(&path, line.as_bytes());
    let ledger = JournalLedger::open(&path).unwrap();
    assert!(!ledger.recovery().torn_tail);
    assert_eq!(
        ledger.begin(&key("c")).unwrap(),
        BeginOutcome::Replay(ToolResult::ok(json!("ok")))
    );
    assert!(fs::read_to_string(&path).unwrap().ends_with('\n'));
}

#[test]
fn garbage_and_foreign_lines_are_skipped_not_fatal() {
    let (_dir, path) = journal();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let good =
        serde_json::to_string(&json!({"v": 1, "op": "unknown", "key": key("u"), "reason": "r"}))
            .unwrap();
    let content = format!(
        "not json\n{{\"v\":2,\"op\":\"begin\",\"key\":{}}}\n{{\"v\":1,\"op\":\"complete\",\"key\":{}}}\n\n{good}\n",
        serde_json::to_string(&key("future")).unwrap(),
        serde_json::to_string(&key("no-result")).unwrap(),
    );
    fs::write(&path, content).unwrap();
    let ledger = JournalLedger::open(&path).unwrap();
    assert_eq!(ledger.recovery().skipped_lines, 3);
    assert_eq!(ledger.recovery().records, 1);
    assert_eq!(ledger.begin(&key("future")).unwrap(), BeginOutcome::Started);
    assert!(matches!(
        ledger.begin(&key("u")).unwrap(),
        BeginOutcome::OutcomeUnknown { .. }
    ));
}

#[test]
fn compaction_bounds_the_file_and_keeps_what_matters() {
    let (_dir, path) = journal();
    let options = JournalOptions {
        compact_after_bytes: 16 * 1024,
        bounds: LedgerBounds {
            max_completed: 10,
            max_unknown: 10,
        },
        ..JournalOptions::default()
    };
    let ledger = JournalLedger::open_with(&path, options).unwrap();
    ledger.begin(&key("running")).unwrap();
    ledger.mark_unknown(&key("lost"), "aborted").unwrap();
    let payload = "x".repeat(200);
    for i in 0..500 {
        let k = key(format!("c{i}"));
        ledger.begin(&k).unwrap();
        ledger
            .complete(&k, &ToolResult::ok(json!({ "i": i, "pad": payload })))
            .unwrap();
    }
    let size = fs::metadata(&path).unwrap().len();
    assert!(
        size < 64 * 1024,
        "the journal grew to {size} bytes despite compaction"
    );
    drop(ledger);
    let ledger = JournalLedger::open_with(&path, options).unwrap();
    assert!(ledger.recovery().records <= 100, "{:?}", ledger.recovery());
    assert!(matches!(
        ledger.begin(&key("running")).unwrap(),
        BeginOutcome::OutcomeUnknown { .. }
    ));
    assert_eq!(
        ledger.begin(&key("lost")).unwrap(),
        BeginOutcome::OutcomeUnknown {
            reason: "aborted".into()
        }
    );
    assert!(matches!(
        ledger.begin(&key("c499")).unwrap(),
        BeginOutcome::Replay(_)
    ));
    assert!(matches!(
        ledger.begin(&key("c490")).unwrap(),
        BeginOutcome::Replay(_)
    ));
    assert_eq!(ledger.begin(&key("c10")).unwrap(), BeginOutcome::Started);
    let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "operations.jsonl")
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary files left behind: {leftovers:?}"
    );
}

#[test]
fn explicit_compaction_keeps_a_running_operation_running() {
    let (_dir, path) = journal();
    let ledger = JournalLedger::open(&path).unwrap();
    ledger.begin(&key("running")).unwrap();
    ledger.begin(&key("done")).unwrap();
    ledger
        .complete(&key("done"), &ToolResult::ok(json!(1)))
        .unwrap();
    ledger.compact().unwrap();
    assert_eq!(
        ledger.begin(&key("running")).unwrap(),
        BeginOutcome::InProgress
    );
    ledger
        .complete(&key("running"), &ToolResult::ok(json!(2)))
        .unwrap();
    drop(ledger);
    let ledger = JournalLedger::open(&path).unwrap();
    assert_eq!(
        ledger.begin(&key("running")).unwrap(),
        BeginOutcome::Replay(ToolResult::ok(json!(2)))
    );
    assert_eq!(
        ledger.begin(&key("done")).unwrap(),
        BeginOutcome::Replay(ToolResult::ok(json!(1)))
    );
}

#[test]
fn threads_sharing_one_ledger_lose_nothing() {
    let (_dir, path) = journal();
    let ledger = Arc::new(JournalLedger::open(&path).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let ledger = Arc::clone(&ledger);
            std::thread::spawn(move || {
                for i in 0..100 {
                    let k = key(format!("t{t}-c{i}"));
                    assert_eq!(ledger.begin(&k).unwrap(), BeginOutcome::Started);
                    ledger.complete(&k, &ToolResult::ok(json!(i))).unwrap();
                }
            })
        })
        .collect();
    handles.into_iter().for_each(|h| h.join().unwrap());
    drop(ledger);
    let ledger = JournalLedger::open(&path).unwrap();
    assert_eq!(ledger.recovery().records, 800);
    assert_eq!(ledger.recovery().skipped_lines, 0);
    for t in 0..4 {
        for i in [0, 57, 99] {
            let got = ledger.begin(&key(format!("t{t}-c{i}"))).unwrap();
            assert_eq!(got, BeginOutcome::Replay(ToolResult::ok(json!(i))));
        }
    }
}

/// Two ledgers on one file stand in for two processes: they append whole lines, and one's
/// compaction never loses the other's records.
#[test]
fn independent_handles_on_one_file_lose_nothing_across_compactions() {
    let (_dir, path) = journal();
    let options = JournalOptions {
        compact_after_bytes: 8 * 1024,
        ..JournalOptions::default()
    };
    let writers: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|name| {
            let ledger = JournalLedger::open_with(&path, options).unwrap();
            std::thread::spawn(move || {
                for i in 0..150 {
                    let k = key(format!("{name}-{i}"));
                    ledger.begin(&k).unwrap();
                    ledger
                        .complete(&k, &ToolResult::ok(json!({"by": name, "i": i})))
                        .unwrap();
                }
            })
        })
        .collect();
    writers.into_iter().for_each(|h| h.join().unwrap());
    let ledger = JournalLedger::open_with(&path, options).unwrap();
    assert_eq!(ledger.recovery().skipped_lines, 0);
    assert!(!ledger.recovery().torn_tail);
    for name in ["a", "b", "c"] {
        for i in 0..150 {
            let got = ledger.begin(&key(format!("{name}-{i}"))).unwrap();
            assert_eq!(
                got,
                BeginOutcome::Replay(ToolResult::ok(json!({"by": name, "i": i}))),
                "{name}-{i}"
            );
        }
    }
}

#[test]
fn unusable_paths_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = JournalLedger::open(dir.path()).unwrap_err();
    assert!(
        err.message.contains("cannot open the journal"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains(&dir.path().display().to_string()),
        "{}",
        err.message
    );

    let file = dir.path().join("plain-file");
    fs::write(&file, "").unwrap();
    let err = JournalLedger::open(file.join("journal.jsonl")).unwrap_err();
    assert!(
        err.message
            .contains("cannot create the directory of the journal"),
        "{}",
        err.message
    );
    assert!(err.to_string().starts_with("operation ledger: "), "{err}");
}

#[cfg(unix)]
#[test]
fn the_journal_is_private_to_its_user() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = journal();
    drop(JournalLedger::open(&path).unwrap());
    let mode = fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "mode {mode:o}");
}
