//! Steps 11 and 12: whether a call needs approval, and asking for it (fail closed).
//!
//! A call needs approval, for the first reason that applies:
//!
//! 1. the sandbox forces it ([`ApprovalReason::UnconfinedCommand`]) — a hook `allow` does not
//!    skip it;
//! 2. the tool requires explicit approval for this call ([`ApprovalReason::ExplicitTool`]) —
//!    a hook `allow` does not skip it;
//! 3. the approval matrix prompts ([`ApprovalReason::RuntimePolicy`]) — skipped when a
//!    PreToolUse hook said `allow`, and for `untrusted` × `auto` when the host allow-lists
//!    the tool.
//!
//! `user_interaction` tools never need approval, and neither does a call the tool declares
//! read-only from its arguments ([`CallApproval::NotNeeded`]: `background_shell` `list` and
//! `read` run no command and change nothing).
//!
//! | tool says for this call | sandbox forces | explicit | matrix prompts | asked? |
//! |---|---|---|---|---|
//! | `NotNeeded` | any | any | any | no |
//! | `AsDeclared` | yes | any | any | yes (`unconfined_command`) |
//! | `AsDeclared` | no | yes | any | yes (`explicit_tool`) |
//! | `AsDeclared` | no | no | yes, no hook `allow` | yes (`runtime_policy`) |
//! | `AsDeclared` | no | no | no, or a hook `allow` | no |

use super::Host;
use super::gates::SandboxGate;
use super::hooks::HookApproval;
use kun_ports::{
    ApprovalDecision, ApprovalReason, ApprovalRequest, CallApproval, ErrorCode, GrantKey,
    PromptRule, ToolDescriptor, ToolHostContext, ToolKind, ToolResult, prompt_rule,
};
use serde_json::{Map, Value};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the tool says about approving this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExplicitApproval {
    /// No explicit approval; the other rules decide.
    NotRequired,
    /// It asked for explicit approval.
    Required,
    /// The call is a read-only action ([`CallApproval::NotNeeded`]): nobody is asked.
    NotNeeded,
}

/// Whether a call must be approved, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ApprovalNeed {
    /// It may run.
    None,
    /// Ask first.
    Ask(ApprovalReason),
}

/// Step 11: the tool's per-call approval class, then its explicit-approval predicate. An
/// error is `approval_classification_failed`.
pub(crate) fn classify_explicit(
    tool: &ToolDescriptor,
    arguments: &Value,
    ctx: &ToolHostContext,
) -> ControlFlow<ToolResult, ExplicitApproval> {
    if tool.spec().user_interaction {
        return ControlFlow::Continue(ExplicitApproval::NotRequired);
    }
    if tool.tool.call_approval(arguments) == CallApproval::NotNeeded {
        return ControlFlow::Continue(ExplicitApproval::NotNeeded);
    }
    match tool.tool.explicit_approval(arguments, ctx) {
        Ok(true) => ControlFlow::Continue(ExplicitApproval::Required),
        Ok(false) => ControlFlow::Continue(ExplicitApproval::NotRequired),
        Err(message) => ControlFlow::Break(ToolResult::failure(
            ErrorCode::ApprovalClassificationFailed,
            format!(
                "`{}` was not run: could not decide whether this call needs approval ({message}). \
                 Check the arguments and try again.",
                tool.name()
            ),
        )),
    }
}

impl Host {
    /// Decides whether the call needs approval (see the [module docs](self)).
    pub(crate) fn approval_need(
        &self,
        tool: &ToolDescriptor,
        ctx: &ToolHostContext,
        sandbox: SandboxGate,
        explicit: ExplicitApproval,
        hook: HookApproval,
    ) -> ApprovalNeed {
        let spec = tool.spec();
        if spec.user_interaction || explicit == ExplicitApproval::NotNeeded {
            return ApprovalNeed::None;
        }
        if sandbox == SandboxGate::ApprovalRequired {
            return ApprovalNeed::Ask(ApprovalReason::UnconfinedCommand);
        }
        if explicit == ExplicitApproval::Required {
            return ApprovalNeed::Ask(ApprovalReason::ExplicitTool);
        }
        let matrix_prompts = match prompt_rule(ctx.approval, spec.policy) {
            PromptRule::Prompt => true,
            PromptRule::PromptUnlessAllowListed => !self.untrusted_allow_list.contains(&spec.name),
            // Blocked and Refused stopped the call earlier (steps 10 and 4).
            PromptRule::NoPrompt | PromptRule::Blocked | PromptRule::Refused => false,
        };
        if matrix_prompts && hook == HookApproval::NotGiven {
            ApprovalNeed::Ask(ApprovalReason::RuntimePolicy)
        } else {
            ApprovalNeed::None
        }
    }
}

/// A fresh id per prompt, even when call ids repeat.
fn next_approval_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("appr_{:016x}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Step 12: asks the turn's approver. No approver is a denial (fail closed). An abort while
/// waiting stops the wait; the abort check right after (step 13) reports it.
pub(crate) async fn request(
    need: ApprovalNeed,
    tool: &ToolDescriptor,
    call_id: &str,
    arguments: &Value,
    ctx: &ToolHostContext,
) -> ControlFlow<ToolResult> {
    let ApprovalNeed::Ask(reason) = need else {
        return ControlFlow::Continue(());
    };
    let approval_id = next_approval_id();
    let Some(approver) = &ctx.approver else {
        return ControlFlow::Break(denied(
            tool,
            &approval_id,
            reason,
            "no approver is connected to this session, so nothing that needs approval can run",
        ));
    };
    let request = ApprovalRequest {
        approval_id,
        thread_id: ctx.thread_id.clone(),
        turn_id: ctx.turn_id.clone(),
        call_id: call_id.to_owned(),
        tool_name: tool.name().to_owned(),
        arguments: arguments.clone(),
        reason,
        grant_key: grant_key(tool, arguments),
        delegated_agent: None,
    };
    let decision = tokio::select! {
        biased;
        decision = approver.request_approval(&request) => decision,
        // Stop waiting; step 13 turns the abort into `Err(Aborted)` before anything runs.
        () = ctx.abort.aborted() => return ControlFlow::Continue(()),
    };
    match decision {
        ApprovalDecision::Allow | ApprovalDecision::AllowForSession => ControlFlow::Continue(()),
        ApprovalDecision::Deny { reason: why } => ControlFlow::Break(denied(
            tool,
            &request.approval_id,
            reason,
            why.as_deref().unwrap_or("no reason was given"),
        )),
    }
}

fn denied(
    tool: &ToolDescriptor,
    approval_id: &str,
    reason: ApprovalReason,
    why: &str,
) -> ToolResult {
    let mut details = Map::new();
    details.insert("approval_id".to_owned(), Value::from(approval_id));
    details.insert("reason".to_owned(), Value::from(why));
    details.insert("approval_reason".to_owned(), Value::from(reason.describe()));
    ToolResult::failure_with(
        ErrorCode::ApprovalDenied,
        format!(
            "`{}` was not approved: {why}. Do not repeat the same call; ask the user how to \
             proceed or take another approach.",
            tool.name()
        ),
        details,
    )
}

/// What a session grant for this call would cover. A command without a safe prefix (the
/// tool gives no scope) can only be allowed one call at a time.
fn grant_key(tool: &ToolDescriptor, arguments: &Value) -> GrantKey {
    let name = tool.name();
    match tool.tool.approval_scope(arguments) {
        Some(scope) => GrantKey::scoped(name, scope),
        None if tool.spec().kind == ToolKind::CommandExecution => GrantKey::one_call_only(name),
        None => GrantKey::tool(name),
    }
}
