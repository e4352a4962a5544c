//! A command tool whose call says it only reads (`Tool::call_kind`, as `computer_use`'s
//! `screenshot`): the sandbox stops forcing an approval for that call, and only for it; a
//! sandbox that blocks the declared kind still blocks every call.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use async_trait::async_trait;
use kun_ports::{
    ApprovalDecision, ApprovalPolicy, ApprovalReason, ErrorCode, MockApprovalGate, ProviderKind,
    SandboxMode, Tool, ToolCall, ToolContext, ToolError, ToolHost, ToolKind, ToolPolicy,
    ToolResult, ToolSpec,
};
use kun_registry::Host;
use serde_json::{Value, json};
use std::sync::Arc;
use support::sandbox::SpecSandbox;
use support::{TestProvider, ctx, registry_over};

/// `desk {action}`: a command tool from a non-built-in provider; `look` only reads.
struct Desk(ToolSpec);

#[async_trait]
impl Tool for Desk {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call_kind(&self, arguments: &Value) -> Option<ToolKind> {
        (arguments["action"] == "look").then_some(ToolKind::ToolCall)
    }

    fn explicit_approval(
        &self,
        arguments: &Value,
        _ctx: &kun_ports::ToolHostContext,
    ) -> Result<bool, String> {
        Ok(arguments["action"] != "look")
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        _ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::ok(arguments))
    }
}

fn host(sandbox: SpecSandbox) -> Host {
    let tool = Desk(
        ToolSpec::new("desk", "Acts on the desktop.", json!({"type": "object"}))
            .with_kind(ToolKind::CommandExecution)
            .with_policy(ToolPolicy::Auto),
    );
    let provider = TestProvider::new("desk", ProviderKind::Extension, vec![Arc::new(tool)]);
    Host::builder(registry_over(sandbox, vec![provider.arc()])).build()
}

fn call(action: &str) -> ToolCall {
    ToolCall::new("call-1", "desk", json!({"action": action}))
}

fn approver(times: usize, reason: ApprovalReason) -> Arc<MockApprovalGate> {
    let mut gate = MockApprovalGate::new();
    gate.expect_request_approval()
        .times(times)
        .withf(move |request| request.reason == reason)
        .returning(|_| ApprovalDecision::Allow);
    Arc::new(gate)
}

#[tokio::test]
async fn a_read_only_call_of_a_command_tool_is_not_forced_to_ask() {
    let host = host(SpecSandbox::confined());
    let quiet = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(approver(0, ApprovalReason::ProviderCommand))
        .build();
    let result = host.execute(call("look"), &quiet).await.unwrap();
    assert!(!result.is_error, "{result:?}");

    // Any other action: the sandbox forces an approval (it runs outside our confinement).
    let asked = kun_ports::ToolHostContext::builder("thread-1", "turn-2")
        .workspace("/ws")
        .approval(ApprovalPolicy::OnRequest)
        .approver(approver(1, ApprovalReason::ProviderCommand))
        .build();
    let result = host.execute(call("click"), &asked).await.unwrap();
    assert!(!result.is_error, "{result:?}");
}

#[tokio::test]
async fn a_blocked_declared_kind_blocks_the_read_only_call_too() {
    let host = host(SpecSandbox::confined());
    let ctx = ctx()
        .sandbox(SandboxMode::ReadOnly)
        .approver(approver(0, ApprovalReason::ProviderCommand))
        .build();
    let result = host.execute(call("look"), &ctx).await.unwrap();
    assert_eq!(
        result.error_code(),
        Some(ErrorCode::SandboxCommandBlocked.as_str())
    );
}

#[tokio::test]
async fn a_claimed_kind_cannot_widen_a_read_only_call() {
    let host = host(SpecSandbox::confined());
    let ctx = ctx()
        .approval(ApprovalPolicy::OnRequest)
        .approver(approver(1, ApprovalReason::ProviderCommand))
        .build();
    let claimed = call("look").with_claimed_kind(ToolKind::CommandExecution);
    let result = host.execute(claimed, &ctx).await.unwrap();
    assert!(!result.is_error, "{result:?}");
}
