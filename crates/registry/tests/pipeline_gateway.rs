//! Gateway tools (`mcp_call`): the host runs the target through every gate under the
//! target's own name, so a gateway is never a way around lists, plan mode, hooks or approval.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use async_trait::async_trait;
use kun_ports::{
    ApprovalPolicy, ForwardedCall, HostError, MockApprovalGate, MockHookRunner, PostToolOutcome,
    PreToolOutcome, SideEffect, ThreadMode, Tool, ToolCall, ToolContext, ToolError, ToolHost,
    ToolPolicy, ToolResult, ToolSpec,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use support::{Behaviour, TestTool, ctx, host_with};

/// Stands for `{"tool": name, "arguments": …}`.
struct Gateway(ToolSpec);

#[async_trait]
impl Tool for Gateway {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn forward(&self, arguments: &Value) -> Option<Result<ForwardedCall, String>> {
        Some(match arguments.get("tool").and_then(Value::as_str) {
            Some(name) => Ok(ForwardedCall {
                tool_name: name.to_owned(),
                arguments: arguments["arguments"].clone(),
            }),
            None => Err("name the target in `tool`".to_owned()),
        })
    }
    async fn execute<'a>(&self, _: Value, _: ToolContext<'a>) -> Result<ToolResult, ToolError> {
        panic!("a gateway never runs itself");
    }
}

fn gateway() -> Arc<dyn Tool> {
    Arc::new(Gateway(
        ToolSpec::new(
            "gateway_call",
            "Calls a hidden tool.",
            json!({"type": "object"}),
        )
        .with_policy(ToolPolicy::Auto)
        .with_side_effect(SideEffect::ReadOnly),
    ))
}

fn via(target: &str, args: Value) -> ToolCall {
    ToolCall::new(
        "call-1",
        "gateway_call",
        json!({"tool": target, "arguments": args}),
    )
}

#[tokio::test]
async fn the_target_runs_under_its_own_name_and_policy() {
    let target = TestTool::new("remote_lookup")
        .policy(ToolPolicy::Auto)
        .hidden()
        .behaviour(Behaviour::Echo);
    let runs = target.counter();
    let host = host_with(vec![gateway(), target.arc()]).build();
    let result = host
        .execute(via("remote_lookup", json!({"q": 1})), &ctx().build())
        .await
        .unwrap();
    assert_eq!(result.output, json!({"q": 1}));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn denied_and_plan_forbidden_targets_are_refused() {
    let target = TestTool::new("remote_write")
        .policy(ToolPolicy::Auto)
        .hidden();
    let runs = target.counter();
    let host = host_with(vec![gateway(), target.arc()]).build();
    let denied = ctx().blocked_tools(["remote_write"]).build();
    let err = host
        .execute(via("remote_write", json!({})), &denied)
        .await
        .unwrap_err();
    assert!(
        matches!(err, HostError::NotAdvertised { ref name, .. } if name == "remote_write"),
        "{err:?}"
    );
    let plan = ctx().mode(ThreadMode::Plan).build();
    let err = host
        .execute(via("remote_write", json!({})), &plan)
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::NotAdvertised { .. }), "{err:?}");
    let unknown = host
        .execute(via("nothing_here", json!({})), &ctx().build())
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, HostError::UnknownTool { .. }),
        "{unknown:?}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn hooks_see_the_target_and_approval_follows_the_target_policy() {
    let target = TestTool::new("remote_delete")
        .policy(ToolPolicy::OnRequest)
        .hidden();
    let runs = target.counter();
    let mut hooks = MockHookRunner::new();
    hooks.expect_is_empty().return_const(false);
    hooks.expect_pre_tool_use().times(1).returning(|call| {
        assert_eq!(call.tool_name, "remote_delete");
        Ok(PreToolOutcome::default())
    });
    hooks.expect_post_tool_use().returning(|_, result| {
        Ok(PostToolOutcome {
            result,
            warnings: vec![],
            additional_context: vec![],
        })
    });
    let mut approver = MockApprovalGate::new();
    approver
        .expect_request_approval()
        .times(1)
        .returning(|request| {
            assert_eq!(request.tool_name, "remote_delete");
            kun_ports::ApprovalDecision::deny("not today")
        });
    let host = host_with(vec![gateway(), target.arc()])
        .hooks(Arc::new(hooks))
        .build();
    let turn = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(Arc::new(approver))
        .build();
    let result = host
        .execute(via("remote_delete", json!({})), &turn)
        .await
        .unwrap();
    assert_eq!(result.error_code(), Some("approval_denied"));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_gateway_cannot_target_a_gateway_or_nothing() {
    let host = host_with(vec![gateway()]).build();
    let nested = host
        .execute(via("gateway_call", json!({"tool": "x"})), &ctx().build())
        .await
        .unwrap();
    assert_eq!(nested.error_code(), Some("invalid_arguments"));
    let missing = host
        .execute(
            ToolCall::new("c", "gateway_call", json!({})),
            &ctx().build(),
        )
        .await
        .unwrap();
    assert_eq!(missing.error_code(), Some("invalid_arguments"));
}
