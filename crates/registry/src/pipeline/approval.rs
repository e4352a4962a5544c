//! Steps 11 and 12: whether a call needs approval, and asking for it (fail closed).
//!
//! The approval matrix ([`prompt_rule`]: runtime policy × tool policy × how the call runs, from
//! the sandbox) and the tool's explicit approval decide. A call needs approval, for the first
//! reason that applies:
//!
//! 1. the matrix says `forced`: a command that would run unconfined under workspace-write —
//!    no confining tier ([`ApprovalReason::UnconfinedCommand`]), run by its provider
//!    ([`ApprovalReason::ProviderCommand`]) or asking to run outside the sandbox
//!    ([`ApprovalReason::EscalatedCommand`], with the call's justification) — a hook `allow`
//!    does not skip it;
//! 2. the tool requires explicit approval for this call ([`ApprovalReason::ExplicitTool`]) —
//!    a hook `allow` does not skip it;
//! 3. the matrix prompts ([`ApprovalReason::RuntimePolicy`]) — skipped when a PreToolUse hook
//!    said `allow`; `prompt unless allow-listed` is also skipped when the host's `untrusted`
//!    allow-list names the tool or the tool says the command is known safe.
//!
//! A confined command under `on-request`/`suggest` therefore runs without a prompt: approval
//! follows the sandbox. `user_interaction` tools never need approval, and neither does a call
//! the tool declares read-only from its arguments ([`CallApproval::NotNeeded`]:
//! `background_shell` `list` and `read` run no command and change nothing).
//!
//! | tool says for this call | matrix | explicit | asked? |
//! |---|---|---|---|
//! | `NotNeeded` | any | any | no |
//! | `AsDeclared` | `forced` (unconfined command) | any | yes (`unconfined_command`, `provider_command` or `escalated_command`) |
//! | `AsDeclared` | not `forced` | yes | yes (`explicit_tool`) |
//! | `AsDeclared` | `prompt`, or `prompt unless allow-listed` and not allow-listed; no hook `allow` | no | yes (`runtime_policy`) |
//! | `AsDeclared` | `no prompt`, or a hook `allow` | no | no |
//!
//! What a session grant covers comes from the tool ([`Tool::approval_scope`]); a command tool
//! that does not say is approved one call at a time.
//!
//! [`Tool::approval_scope`]: kun_ports::Tool::approval_scope

use super::Host;
use super::hooks::HookApproval;
use kun_ports::{
    ApprovalDecision, ApprovalReason, ApprovalRequest, CallApproval, CommandApproval,
    CommandSafety, ErrorCode, GrantKey, GrantScope, PromptRule, SandboxRequest, Sandboxing,
    ToolDescriptor, ToolHostContext, ToolKind, ToolResult, prompt_rule,
};
use serde_json::{Map, Value};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a command tool says about this call (`None` for other tools and for
/// `user_interaction` tools): read once, before step 10, which needs its sandbox request.
pub(crate) fn command_approval(
    tool: &ToolDescriptor,
    arguments: &Value,
    ctx: &ToolHostContext,
) -> Option<CommandApproval> {
    if tool.spec().user_interaction {
        return None;
    }
    tool.tool().approval_scope(arguments, ctx)
}

/// The sandbox request of a call: what its command tool says, else confined.
pub(crate) fn sandbox_request(command: Option<&CommandApproval>) -> SandboxRequest {
    command.map_or(SandboxRequest::Confined, |c| c.sandbox)
}

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
    if tool.tool().call_approval(arguments) == CallApproval::NotNeeded {
        return ControlFlow::Continue(ExplicitApproval::NotNeeded);
    }
    match tool.tool().explicit_approval(arguments, ctx) {
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
        sandboxing: Sandboxing,
        explicit: ExplicitApproval,
        hook: HookApproval,
        command: Option<&CommandApproval>,
    ) -> ApprovalNeed {
        let spec = tool.spec();
        if spec.user_interaction || explicit == ExplicitApproval::NotNeeded {
            return ApprovalNeed::None;
        }
        let rule = prompt_rule(ctx.approval, spec.policy, sandboxing);
        if rule == PromptRule::Forced {
            return ApprovalNeed::Ask(match sandboxing {
                Sandboxing::Unconfined(why) => why.into(),
                Sandboxing::Allowed | Sandboxing::Confined => ApprovalReason::RuntimePolicy,
            });
        }
        if explicit == ExplicitApproval::Required {
            return ApprovalNeed::Ask(ApprovalReason::ExplicitTool);
        }
        let matrix_prompts = match rule {
            PromptRule::Prompt => true,
            PromptRule::PromptUnlessAllowListed => {
                let known_safe = command.is_some_and(|c| c.safety == CommandSafety::KnownSafe);
                !(known_safe || self.untrusted_allow_list.contains(&spec.name))
            }
            // Forced returned above; Blocked and Refused stopped the call earlier (steps 10
            // and 4).
            PromptRule::NoPrompt
            | PromptRule::Forced
            | PromptRule::Blocked
            | PromptRule::Refused => false,
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
    command: Option<CommandApproval>,
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
        grant_key: grant_key(tool, command.as_ref()),
        justification: command
            .filter(|c| c.sandbox == SandboxRequest::Escalated)
            .and_then(|c| c.justification),
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

/// What a session grant for this call would cover: what its command tool says, else the
/// whole tool — except a command tool that does not say, which is approved one call at a time.
fn grant_key(tool: &ToolDescriptor, command: Option<&CommandApproval>) -> GrantKey {
    let name = tool.name();
    match command {
        Some(command) => GrantKey {
            tool_name: name.to_owned(),
            scope: command.grant.clone(),
        },
        None if tool.spec().kind == ToolKind::CommandExecution => GrantKey {
            tool_name: name.to_owned(),
            scope: GrantScope::OneCall {
                why: "this tool does not say which commands it runs, so each call is approved \
                      on its own"
                    .to_owned(),
            },
        },
        None => GrantKey::tool(name),
    }
}
