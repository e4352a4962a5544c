//! Steps 7 and 16: the PreToolUse and PostToolUse hooks of the pinned turn.
//!
//! With no hook configured both steps cost nothing: no call is built, nothing is cloned.

use super::{AfterRun, HookSet};
use kun_ports::{
    ErrorCode, HookRunner, HookToolCall, HookTurn, OperationKey, PreToolDecision, ToolDescriptor,
    ToolHostContext, ToolResult,
};
use serde_json::Value;
use std::ops::ControlFlow;
use std::sync::Arc;

/// Whether a PreToolUse hook pre-approved the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HookApproval {
    /// No hook said `allow`.
    NotGiven,
    /// A hook said `allow`: the approval matrix does not prompt (forced approvals still do).
    PreApproved,
}

/// What the PreToolUse step hands on.
pub(crate) struct PreHook {
    /// The arguments, as rewritten by the hooks.
    pub(crate) arguments: Value,
    /// Whether a hook pre-approved the call.
    pub(crate) approval: HookApproval,
    /// Extra context for the model.
    pub(crate) context: Vec<String>,
}

fn hook_turn(ctx: &ToolHostContext) -> HookTurn {
    HookTurn {
        thread_id: ctx.thread_id.clone(),
        turn_id: ctx.turn_id.clone(),
        cwd: ctx.primary_root().to_path_buf(),
        sandbox: ctx.sandbox,
        approval: ctx.approval,
        thread_mode: ctx.thread_mode,
        client_surface: ctx.client_surface,
    }
}

fn log_warnings(phase: &str, tool: &str, warnings: &[String]) {
    for warning in warnings {
        tracing::warn!(phase, tool, "hook warning: {warning}");
    }
}

/// Step 7: runs the PreToolUse chain over the normalised arguments (step 6 unwrapped any
/// `__raw` envelope first, so a hook matching on `path` cannot be bypassed by the envelope).
/// A crash or timeout is `hook_failed`, a denial `hook_denied`; otherwise the (possibly
/// rewritten) arguments go on, as the hook wrote them.
pub(crate) async fn pre_tool_use(
    hooks: &HookSet,
    ctx: &ToolHostContext,
    call_id: &str,
    tool: &ToolDescriptor,
    arguments: Value,
) -> ControlFlow<ToolResult, PreHook> {
    let Some(runner) = hooks.active() else {
        return ControlFlow::Continue(PreHook {
            arguments,
            approval: HookApproval::NotGiven,
            context: Vec::new(),
        });
    };
    let call = HookToolCall {
        turn: hook_turn(ctx),
        call_id: call_id.to_owned(),
        tool_name: tool.name().to_owned(),
        role: tool.spec().role,
        arguments,
    };
    let outcome = match runner.pre_tool_use(&call).await {
        Ok(outcome) => outcome,
        Err(failure) => {
            return ControlFlow::Break(ToolResult::failure(
                ErrorCode::HookFailed,
                format!(
                    "A PreToolUse hook failed before `{}` could run, so it did not run: {}. \
                     Fix or remove the hook, then try again.",
                    tool.name(),
                    failure.message
                ),
            ));
        }
    };
    log_warnings("PreToolUse", tool.name(), &outcome.warnings);
    let approval = match outcome.decision {
        PreToolDecision::Deny { reason } => {
            return ControlFlow::Break(ToolResult::failure(
                ErrorCode::HookDenied,
                format!(
                    "A PreToolUse hook refused `{}`: {reason}. Do not retry the same call; \
                     change the approach the hook objects to.",
                    tool.name()
                ),
            ));
        }
        PreToolDecision::Allow => HookApproval::PreApproved,
        PreToolDecision::Continue => HookApproval::NotGiven,
    };
    ControlFlow::Continue(PreHook {
        arguments: outcome.arguments.unwrap_or(call.arguments),
        approval,
        context: outcome.additional_context,
    })
}

/// Step 16: runs the PostToolUse chain over the result. A crash or timeout replaces the
/// result with `hook_failed` (the tool did run; the message says so).
pub(crate) async fn post_tool_use(
    hooks: &HookSet,
    ctx: &ToolHostContext,
    tool: &ToolDescriptor,
    operation: &OperationKey,
    after: &mut AfterRun,
    result: ToolResult,
) -> ToolResult {
    let Some(runner) = hooks.active() else {
        return result;
    };
    run_post(
        runner,
        ctx,
        tool,
        operation,
        after.arguments.as_ref(),
        result,
        &mut after.context,
    )
    .await
}

async fn run_post(
    runner: &Arc<dyn HookRunner>,
    ctx: &ToolHostContext,
    tool: &ToolDescriptor,
    operation: &OperationKey,
    arguments: Option<&Value>,
    result: ToolResult,
    context: &mut Vec<String>,
) -> ToolResult {
    let call = HookToolCall {
        turn: hook_turn(ctx),
        call_id: operation.call_id.clone(),
        tool_name: operation.tool_name.clone(),
        role: tool.spec().role,
        arguments: arguments.cloned().unwrap_or(Value::Null),
    };
    match runner.post_tool_use(&call, result).await {
        Ok(outcome) => {
            log_warnings("PostToolUse", &operation.tool_name, &outcome.warnings);
            context.extend(outcome.additional_context);
            outcome.result
        }
        Err(failure) => ToolResult::failure(
            ErrorCode::HookFailed,
            format!(
                "`{}` ran, but a PostToolUse hook failed on its result: {}. The tool's effects \
                 stand; do not run it again just because of this error.",
                operation.tool_name, failure.message
            ),
        ),
    }
}
