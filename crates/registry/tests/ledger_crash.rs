//! A real `kill -9` mid-tool: the durable ledger then answers `OutcomeUnknown`, not a re-run.
//!
//! The parent test re-runs this test binary as a child, selecting [`crash_child_entry_point`]
//! with `--exact` and switching it into child mode with an environment variable. The child
//! opens the journal, begins an operation, writes a marker file and then "runs the tool"
//! (sleeps) until the parent kills it with SIGKILL.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use kun_ports::{BeginOutcome, OperationKey, OperationLedger, ToolResult};
use kun_registry::ledger::JournalLedger;
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_MODE: &str = "KUN_LEDGER_CRASH_CHILD";
const JOURNAL: &str = "KUN_LEDGER_CRASH_JOURNAL";
const MARKER: &str = "KUN_LEDGER_CRASH_MARKER";

fn key(call: &str) -> OperationKey {
    OperationKey {
        thread_id: "thread-crash".into(),
        turn_id: "turn-1".into(),
        call_id: call.into(),
        tool_name: "bash".into(),
        args_hash: "9f2c".into(),
    }
}

/// Child mode only (when [`CHILD_MODE`] is set): begin an operation, signal the parent, and
/// hang as a running tool would. In a normal test run it returns at once.
#[test]
fn crash_child_entry_point() {
    if std::env::var_os(CHILD_MODE).is_none() {
        return;
    }
    let journal = std::env::var_os(JOURNAL).expect("journal path");
    let marker = std::env::var_os(MARKER).expect("marker path");
    let ledger = JournalLedger::open(journal).expect("child opens the journal");
    assert_eq!(
        ledger.begin(&key("call-running")).unwrap(),
        BeginOutcome::Started
    );
    std::fs::write(marker, b"tool running").unwrap();
    // The "tool" runs until the parent kills the process.
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn wait_for(marker: &Path, child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !marker.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                std::io::Read::read_to_string(&mut pipe, &mut stderr).unwrap();
            }
            panic!("the child exited ({status}) before starting its tool:\n{stderr}");
        }
        assert!(
            Instant::now() < deadline,
            "the child never started its tool"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn kill_9_mid_tool_leaves_the_outcome_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("operations.jsonl");
    let marker = dir.path().join("child-started");
    let finished = ToolResult::ok(json!({"stdout": "built"}));
    {
        let ledger = JournalLedger::open(&journal).unwrap();
        assert_eq!(
            ledger.begin(&key("call-done")).unwrap(),
            BeginOutcome::Started
        );
        ledger.complete(&key("call-done"), &finished).unwrap();
    }

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_child_entry_point",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_MODE, "1")
        .env(JOURNAL, &journal)
        .env(MARKER, &marker)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let child_pid = child.id();
    wait_for(&marker, &mut child);
    child.kill().unwrap(); // SIGKILL on Unix: no destructor, no flush, no goodbye
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "the child was killed, not finished: {status}"
    );

    let ledger = JournalLedger::open(&journal).unwrap();
    assert_eq!(ledger.recovery().interrupted, 1);
    let reason = match ledger.begin(&key("call-running")).unwrap() {
        BeginOutcome::OutcomeUnknown { reason } => reason,
        other => panic!("the killed call must not run again; got {other:?}"),
    };
    assert!(
        reason.contains("stopped while the tool was running"),
        "{reason}"
    );
    assert!(reason.contains(&format!("pid {child_pid}")), "{reason}");
    assert_eq!(
        ledger.begin(&key("call-running")).unwrap(),
        BeginOutcome::OutcomeUnknown { reason },
        "asking again gives the same answer"
    );
    assert_eq!(
        ledger.begin(&key("call-other")).unwrap(),
        BeginOutcome::Started
    );
    assert_eq!(
        ledger.begin(&key("call-done")).unwrap(),
        BeginOutcome::Replay(finished)
    );
}
