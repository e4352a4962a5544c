//! Every failure that is not an `Err` is an error result with SPEC's code: one test per code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_ports::{
    ApprovalDecision, ApprovalPolicy, BeginOutcome, ErrorCode, HookFailure, LedgerError,
    MockApprovalGate, MockHookRunner, MockOperationLedger, MockReadTracker, PlanContext,
    PreToolOutcome, ReadCheck, SandboxMode, SideEffect, ThreadMode, ToolCall, ToolError, ToolHost,
    ToolHostContext, ToolKind, ToolPolicy, ToolResult, ToolRole,
};
use kun_registry::Host;
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::{Behaviour, Explicit, TestTool, ctx, host_with};

/// Runs one call of `tool` (registered alone) and returns the result and the run count.
async fn run(
    tool: TestTool,
    host: impl FnOnce(Vec<Arc<dyn kun_ports::Tool>>) -> Host,
    call: ToolCall,
    ctx: &ToolHostContext,
) -> (ToolResult, usize) {
    let runs = tool.counter();
    let host = host(vec![tool.arc()]);
    let result = host.execute(call, ctx).await.unwrap();
    (result, runs.load(Ordering::SeqCst))
}

fn plain(tools: Vec<Arc<dyn kun_ports::Tool>>) -> Host {
    host_with(tools).build()
}

fn call(tool: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall::new("call-1", tool, arguments)
}

fn assert_code(result: &ToolResult, code: ErrorCode) {
    assert!(result.is_error, "{result:?}");
    assert_eq!(result.error_code(), Some(code.as_str()), "{result:?}");
    let message = result.error_message().unwrap_or_default();
    assert!(
        message.len() > 20,
        "a message that says what to do: {message:?}"
    );
}

#[tokio::test]
async fn sandbox_read_only() {
    let tool = TestTool::new("edit").kind(ToolKind::FileChange);
    let ctx = ctx().sandbox(SandboxMode::ReadOnly).build();
    let (result, runs) = run(tool, plain, call("edit", json!({})), &ctx).await;
    assert_code(&result, ErrorCode::SandboxReadOnly);
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn sandbox_write_blocked_by_mode() {
    let tool = TestTool::new("edit").kind(ToolKind::FileChange);
    let ctx = ctx().sandbox(SandboxMode::ExternalSandbox).build();
    let (result, runs) = run(tool, plain, call("edit", json!({})), &ctx).await;
    assert_code(&result, ErrorCode::SandboxWriteBlocked);
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn sandbox_write_blocked_for_a_path_outside_the_workspace() {
    let tool = TestTool::new("write")
        .kind(ToolKind::FileChange)
        .writes_path();
    let ctx = ctx().build();
    let (result, runs) = run(
        tool,
        plain,
        call("write", json!({"path": "../etc/passwd"})),
        &ctx,
    )
    .await;
    assert_code(&result, ErrorCode::SandboxWriteBlocked);
    assert_eq!(result.output["path"], "../etc/passwd");
    assert_eq!(runs, 0);

    // Inside the workspace the same tool runs.
    let tool = TestTool::new("write")
        .kind(ToolKind::FileChange)
        .writes_path();
    let (result, runs) = run(
        tool,
        plain,
        call("write", json!({"path": "src/new.rs"})),
        &ctx,
    )
    .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(runs, 1);
}

#[tokio::test]
async fn sandbox_command_blocked() {
    let tool = TestTool::new("bash").kind(ToolKind::CommandExecution);
    let ctx = ctx().sandbox(SandboxMode::ReadOnly).build();
    let (result, runs) = run(tool, plain, call("bash", json!({})), &ctx).await;
    assert_code(&result, ErrorCode::SandboxCommandBlocked);
    assert_eq!(runs, 0);
}

fn failing_hooks(pre: bool) -> Arc<MockHookRunner> {
    let mut hooks = MockHookRunner::new();
    hooks.expect_is_empty().return_const(false);
    if pre {
        hooks.expect_pre_tool_use().returning(|_| {
            Err(HookFailure {
                message: "the hook crashed with exit code 139".into(),
            })
        });
    } else {
        hooks
            .expect_pre_tool_use()
            .returning(|_| Ok(PreToolOutcome::default()));
        hooks.expect_post_tool_use().returning(|_, _| {
            Err(HookFailure {
                message: "the hook timed out".into(),
            })
        });
    }
    Arc::new(hooks)
}

#[tokio::test]
async fn hook_failed_before_the_run() {
    let hooks = failing_hooks(true);
    let (result, runs) = run(
        TestTool::new("echo"),
        |tools| host_with(tools).hooks(hooks).build(),
        call("echo", json!({})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::HookFailed);
    assert!(result.error_message().unwrap().contains("exit code 139"));
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn hook_failed_after_the_run() {
    let hooks = failing_hooks(false);
    let (result, runs) = run(
        TestTool::new("echo"),
        |tools| host_with(tools).hooks(hooks).build(),
        call("echo", json!({})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::HookFailed);
    assert!(
        result.error_message().unwrap().contains("ran"),
        "says the tool ran"
    );
    assert_eq!(runs, 1);
}

#[tokio::test]
async fn hook_denied() {
    let mut hooks = MockHookRunner::new();
    hooks.expect_is_empty().return_const(false);
    hooks.expect_pre_tool_use().returning(|_| {
        Ok(PreToolOutcome {
            decision: kun_ports::PreToolDecision::Deny {
                reason: "writes to migrations/ are reviewed by hand".into(),
            },
            ..PreToolOutcome::default()
        })
    });
    let hooks = Arc::new(hooks);
    let (result, runs) = run(
        TestTool::new("echo"),
        |tools| host_with(tools).hooks(hooks).build(),
        call("echo", json!({})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::HookDenied);
    assert!(result.error_message().unwrap().contains("migrations/"));
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn plan_mode_write_blocked() {
    // Read-only side effect passes the plan whitelist, but the kind is still a file change.
    let tool = TestTool::new("format_doc")
        .kind(ToolKind::FileChange)
        .read_only();
    let planning = ctx().mode(ThreadMode::Plan).build();
    let (result, runs) = run(tool, plain, call("format_doc", json!({})), &planning).await;
    assert_code(&result, ErrorCode::PlanModeWriteBlocked);
    assert_eq!(runs, 0);

    // A plan writer (create_plan) is the one file change a planning turn may run; the
    // exemption is its declared role, never its name.
    let with_plan = ctx()
        .plan(PlanContext {
            plan_dir: "/ws/.kun/plans".into(),
            operation_id: "op-1".into(),
        })
        .build();
    let tool = TestTool::new("create_plan")
        .kind(ToolKind::FileChange)
        .role(ToolRole::PlanWriter);
    let (result, runs) = run(tool, plain, call("create_plan", json!({})), &with_plan).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(runs, 1);
    // The same name without the role is blocked like any other file change …
    let tool = TestTool::new("create_plan").kind(ToolKind::FileChange);
    let (result, runs) = run(tool, plain, call("create_plan", json!({})), &with_plan).await;
    assert_code(&result, ErrorCode::PlanModeWriteBlocked);
    assert_eq!(runs, 0);
    // … and the role under another name is exempt.
    let tool = TestTool::new("save_plan")
        .kind(ToolKind::FileChange)
        .read_only()
        .role(ToolRole::PlanWriter);
    let (result, runs) = run(tool, plain, call("save_plan", json!({})), &with_plan).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(runs, 1);
}

fn tracker_answering(check: ReadCheck) -> Arc<MockReadTracker> {
    let mut tracker = MockReadTracker::new();
    tracker
        .expect_check_edit()
        .withf(|thread, path, old, _current| {
            thread == "thread-1" && path == Path::new("/ws/src/lib.rs") && old == ["fn old()"]
        })
        .times(1)
        .return_const(check);
    Arc::new(tracker)
}

#[tokio::test]
async fn read_before_edit_required_when_never_read() {
    let tracker = tracker_answering(ReadCheck::NotRead);
    let (result, runs) = run(
        TestTool::new("edit").kind(ToolKind::FileChange).edit_like(),
        |tools| host_with(tools).read_tracker(tracker).build(),
        call(
            "edit",
            json!({"path": "./src/lib.rs", "oldText": "fn old()"}),
        ),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::ReadBeforeEditRequired);
    assert_eq!(
        result.output["next_action"],
        json!({"tool": "read", "arguments": {"path": "./src/lib.rs"}})
    );
    assert_eq!(result.output["retry_tool"], "edit");
    assert!(
        result.output["guidance"]
            .as_str()
            .unwrap()
            .contains("Read the file")
    );
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn read_before_edit_required_when_stale() {
    let tracker = tracker_answering(ReadCheck::StaleOldText);
    let (result, runs) = run(
        TestTool::new("edit").kind(ToolKind::FileChange).edit_like(),
        |tools| host_with(tools).read_tracker(tracker).build(),
        call("edit", json!({"path": "src/lib.rs", "oldText": "fn old()"})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::ReadBeforeEditRequired);
    assert!(result.error_message().unwrap().contains("stale"));
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn read_before_edit_required_when_changed_on_disk() {
    let tracker = tracker_answering(ReadCheck::Changed);
    let (result, runs) = run(
        TestTool::new("edit").kind(ToolKind::FileChange).edit_like(),
        |tools| host_with(tools).read_tracker(tracker).build(),
        call("edit", json!({"path": "src/lib.rs", "oldText": "fn old()"})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::ReadBeforeEditRequired);
    assert!(
        result
            .error_message()
            .unwrap()
            .contains("changed on disk since you last read it"),
        "{result:?}"
    );
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn reads_are_recorded_and_edits_then_pass() {
    let mut tracker = MockReadTracker::new();
    tracker
        .expect_record_read()
        .withf(|thread, observation| {
            thread == "thread-1"
                && observation.path == Path::new("/ws/src/lib.rs")
                && observation.content.as_deref() == Some("fn old()")
        })
        .times(1)
        .return_const(());
    tracker
        .expect_check_edit()
        .times(1)
        .return_const(ReadCheck::Ok);
    let tracker = Arc::new(tracker);
    let read = TestTool::new("read")
        .read_like()
        .behaviour(Behaviour::Output(json!({"content": "fn old()"})));
    let edit = TestTool::new("edit").kind(ToolKind::FileChange).edit_like();
    let edits = edit.counter();
    let host = host_with(vec![read.arc(), edit.arc()])
        .read_tracker(tracker)
        .build();
    let ctx = ctx().build();
    let r = host
        .execute(call("read", json!({"path": "src/lib.rs"})), &ctx)
        .await
        .unwrap();
    assert!(!r.is_error);
    let e = host
        .execute(
            ToolCall::new(
                "call-2",
                "edit",
                json!({"path": "src/lib.rs", "oldText": "fn old()"}),
            ),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!e.is_error, "{e:?}");
    assert_eq!(edits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn approval_policy_blocked() {
    let ctx = ctx().approval(ApprovalPolicy::Never).build();
    for policy in [
        ToolPolicy::Auto,
        ToolPolicy::OnRequest,
        ToolPolicy::Untrusted,
    ] {
        let (result, runs) = run(
            TestTool::new("echo").policy(policy),
            plain,
            call("echo", json!({})),
            &ctx,
        )
        .await;
        assert_code(&result, ErrorCode::ApprovalPolicyBlocked);
        assert_eq!(runs, 0, "{policy}");
    }
}

#[tokio::test]
async fn approval_classification_failed() {
    let tool = TestTool::new("send").explicit(Explicit::Error("recipient is not a string".into()));
    let (result, runs) = run(tool, plain, call("send", json!({})), &ctx().build()).await;
    assert_code(&result, ErrorCode::ApprovalClassificationFailed);
    assert!(
        result
            .error_message()
            .unwrap()
            .contains("recipient is not a string")
    );
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn approval_denied_by_the_approver() {
    let mut gate = MockApprovalGate::new();
    gate.expect_request_approval()
        .times(1)
        .returning(|_| ApprovalDecision::deny("the user wants to review the diff first"));
    let ctx = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(Arc::new(gate))
        .build();
    let tool = TestTool::new("echo").policy(ToolPolicy::OnRequest);
    let (result, runs) = run(tool, plain, call("echo", json!({})), &ctx).await;
    assert_code(&result, ErrorCode::ApprovalDenied);
    assert_eq!(
        result.output["reason"],
        "the user wants to review the diff first"
    );
    assert!(
        result.output["approval_id"]
            .as_str()
            .unwrap()
            .starts_with("appr_")
    );
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn approval_denied_without_an_approver() {
    let ctx = ctx().approval(ApprovalPolicy::Always).build();
    assert!(ctx.approver.is_none());
    let (result, runs) = run(TestTool::new("echo"), plain, call("echo", json!({})), &ctx).await;
    assert_code(&result, ErrorCode::ApprovalDenied);
    assert!(result.error_message().unwrap().contains("no approver"));
    assert_eq!(runs, 0);
}

fn ledger_answering(outcome: Result<BeginOutcome, LedgerError>) -> Arc<MockOperationLedger> {
    let mut ledger = MockOperationLedger::new();
    ledger
        .expect_begin()
        .times(1)
        .returning(move |_| outcome.clone());
    ledger.expect_complete().times(0);
    Arc::new(ledger)
}

#[tokio::test]
async fn tool_outcome_unknown() {
    let ledger = ledger_answering(Ok(BeginOutcome::OutcomeUnknown {
        reason: "the process died mid-run".into(),
    }));
    let (result, runs) = run(
        TestTool::new("echo"),
        |tools| host_with(tools).ledger(ledger).build(),
        call("echo", json!({})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::ToolOutcomeUnknown);
    assert_eq!(result.output["reason"], "the process died mid-run");
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn tool_invocation_in_progress() {
    let ledger = ledger_answering(Ok(BeginOutcome::InProgress));
    let (result, runs) = run(
        TestTool::new("echo"),
        |tools| host_with(tools).ledger(ledger).build(),
        call("echo", json!({})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::ToolInvocationInProgress);
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn tool_execution_failed_when_the_ledger_cannot_record() {
    let ledger = ledger_answering(Err(LedgerError {
        message: "disk full".into(),
    }));
    let (result, runs) = run(
        TestTool::new("echo"),
        |tools| host_with(tools).ledger(ledger).build(),
        call("echo", json!({})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::ToolExecutionFailed);
    assert!(result.error_message().unwrap().contains("disk full"));
    assert_eq!(runs, 0, "a run that cannot be recorded does not happen");
}

#[tokio::test]
async fn tool_execution_failed_on_a_tool_error_and_the_ledger_hears_fail() {
    let mut ledger = MockOperationLedger::new();
    ledger
        .expect_begin()
        .returning(|_| Ok(BeginOutcome::Started));
    ledger.expect_fail().times(1).returning(|_| Ok(()));
    ledger.expect_mark_unknown().times(0);
    ledger.expect_complete().times(0);
    let ledger = Arc::new(ledger);
    let tool =
        TestTool::new("flaky").behaviour(Behaviour::Fail(ToolError::new("upstream returned 502")));
    let (result, runs) = run(
        tool,
        |tools| host_with(tools).ledger(ledger).build(),
        call("flaky", json!({})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::ToolExecutionFailed);
    assert!(result.error_message().unwrap().contains("502"));
    assert_eq!(runs, 1);
}

#[tokio::test]
async fn tool_execution_failed_with_unknown_outcome_is_marked_unknown() {
    let mut ledger = MockOperationLedger::new();
    ledger
        .expect_begin()
        .returning(|_| Ok(BeginOutcome::Started));
    ledger.expect_fail().times(0);
    ledger
        .expect_mark_unknown()
        .withf(|_, reason| reason.contains("half"))
        .times(1)
        .returning(|_, _| Ok(()));
    let ledger = Arc::new(ledger);
    let tool = TestTool::new("deploy").behaviour(Behaviour::Fail(ToolError::outcome_unknown(
        "connection lost half way",
    )));
    let (result, _) = run(
        tool,
        |tools| host_with(tools).ledger(ledger).build(),
        call("deploy", json!({})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::ToolExecutionFailed);
}

#[tokio::test]
async fn tool_execution_failed_on_a_panic_is_feedback_not_a_crash() {
    let mut ledger = MockOperationLedger::new();
    ledger
        .expect_begin()
        .returning(|_| Ok(BeginOutcome::Started));
    ledger
        .expect_mark_unknown()
        .times(1)
        .returning(|_, _| Ok(()));
    let ledger = Arc::new(ledger);
    let (result, runs) = run(
        TestTool::new("buggy").behaviour(Behaviour::Panic),
        |tools| host_with(tools).ledger(ledger).build(),
        call("buggy", json!({})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::ToolExecutionFailed);
    assert!(
        result
            .error_message()
            .unwrap()
            .contains("panics on purpose")
    );
    assert_eq!(runs, 1);

    // A read-only tool that panics may simply run again.
    let mut ledger = MockOperationLedger::new();
    ledger
        .expect_begin()
        .returning(|_| Ok(BeginOutcome::Started));
    ledger.expect_fail().times(1).returning(|_| Ok(()));
    let ledger = Arc::new(ledger);
    let tool = TestTool::new("buggy_reader")
        .read_only()
        .behaviour(Behaviour::Panic);
    assert_eq!(tool.spec.side_effect, SideEffect::ReadOnly);
    let (result, _) = run(
        tool,
        |tools| host_with(tools).ledger(ledger).build(),
        call("buggy_reader", json!({})),
        &ctx().build(),
    )
    .await;
    assert_code(&result, ErrorCode::ToolExecutionFailed);
}

/// A tool-level error result is not a host failure: it keeps its own shape and completes.
#[tokio::test]
async fn tool_error_results_pass_through() {
    static COMPLETED: AtomicUsize = AtomicUsize::new(0);
    let mut ledger = MockOperationLedger::new();
    ledger
        .expect_begin()
        .returning(|_| Ok(BeginOutcome::Started));
    ledger.expect_complete().returning(|_, result| {
        assert!(result.is_error);
        COMPLETED.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    let ledger = Arc::new(ledger);
    let tool =
        TestTool::new("grep").behaviour(Behaviour::ErrorResult(json!({"error": "bad regex"})));
    let (result, _) = run(
        tool,
        |tools| host_with(tools).ledger(ledger).build(),
        call("grep", json!({})),
        &ctx().build(),
    )
    .await;
    assert_eq!(
        result,
        ToolResult {
            output: json!({"error": "bad regex"}),
            is_error: true,
            content: Vec::new(),
        }
    );
    assert_eq!(COMPLETED.load(Ordering::SeqCst), 1);
}
