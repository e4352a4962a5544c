//! Approval follows the sandbox (SPEC §5, §6), through the whole pipeline: a confined command
//! needs no prompt under `on-request`/`suggest`, still asks under `always` and, unless known
//! safe, under `untrusted`; a command that asks to run unconfined always asks (with its
//! justification, approved one call at a time) and is refused under `never`; without a
//! confining tier every command asks, as does every command an MCP server runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use async_trait::async_trait;
use kun_ports::{
    ApprovalDecision, ApprovalGate, ApprovalPolicy, ApprovalReason, ApprovalRequest, ErrorCode,
    GrantKey, PreToolDecision, PreToolOutcome, ProviderKind, SandboxMode, ToolCall, ToolHost,
    ToolKind, ToolPolicy,
};
use kun_registry::Host;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use support::sandbox::SpecSandbox;
use support::{TestProvider, TestTool, ctx};

/// Allows everything and remembers what it was asked.
#[derive(Default)]
struct Recorder(Mutex<Vec<ApprovalRequest>>);

impl Recorder {
    fn asked(&self) -> Vec<ApprovalRequest> {
        self.0.lock().unwrap().clone()
    }
}

#[async_trait]
impl ApprovalGate for Recorder {
    async fn request_approval(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.0.lock().unwrap().push(request.clone());
        ApprovalDecision::Allow
    }
}

/// What happened to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// It ran without a prompt.
    Ran,
    /// It ran after one prompt for this reason.
    Asked(ApprovalReason),
    /// It was refused with this code and never ran.
    Refused(ErrorCode),
}

use ApprovalPolicy::{Always, Auto, Never, OnRequest, Suggest, Untrusted};
use ApprovalReason::{EscalatedCommand, ProviderCommand, RuntimePolicy, UnconfinedCommand};
use Outcome::{Asked, Ran, Refused};

/// Whether the machine has a confining tier.
#[derive(Debug, Clone, Copy)]
enum Tier {
    Confining,
    None,
}

/// The call's arguments.
#[derive(Debug, Clone, Copy)]
enum Call {
    /// `cargo test`: plain, not known safe.
    Plain,
    /// `ls`: known safe.
    Safe,
    /// `cargo install x` asking to run unconfined.
    Escalated,
}

impl Call {
    fn arguments(self) -> Value {
        match self {
            Self::Plain => json!({"command": "cargo test"}),
            Self::Safe => json!({"command": "ls", "safe": true}),
            Self::Escalated => json!({
                "command": "cargo install x",
                "sandbox": "escalated",
                "justification": "installs a tool into ~/.cargo",
            }),
        }
    }
}

const BLOCKED: Outcome = Refused(ErrorCode::ApprovalPolicyBlocked);

/// (sandbox mode, tier, runtime approval policy, the call, what must happen) for a built-in,
/// on-request command tool.
#[rustfmt::skip]
const TABLE: &[(SandboxMode, Tier, ApprovalPolicy, Call, Outcome)] = &[
    // workspace-write, confining tier: approval follows the sandbox.
    (SandboxMode::WorkspaceWrite, Tier::Confining, OnRequest, Call::Plain,     Ran),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Suggest,   Call::Plain,     Ran),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Auto,      Call::Plain,     Ran),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Always,    Call::Plain,     Asked(RuntimePolicy)),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Always,    Call::Safe,      Asked(RuntimePolicy)),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Untrusted, Call::Plain,     Asked(RuntimePolicy)),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Untrusted, Call::Safe,      Ran),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Never,     Call::Plain,     BLOCKED),
    // …a command asking to run unconfined always asks, and `never` refuses it.
    (SandboxMode::WorkspaceWrite, Tier::Confining, OnRequest, Call::Escalated, Asked(EscalatedCommand)),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Suggest,   Call::Escalated, Asked(EscalatedCommand)),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Auto,      Call::Escalated, Asked(EscalatedCommand)),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Untrusted, Call::Escalated, Asked(EscalatedCommand)),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Always,    Call::Escalated, Asked(EscalatedCommand)),
    (SandboxMode::WorkspaceWrite, Tier::Confining, Never,     Call::Escalated, BLOCKED),
    // workspace-write without a confining tier: every command asks, and says why.
    (SandboxMode::WorkspaceWrite, Tier::None,      OnRequest, Call::Plain,     Asked(UnconfinedCommand)),
    (SandboxMode::WorkspaceWrite, Tier::None,      Auto,      Call::Plain,     Asked(UnconfinedCommand)),
    (SandboxMode::WorkspaceWrite, Tier::None,      Untrusted, Call::Safe,      Asked(UnconfinedCommand)),
    (SandboxMode::WorkspaceWrite, Tier::None,      OnRequest, Call::Escalated, Asked(EscalatedCommand)),
    (SandboxMode::WorkspaceWrite, Tier::None,      Never,     Call::Plain,     BLOCKED),
    // danger-full-access: no confinement to follow or to leave; the tool's policy decides.
    (SandboxMode::DangerFullAccess, Tier::Confining, OnRequest, Call::Plain,     Asked(RuntimePolicy)),
    (SandboxMode::DangerFullAccess, Tier::Confining, OnRequest, Call::Escalated, Asked(RuntimePolicy)),
    (SandboxMode::DangerFullAccess, Tier::None,      Auto,      Call::Escalated, Ran),
    // read-only: commands stay blocked, escalation or not.
    (SandboxMode::ReadOnly, Tier::Confining, OnRequest, Call::Escalated, Refused(ErrorCode::SandboxCommandBlocked)),
    (SandboxMode::ReadOnly, Tier::Confining, Auto,      Call::Plain,     Refused(ErrorCode::SandboxCommandBlocked)),
];

fn host(tier: Tier, tool: TestTool, provider: ProviderKind) -> Host {
    let sandbox = match tier {
        Tier::Confining => SpecSandbox::confined(),
        Tier::None => SpecSandbox::unconfined(),
    };
    let provider = TestProvider::new("p", provider, vec![tool.arc()]).arc();
    Host::builder(support::registry_over(sandbox, vec![provider])).build()
}

fn bash() -> TestTool {
    TestTool::new("bash")
        .kind(ToolKind::CommandExecution)
        .policy(ToolPolicy::OnRequest)
        .confinable()
        .scoped()
}

async fn outcome(
    host: &Host,
    mode: SandboxMode,
    policy: ApprovalPolicy,
    call: Call,
) -> (Outcome, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let ctx = ctx()
        .sandbox(mode)
        .approval(policy)
        .approver(Arc::clone(&recorder) as Arc<dyn ApprovalGate>)
        .build();
    let result = host
        .execute(ToolCall::new("c1", "bash", call.arguments()), &ctx)
        .await
        .unwrap();
    let asked = recorder.asked();
    let outcome = match (result.error_code(), asked.as_slice()) {
        (None, []) => Ran,
        (None, [request]) => Asked(request.reason),
        (Some(code), []) => Refused(serde_json::from_value(json!(code)).unwrap()),
        other => panic!("unexpected: {other:?} / {result:?}"),
    };
    (outcome, recorder)
}

#[tokio::test]
async fn approval_follows_the_sandbox_cell_by_cell() {
    for &(mode, tier, policy, call, expected) in TABLE {
        let tool = bash();
        let runs = tool.counter();
        let host = host(tier, tool, ProviderKind::BuiltIn);
        let (got, _) = outcome(&host, mode, policy, call).await;
        assert_eq!(got, expected, "{mode} / {tier:?} / {policy} / {call:?}");
        let ran = usize::from(!matches!(expected, Refused(_)));
        assert_eq!(
            runs.load(Ordering::SeqCst),
            ran,
            "{mode} / {tier:?} / {policy} / {call:?}"
        );
    }
}

#[tokio::test]
async fn an_escalated_prompt_shows_the_justification_and_grants_one_call_only() {
    let host = host(Tier::Confining, bash(), ProviderKind::BuiltIn);
    let (_, recorder) = outcome(
        &host,
        SandboxMode::WorkspaceWrite,
        OnRequest,
        Call::Escalated,
    )
    .await;
    let asked = recorder.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        asked[0].justification.as_deref(),
        Some("installs a tool into ~/.cargo")
    );
    assert!(
        !asked[0].grant_key.session_grantable(),
        "{:?}",
        asked[0].grant_key
    );

    // A justification without an escalation is not shown: the call runs confined.
    let (_, recorder) = outcome(&host, SandboxMode::WorkspaceWrite, Always, Call::Plain).await;
    assert_eq!(recorder.asked()[0].justification, None);
    assert_eq!(
        recorder.asked()[0].grant_key,
        GrantKey::command("bash", "cargo test")
    );
}

#[tokio::test]
async fn a_hook_allow_does_not_skip_an_escalation() {
    let mut hooks = kun_ports::MockHookRunner::new();
    hooks.expect_is_empty().return_const(false);
    hooks.expect_pre_tool_use().returning(|_| {
        Ok(PreToolOutcome {
            decision: PreToolDecision::Allow,
            ..PreToolOutcome::default()
        })
    });
    hooks.expect_post_tool_use().returning(|_, result| {
        Ok(kun_ports::PostToolOutcome {
            result,
            warnings: vec![],
            additional_context: vec![],
        })
    });
    let provider = TestProvider::builtin(vec![bash().arc()]).arc();
    let host = Host::builder(support::registry_over(
        SpecSandbox::confined(),
        vec![provider],
    ))
    .hooks(Arc::new(hooks))
    .build();
    let (got, _) = outcome(
        &host,
        SandboxMode::WorkspaceWrite,
        OnRequest,
        Call::Escalated,
    )
    .await;
    assert_eq!(got, Asked(EscalatedCommand));
    // …while the same hook does skip the `always` prompt of a confined command.
    let (got, _) = outcome(&host, SandboxMode::WorkspaceWrite, Always, Call::Plain).await;
    assert_eq!(got, Ran);
}

/// A command tool whose commands its provider runs (MCP) asks under workspace-write even on
/// a confining tier and under `auto`; the tool spec says so, not the provider's kind.
#[tokio::test]
async fn provider_run_commands_always_ask_under_workspace_write() {
    let mcp = TestTool::new("bash")
        .kind(ToolKind::CommandExecution)
        .policy(ToolPolicy::OnRequest)
        .scoped();
    for provider in [ProviderKind::Mcp, ProviderKind::BuiltIn] {
        let host = host(Tier::Confining, mcp_clone(&mcp), provider);
        for policy in [Auto, OnRequest, Untrusted] {
            let (got, _) = outcome(&host, SandboxMode::WorkspaceWrite, policy, Call::Safe).await;
            assert_eq!(got, Asked(ProviderCommand), "{provider:?} / {policy}");
        }
    }
}

fn mcp_clone(tool: &TestTool) -> TestTool {
    TestTool::new(&tool.spec.name)
        .kind(tool.spec.kind)
        .policy(tool.spec.policy)
        .scoped()
}

/// A command tool that does not say which command it runs is approved one call at a time.
#[tokio::test]
async fn a_command_tool_without_a_scope_is_approved_one_call_at_a_time() {
    let tool = TestTool::new("bash")
        .kind(ToolKind::CommandExecution)
        .policy(ToolPolicy::OnRequest)
        .confinable();
    let host = host(Tier::None, tool, ProviderKind::BuiltIn);
    let (got, recorder) = outcome(&host, SandboxMode::WorkspaceWrite, OnRequest, Call::Plain).await;
    assert_eq!(got, Asked(UnconfinedCommand));
    assert!(!recorder.asked()[0].grant_key.session_grantable());
}
