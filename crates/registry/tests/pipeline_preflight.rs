//! Step 10b (the tool's preflight) and per-call approval classes: a call bound to fail fails
//! before anyone is asked, and a read-only action of an approval-needing tool asks nobody.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_ports::{
    ApprovalDecision, ApprovalPolicy, ApprovalReason, ErrorCode, MockApprovalGate, SandboxMode,
    ToolCall, ToolFailure, ToolHost, ToolKind, ToolPolicy,
};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use support::sandbox::SpecSandbox;
use support::{TestProvider, TestTool, ctx, host_with, registry_over};

fn approver_never_called() -> Arc<MockApprovalGate> {
    let mut gate = MockApprovalGate::new();
    gate.expect_request_approval().times(0);
    Arc::new(gate)
}

fn approver_expecting(reason: ApprovalReason) -> Arc<MockApprovalGate> {
    let mut gate = MockApprovalGate::new();
    gate.expect_request_approval()
        .times(1)
        .withf(move |request| request.reason == reason)
        .returning(|_| ApprovalDecision::Allow);
    Arc::new(gate)
}

fn command_tool(name: &str) -> TestTool {
    TestTool::new(name)
        .kind(ToolKind::CommandExecution)
        .policy(ToolPolicy::OnRequest)
}

#[tokio::test]
async fn a_failing_preflight_answers_before_any_approval_and_nothing_runs() {
    let tool = command_tool("lsp").failing_preflight(
        ToolFailure::coded(
            ErrorCode::LspUnavailable,
            "no Python language server is installed; install pylsp",
        )
        .with("server", "pylsp"),
    );
    let runs = tool.counter();
    let host = host_with(vec![tool.arc()]).build();
    let ctx = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(approver_never_called())
        .build();
    let result = host
        .execute(ToolCall::new("c1", "lsp", json!({"text": "x"})), &ctx)
        .await
        .unwrap();
    assert_eq!(result.error_code(), Some("lsp_unavailable"), "{result:?}");
    assert_eq!(result.output["server"], "pylsp");
    assert!(result.model_text().contains("install pylsp"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_sandbox_block_comes_before_the_preflight() {
    // Under read-only, a command is refused by the sandbox: the preflight's code never shows.
    let tool = command_tool("verify_changes")
        .failing_preflight(ToolFailure::coded(ErrorCode::NoChecksFound, "no checks"));
    let registry = registry_over(
        SpecSandbox::confined(),
        vec![TestProvider::builtin(vec![tool.arc()]).arc()],
    );
    let host = kun_registry::Host::builder(registry).build();
    let ctx = ctx()
        .sandbox(SandboxMode::ReadOnly)
        .approver(approver_never_called())
        .build();
    let result = host
        .execute(ToolCall::new("c1", "verify_changes", json!({})), &ctx)
        .await
        .unwrap();
    assert!(result.is_error);
    assert_ne!(result.error_code(), Some("no_checks_found"), "{result:?}");
}

#[tokio::test]
async fn a_passing_preflight_still_asks() {
    let tool = command_tool("verify_changes");
    let runs = tool.counter();
    let host = host_with(vec![tool.arc()]).build();
    let ctx = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(approver_expecting(ApprovalReason::RuntimePolicy))
        .build();
    let result = host
        .execute(ToolCall::new("c1", "verify_changes", json!({})), &ctx)
        .await
        .unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// | action | declared policy | asked? |
/// |---|---|---|
/// | `list` (read-only action) | on-request | no |
/// | `start` | on-request | yes |
#[tokio::test]
async fn read_only_actions_ask_nobody_and_the_others_still_ask() {
    let cases = [("list", false), ("start", true)];
    for (action, asked) in cases {
        let tool = command_tool("background_shell").read_only_action("list");
        let runs = tool.counter();
        let host = host_with(vec![tool.arc()]).build();
        let approver = if asked {
            approver_expecting(ApprovalReason::RuntimePolicy)
        } else {
            approver_never_called()
        };
        let ctx = ctx()
            .approval(ApprovalPolicy::OnRequest)
            .approver(approver)
            .build();
        let result = host
            .execute(
                ToolCall::new("c1", "background_shell", json!({"action": action})),
                &ctx,
            )
            .await
            .unwrap();
        assert!(!result.is_error, "{action}: {result:?}");
        assert_eq!(runs.load(Ordering::SeqCst), 1, "{action}");
    }
}

#[tokio::test]
async fn a_read_only_action_skips_a_sandbox_forced_approval_too() {
    // Commands cannot be confined: every command asks, but `list` runs none.
    let tool = command_tool("background_shell").read_only_action("list");
    let registry = registry_over(
        SpecSandbox::unconfined(),
        vec![TestProvider::builtin(vec![tool.arc()]).arc()],
    );
    let host = kun_registry::Host::builder(registry).build();
    let ctx = ctx().approver(approver_never_called()).build();
    let result = host
        .execute(
            ToolCall::new("c1", "background_shell", json!({"action": "list"})),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!result.is_error, "{result:?}");
}
