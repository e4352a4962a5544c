//! The pipeline's step order, asserted with mocks: a later gate never runs when an earlier one
//! stopped the call, and forced approvals survive a hook's `allow`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_ports::{
    AbortStage, ApprovalDecision, ApprovalPolicy, ApprovalReason, ErrorCode, HookFailure,
    HostError, MockApprovalGate, MockHookRunner, MockOperationLedger, PostToolOutcome,
    PreToolDecision, PreToolOutcome, ProviderKind, SandboxMode, ToolCall, ToolHost, ToolKind,
    ToolPolicy,
};
use kun_registry::Host;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use support::sandbox::SpecSandbox;
use support::{Behaviour, Explicit, TestProvider, TestTool, ctx, host_with};

fn call(tool: &str) -> ToolCall {
    ToolCall::new("call-1", tool, json!({"text": "hi"}))
}

fn hooks(pre: PreToolOutcome) -> MockHookRunner {
    let mut hooks = MockHookRunner::new();
    hooks.expect_is_empty().return_const(false);
    hooks
        .expect_pre_tool_use()
        .returning(move |_| Ok(pre.clone()));
    hooks.expect_post_tool_use().returning(|_, result| {
        Ok(PostToolOutcome {
            result,
            warnings: vec![],
            additional_context: vec![],
        })
    });
    hooks
}

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

#[tokio::test]
async fn a_denying_hook_never_reaches_approval_or_the_tool() {
    let tool = TestTool::new("echo").policy(ToolPolicy::OnRequest);
    let runs = tool.counter();
    let host = host_with(vec![tool.arc()])
        .hooks(Arc::new(hooks(PreToolOutcome {
            decision: PreToolDecision::Deny {
                reason: "no echoes on Fridays".into(),
            },
            ..PreToolOutcome::default()
        })))
        .build();
    let ctx = ctx()
        .approval(ApprovalPolicy::Always)
        .approver(approver_never_called())
        .build();
    let result = host.execute(call("echo"), &ctx).await.unwrap();
    assert_eq!(result.error_code(), Some("hook_denied"));
    assert!(
        result
            .error_message()
            .unwrap()
            .contains("no echoes on Fridays")
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_sandbox_block_never_runs_hooks() {
    let mut hooks = MockHookRunner::new();
    hooks.expect_is_empty().return_const(false);
    hooks.expect_pre_tool_use().times(0);
    hooks.expect_post_tool_use().times(0);
    let host = host_with(vec![TestTool::new("edit").kind(ToolKind::FileChange).arc()])
        .hooks(Arc::new(hooks))
        .build();
    let ctx = ctx().sandbox(SandboxMode::ReadOnly).build();
    let result = host.execute(call("edit"), &ctx).await.unwrap();
    assert_eq!(result.error_code(), Some("sandbox_read_only"));
}

#[tokio::test]
async fn a_model_claimed_kind_is_checked_too() {
    let tool = TestTool::new("lookup");
    let runs = tool.counter();
    let host = host_with(vec![tool.arc()]).build();
    let read_only = ctx().sandbox(SandboxMode::ReadOnly).build();
    let claimed = call("lookup").with_claimed_kind(ToolKind::CommandExecution);
    let result = host.execute(claimed, &read_only).await.unwrap();
    assert_eq!(result.error_code(), Some("sandbox_command_blocked"));
    let claimed = call("lookup").with_claimed_kind(ToolKind::FileChange);
    let result = host.execute(claimed, &read_only).await.unwrap();
    assert_eq!(result.error_code(), Some("sandbox_read_only"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    // Claiming a command where commands cannot be confined forces an approval.
    let host = Host::builder(support::registry_over(
        SpecSandbox::unconfined(),
        vec![TestProvider::builtin(vec![TestTool::new("lookup").arc()]).arc()],
    ))
    .build();
    let ctx = ctx()
        .approver(approver_expecting(ApprovalReason::UnconfinedCommand))
        .build();
    let claimed = call("lookup").with_claimed_kind(ToolKind::CommandExecution);
    let result = host.execute(claimed, &ctx).await.unwrap();
    assert!(!result.is_error, "{result:?}");
}

#[tokio::test]
async fn never_tools_and_unknown_tools_are_errs() {
    let host = host_with(vec![
        TestTool::new("forbidden").policy(ToolPolicy::Never).arc(),
    ])
    .build();
    let ctx = ctx().approver(approver_never_called()).build();
    assert_eq!(
        host.execute(call("forbidden"), &ctx).await,
        Err(HostError::DisabledByPolicy {
            name: "forbidden".into()
        })
    );
    assert_eq!(
        host.execute(call("missing"), &ctx).await,
        Err(HostError::UnknownTool {
            name: "missing".into()
        })
    );
    let blocked = kun_ports::ToolHostContext::builder("t", "u")
        .blocked_tools(["forbidden"])
        .build();
    assert!(matches!(
        host.execute(call("forbidden"), &blocked).await,
        Err(HostError::NotAdvertised { .. })
    ));
}

#[tokio::test]
async fn an_aborted_turn_is_an_err_before_anything_runs() {
    let mut hooks = MockHookRunner::new();
    hooks.expect_is_empty().return_const(false);
    hooks.expect_pre_tool_use().times(0);
    let host = host_with(vec![TestTool::new("echo").arc()])
        .hooks(Arc::new(hooks))
        .build();
    let ctx = ctx().build();
    ctx.abort.abort();
    assert_eq!(
        host.execute(call("echo"), &ctx).await,
        Err(HostError::Aborted {
            stage: AbortStage::BeforeStart
        })
    );
}

#[tokio::test]
async fn an_abort_while_waiting_for_approval_is_an_err_and_nothing_runs() {
    let tool = TestTool::new("echo").policy(ToolPolicy::OnRequest);
    let runs = tool.counter();
    let mut ledger = MockOperationLedger::new();
    ledger.expect_begin().times(0);
    let host = host_with(vec![tool.arc()]).ledger(Arc::new(ledger)).build();
    let ctx = ctx().approval(ApprovalPolicy::OnRequest).build();
    let abort = ctx.abort.clone();
    let mut gate = MockApprovalGate::new();
    gate.expect_request_approval().times(1).returning(move |_| {
        abort.abort();
        ApprovalDecision::Allow
    });
    let ctx = kun_ports::ToolHostContext {
        approver: Some(Arc::new(gate)),
        ..ctx
    };
    assert_eq!(
        host.execute(call("echo"), &ctx).await,
        Err(HostError::Aborted {
            stage: AbortStage::AwaitingApproval
        })
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_hook_allow_skips_the_matrix_prompt() {
    let tool = TestTool::new("echo").policy(ToolPolicy::OnRequest);
    let runs = tool.counter();
    let host = host_with(vec![tool.arc()])
        .hooks(Arc::new(hooks(PreToolOutcome {
            decision: PreToolDecision::Allow,
            ..PreToolOutcome::default()
        })))
        .build();
    let ctx = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(approver_never_called())
        .build();
    let result = host.execute(call("echo"), &ctx).await.unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_hook_allow_does_not_skip_an_explicit_approval() {
    let host = host_with(vec![TestTool::new("send").explicit(Explicit::Yes).arc()])
        .hooks(Arc::new(hooks(PreToolOutcome {
            decision: PreToolDecision::Allow,
            ..PreToolOutcome::default()
        })))
        .build();
    let ctx = ctx()
        .approval(ApprovalPolicy::Auto)
        .approver(approver_expecting(ApprovalReason::ExplicitTool))
        .build();
    let result = host.execute(call("send"), &ctx).await.unwrap();
    assert!(!result.is_error, "{result:?}");
}

#[tokio::test]
async fn a_hook_allow_does_not_skip_a_sandbox_forced_approval() {
    let registry = support::registry_over(
        SpecSandbox::unconfined(),
        vec![
            TestProvider::builtin(vec![
                TestTool::new("bash").kind(ToolKind::CommandExecution).arc(),
            ])
            .arc(),
        ],
    );
    let host = Host::builder(registry)
        .hooks(Arc::new(hooks(PreToolOutcome {
            decision: PreToolDecision::Allow,
            ..PreToolOutcome::default()
        })))
        .build();
    let ctx = ctx()
        .approval(ApprovalPolicy::Auto)
        .approver(approver_expecting(ApprovalReason::UnconfinedCommand))
        .build();
    let result = host.execute(call("bash"), &ctx).await.unwrap();
    assert!(!result.is_error, "{result:?}");
}

#[tokio::test]
async fn commands_of_other_providers_are_unconfined_under_workspace_write() {
    // bash of the built-in provider runs confined: no prompt under `auto`.
    let host = host_with(vec![
        TestTool::new("bash").kind(ToolKind::CommandExecution).arc(),
    ])
    .build();
    let ctx_no_prompt = ctx().approver(approver_never_called()).build();
    assert!(
        !host
            .execute(call("bash"), &ctx_no_prompt)
            .await
            .unwrap()
            .is_error
    );

    // An MCP command tool runs outside our confinement: approval is forced.
    let registry = support::registry(vec![
        TestProvider::new(
            "mcp:srv",
            ProviderKind::Mcp,
            vec![
                TestTool::new("mcp_srv_run")
                    .kind(ToolKind::CommandExecution)
                    .arc(),
            ],
        )
        .arc(),
    ]);
    let host = Host::builder(registry).build();
    let ctx = ctx()
        .approver(approver_expecting(ApprovalReason::UnconfinedCommand))
        .build();
    assert!(
        !host
            .execute(call("mcp_srv_run"), &ctx)
            .await
            .unwrap()
            .is_error
    );
}

#[tokio::test]
async fn envelopes_unwrap_before_the_hooks_and_hook_rewrites_reach_approval_and_the_tool() {
    let mut runner = MockHookRunner::new();
    runner.expect_is_empty().return_const(false);
    runner
        .expect_pre_tool_use()
        .times(1)
        .withf(|call| call.arguments == json!({"text": "from the model"}))
        .returning(|_| {
            Ok(PreToolOutcome {
                arguments: Some(json!({"text": "rewritten"})),
                ..PreToolOutcome::default()
            })
        });
    runner.expect_post_tool_use().returning(|_, result| {
        Ok(PostToolOutcome {
            result,
            warnings: vec![],
            additional_context: vec![],
        })
    });
    let host = host_with(vec![
        TestTool::new("echo").policy(ToolPolicy::OnRequest).arc(),
    ])
    .hooks(Arc::new(runner))
    .build();
    let mut gate = MockApprovalGate::new();
    gate.expect_request_approval()
        .times(1)
        .withf(|request| request.arguments == json!({"text": "rewritten"}))
        .returning(|_| ApprovalDecision::Allow);
    let ctx = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(Arc::new(gate))
        .build();
    let envelope = json!({"__raw": "{\"text\": \"from the model\"}", "call_id": "x"});
    let result = host
        .execute(ToolCall::new("c", "echo", envelope), &ctx)
        .await
        .unwrap();
    assert_eq!(result.output, json!({"text": "rewritten"}));
}

#[tokio::test]
async fn a_raw_envelope_that_does_not_parse_reaches_the_tool_unchanged() {
    let host = host_with(vec![TestTool::new("echo").arc()]).build();
    let raw = json!({"__raw": "{\"text\": \"trunc"});
    let result = host
        .execute(ToolCall::new("c", "echo", raw.clone()), &ctx().build())
        .await
        .unwrap();
    assert_eq!(result.output, raw);
}

#[tokio::test]
async fn untrusted_policy_prompts_for_auto_tools_unless_allow_listed() {
    let host = host_with(vec![TestTool::new("echo").arc()]).build();
    let ctx_prompt = ctx()
        .approval(ApprovalPolicy::Untrusted)
        .approver(approver_expecting(ApprovalReason::RuntimePolicy))
        .build();
    assert!(
        !host
            .execute(call("echo"), &ctx_prompt)
            .await
            .unwrap()
            .is_error
    );

    let host = host_with(vec![TestTool::new("echo").arc()])
        .untrusted_allow_list(["echo"])
        .build();
    let ctx_quiet = ctx()
        .approval(ApprovalPolicy::Untrusted)
        .approver(approver_never_called())
        .build();
    assert!(
        !host
            .execute(call("echo"), &ctx_quiet)
            .await
            .unwrap()
            .is_error
    );
}

#[tokio::test]
async fn user_interaction_tools_skip_sandbox_and_approval() {
    let tool = TestTool::new("user_input")
        .user_interaction()
        .policy(ToolPolicy::OnRequest)
        .explicit(Explicit::Error("never asked".into()));
    let host = host_with(vec![tool.arc()]).build();
    for approval in [ApprovalPolicy::Never, ApprovalPolicy::Always] {
        let ctx = ctx()
            .sandbox(SandboxMode::ReadOnly)
            .approval(approval)
            .approver(approver_never_called())
            .build();
        let claimed = call("user_input").with_claimed_kind(ToolKind::CommandExecution);
        let result = host.execute(claimed, &ctx).await.unwrap();
        assert!(!result.is_error, "{approval}: {result:?}");
    }
}

#[tokio::test]
async fn the_grant_key_carries_the_tool_scope() {
    let host = host_with(vec![
        TestTool::new("bash")
            .kind(ToolKind::CommandExecution)
            .policy(ToolPolicy::OnRequest)
            .scoped()
            .arc(),
    ])
    .build();
    let mut gate = MockApprovalGate::new();
    gate.expect_request_approval()
        .times(1)
        .withf(|r| {
            r.grant_key.tool_name == "bash"
                && r.grant_key.scope.as_deref() == Some("cargo test")
                && r.call_id == "call-9"
                && r.approval_id.starts_with("appr_")
        })
        .returning(|_| ApprovalDecision::AllowForSession);
    let ctx = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(Arc::new(gate))
        .build();
    let call = ToolCall::new("call-9", "bash", json!({"command": "cargo test"}));
    assert!(!host.execute(call, &ctx).await.unwrap().is_error);
}

#[tokio::test]
async fn a_denied_call_never_touches_the_ledger() {
    let mut ledger = MockOperationLedger::new();
    ledger.expect_begin().times(0);
    let host = host_with(vec![
        TestTool::new("echo").policy(ToolPolicy::OnRequest).arc(),
    ])
    .ledger(Arc::new(ledger))
    .build();
    let mut gate = MockApprovalGate::new();
    gate.expect_request_approval()
        .returning(|_| ApprovalDecision::deny("not now"));
    let ctx = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(Arc::new(gate))
        .build();
    let result = host.execute(call("echo"), &ctx).await.unwrap();
    assert_eq!(
        result.error_code(),
        Some(ErrorCode::ApprovalDenied.as_str())
    );
}

#[tokio::test]
async fn hook_context_reaches_the_model_and_post_hooks_may_replace_the_result() {
    let mut hooks = MockHookRunner::new();
    hooks.expect_is_empty().return_const(false);
    hooks.expect_pre_tool_use().returning(|_| {
        Ok(PreToolOutcome {
            additional_context: vec!["pre note".into()],
            warnings: vec!["a hook printed garbage".into()],
            ..PreToolOutcome::default()
        })
    });
    hooks
        .expect_post_tool_use()
        .withf(|call, result| {
            call.tool_name == "echo" && call.arguments["text"] == "hi" && !result.is_error
        })
        .returning(|_, mut result| {
            result.output["reviewed"] = Value::Bool(true);
            Ok(PostToolOutcome {
                result,
                warnings: vec![],
                additional_context: vec!["post note".into()],
            })
        });
    let host = host_with(vec![TestTool::new("echo").arc()])
        .hooks(Arc::new(hooks))
        .build();
    let result = host.execute(call("echo"), &ctx().build()).await.unwrap();
    assert_eq!(
        result.output,
        json!({"text": "hi", "reviewed": true, "additional_context": ["pre note", "post note"]})
    );
}

#[tokio::test]
async fn an_empty_hook_runner_is_skipped() {
    let mut hooks = MockHookRunner::new();
    hooks.expect_is_empty().return_const(true);
    hooks.expect_pre_tool_use().times(0);
    hooks.expect_post_tool_use().times(0);
    let host = host_with(vec![TestTool::new("echo").arc()])
        .hooks(Arc::new(hooks))
        .build();
    assert!(
        !host
            .execute(call("echo"), &ctx().build())
            .await
            .unwrap()
            .is_error
    );
}

#[tokio::test]
async fn hook_failure_before_the_run_stops_it() {
    let tool = TestTool::new("echo").behaviour(Behaviour::Echo);
    let runs = tool.counter();
    let mut hooks = MockHookRunner::new();
    hooks.expect_is_empty().return_const(false);
    hooks.expect_pre_tool_use().returning(|_| {
        Err(HookFailure {
            message: "hook timed out after 60 s".into(),
        })
    });
    let host = host_with(vec![tool.arc()]).hooks(Arc::new(hooks)).build();
    let ctx = ctx().approver(approver_never_called()).build();
    let result = host.execute(call("echo"), &ctx).await.unwrap();
    assert_eq!(result.error_code(), Some("hook_failed"));
    assert!(result.error_message().unwrap().contains("60 s"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

/// An approver that never answers.
struct SilentApprover;

#[async_trait::async_trait]
impl kun_ports::ApprovalGate for SilentApprover {
    async fn request_approval(&self, _request: &kun_ports::ApprovalRequest) -> ApprovalDecision {
        std::future::pending().await
    }
}

#[tokio::test]
async fn an_abort_stops_waiting_for_an_approver_that_never_answers() {
    let tool = TestTool::new("echo").policy(ToolPolicy::OnRequest);
    let runs = tool.counter();
    let host = host_with(vec![tool.arc()]).build();
    let ctx = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(Arc::new(SilentApprover))
        .build();
    let abort = ctx.abort.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        abort.abort();
    });
    let outcome = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        host.execute(call("echo"), &ctx),
    )
    .await
    .expect("the host stops waiting once aborted");
    assert_eq!(
        outcome,
        Err(HostError::Aborted {
            stage: AbortStage::AwaitingApproval
        })
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}
