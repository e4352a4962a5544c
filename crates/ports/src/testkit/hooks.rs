//! Contract suite for [`HookRunner`].
//!
//! The factory builds a runner configured for one [`HookScenario`]; every hook it configures
//! must match every tool. The suite calls the runner with a `bash` call in a scratch
//! workspace and checks the rule of that scenario:
//!
//! | scenario | rule |
//! |---|---|
//! | `None` | `is_empty`; PreToolUse → `Continue`, arguments unchanged; PostToolUse → the result unchanged; loop phases deny nothing |
//! | `DenyPre { reason }` | not empty; PreToolUse → `Deny` with exactly that reason |
//! | `AllowPre` | PreToolUse → `Allow`, arguments unchanged |
//! | `RewritePre(v)` | PreToolUse → `Continue` with arguments `v` |
//! | `FailPre` | PreToolUse → `Err(HookFailure)` with a message (the factory uses a short timeout), well within 30 s |
//! | `ReplacePost(v)` | PostToolUse → output `v`, `is_error` unchanged; PreToolUse untouched |
//! | `FlipPostError` | PostToolUse → `is_error` flipped (false → true), output kept |

use crate::{
    ApprovalPolicy, ClientSurface, HookPhase, HookRunner, HookToolCall, HookTurn, HookTurnEvent,
    PreToolDecision, SandboxMode, ThreadMode, ToolResult, ToolRole,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// What the factory's runner must be configured to do.
#[derive(Debug, Clone, PartialEq)]
pub enum HookScenario {
    /// No hooks at all.
    None,
    /// A PreToolUse hook that denies every call with this reason.
    DenyPre {
        /// The reason the runner must report.
        reason: String,
    },
    /// A PreToolUse hook that pre-approves every call.
    AllowPre,
    /// A PreToolUse hook that replaces the arguments with this object.
    RewritePre(Value),
    /// A PreToolUse hook that crashes or times out (use a short timeout).
    FailPre,
    /// A PostToolUse hook that replaces the output with this value.
    ReplacePost(Value),
    /// A PostToolUse hook that flips `is_error`.
    FlipPostError,
}

/// How long one runner call may take before the suite calls it hung.
const CALL_LIMIT: Duration = Duration::from_secs(30);

fn turn(cwd: &std::path::Path) -> HookTurn {
    HookTurn {
        thread_id: "thread-contract".into(),
        turn_id: "turn-1".into(),
        cwd: cwd.to_path_buf(),
        sandbox: SandboxMode::WorkspaceWrite,
        approval: ApprovalPolicy::OnRequest,
        thread_mode: ThreadMode::Agent,
        client_surface: ClientSurface::Api,
    }
}

fn original_arguments() -> Value {
    json!({"command": "echo contract"})
}

fn original_result() -> ToolResult {
    ToolResult::ok(json!({"stdout": "contract\n", "exit_code": 0}))
}

async fn within<T>(what: &str, future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(CALL_LIMIT, future)
        .await
        .unwrap_or_else(|_| {
            panic!("hook runner contract: {what} did not return within {CALL_LIMIT:?}")
        })
}

/// Runs the contract against runners built by `make`.
pub async fn hook_runner_contract<F>(make: F)
where
    F: Fn(HookScenario) -> Arc<dyn HookRunner>,
{
    let workspace = tempfile::tempdir().expect("hook runner contract: a scratch workspace");
    let call = HookToolCall {
        turn: turn(workspace.path()),
        call_id: "call-1".into(),
        tool_name: "bash".into(),
        role: ToolRole::General,
        arguments: original_arguments(),
    };

    none_changes_nothing(&make(HookScenario::None), &call).await;

    let reason = "contract says no".to_owned();
    let runner = make(HookScenario::DenyPre {
        reason: reason.clone(),
    });
    assert!(
        !runner.is_empty(),
        "hook runner contract: a runner with a PreToolUse hook must not be empty"
    );
    let outcome = within("DenyPre pre_tool_use", runner.pre_tool_use(&call))
        .await
        .expect("hook runner contract: a denying hook is a decision, not a failure");
    assert_eq!(
        outcome.decision,
        PreToolDecision::Deny { reason },
        "hook runner contract: DenyPre must deny with exactly the hook's reason"
    );

    let runner = make(HookScenario::AllowPre);
    let outcome = within("AllowPre pre_tool_use", runner.pre_tool_use(&call))
        .await
        .expect("hook runner contract: an allowing hook is a decision, not a failure");
    assert_eq!(
        outcome.decision,
        PreToolDecision::Allow,
        "hook runner contract: AllowPre must pre-approve"
    );
    assert!(
        outcome.arguments.is_none() || outcome.arguments == Some(original_arguments()),
        "hook runner contract: AllowPre must leave the arguments alone"
    );

    let new_arguments = json!({"command": "echo rewritten", "timeout": 5});
    let runner = make(HookScenario::RewritePre(new_arguments.clone()));
    let outcome = within("RewritePre pre_tool_use", runner.pre_tool_use(&call))
        .await
        .expect("hook runner contract: a rewriting hook is not a failure");
    assert_eq!(
        outcome.decision,
        PreToolDecision::Continue,
        "hook runner contract: a rewrite alone neither allows nor denies"
    );
    assert_eq!(
        outcome.arguments,
        Some(new_arguments),
        "hook runner contract: RewritePre must replace the arguments"
    );

    let runner = make(HookScenario::FailPre);
    let failure = within("FailPre pre_tool_use", runner.pre_tool_use(&call))
        .await
        .expect_err(
            "hook runner contract: a crashing or hanging PreToolUse hook must be Err(HookFailure)",
        );
    assert!(
        !failure.message.trim().is_empty(),
        "hook runner contract: a HookFailure must say what happened"
    );

    let replacement = json!({"summary": "replaced by the hook"});
    let runner = make(HookScenario::ReplacePost(replacement.clone()));
    let outcome = within("ReplacePost pre_tool_use", runner.pre_tool_use(&call))
        .await
        .expect("hook runner contract: PreToolUse without PreToolUse hooks cannot fail");
    assert_eq!(
        outcome.decision,
        PreToolDecision::Continue,
        "hook runner contract: a PostToolUse hook must not affect PreToolUse"
    );
    let post = within(
        "ReplacePost post_tool_use",
        runner.post_tool_use(&call, original_result()),
    )
    .await
    .expect("hook runner contract: a replacing PostToolUse hook is not a failure");
    assert_eq!(
        post.result.output, replacement,
        "hook runner contract: ReplacePost must replace the output"
    );
    assert!(
        !post.result.is_error,
        "hook runner contract: ReplacePost must keep is_error"
    );

    let runner = make(HookScenario::FlipPostError);
    let post = within(
        "FlipPostError post_tool_use",
        runner.post_tool_use(&call, original_result()),
    )
    .await
    .expect("hook runner contract: a flipping PostToolUse hook is not a failure");
    assert!(
        post.result.is_error,
        "hook runner contract: FlipPostError must flip is_error to true"
    );
    assert_eq!(
        post.result.output,
        original_result().output,
        "hook runner contract: FlipPostError must keep the output"
    );
}

async fn none_changes_nothing(runner: &Arc<dyn HookRunner>, call: &HookToolCall) {
    assert!(
        runner.is_empty(),
        "hook runner contract: a runner without hooks must be empty"
    );
    let outcome = within("None pre_tool_use", runner.pre_tool_use(call))
        .await
        .expect("hook runner contract: no hooks cannot fail");
    assert_eq!(
        outcome.decision,
        PreToolDecision::Continue,
        "hook runner contract: no hooks means Continue"
    );
    assert!(
        outcome.arguments.is_none() || outcome.arguments == Some(original_arguments()),
        "hook runner contract: no hooks must leave the arguments alone"
    );
    let post = within(
        "None post_tool_use",
        runner.post_tool_use(call, original_result()),
    )
    .await
    .expect("hook runner contract: no hooks cannot fail");
    assert_eq!(
        post.result,
        original_result(),
        "hook runner contract: no hooks must return the result unchanged"
    );
    for phase in [
        HookPhase::UserPromptSubmit,
        HookPhase::TurnStart,
        HookPhase::TurnEnd,
        HookPhase::PreCompact,
    ] {
        let event = HookTurnEvent {
            phase,
            turn: call.turn.clone(),
            prompt: (phase == HookPhase::UserPromptSubmit).then(|| "hello".to_owned()),
        };
        let outcome = within("None turn_event", runner.turn_event(&event)).await;
        assert_eq!(
            outcome.denied, None,
            "hook runner contract: no hooks must deny no turn ({phase:?})"
        );
    }
}
