//! Steps 2, 4, 5, 8, 10 and 13: aborts, the `never` policy, the sandbox and plan mode.

use super::Host;
use kun_ports::{
    AbortStage, CommandRunner, ErrorCode, HostError, PathAccess, PromptRule, ProviderKind,
    SandboxBlock, SandboxQuery, SandboxRequest, SandboxVerdict, Sandboxing, ToolDescriptor,
    ToolHostContext, ToolKind, ToolPolicy, ToolResult, ToolRole, prompt_rule,
};
use serde_json::{Map, Value};
use std::ops::ControlFlow;

/// The stricter of two sandbox answers about one call (its declared kind and the kind it
/// claims, or its escalation): unconfined beats allowed beats confined, since approval
/// follows the sandbox only when every answer says the call runs confined. Of two unconfined
/// answers the later, more specific one wins (an escalation asked for on a machine with no
/// confining tier is shown as an escalation).
const fn stricter(a: Sandboxing, b: Sandboxing) -> Sandboxing {
    match (a, b) {
        (_, Sandboxing::Unconfined(_)) | (Sandboxing::Confined, Sandboxing::Allowed) => b,
        (Sandboxing::Unconfined(_) | Sandboxing::Allowed | Sandboxing::Confined, _) => a,
    }
}

/// Steps 2 and 13: an aborted turn stops here.
pub(crate) fn ensure_not_aborted(
    ctx: &ToolHostContext,
    stage: AbortStage,
) -> Result<(), HostError> {
    if ctx.abort.is_aborted() {
        Err(HostError::Aborted { stage })
    } else {
        Ok(())
    }
}

/// Step 4: a tool whose own policy is `never` is a caller fault.
pub(crate) fn refuse_never_policy(tool: &ToolDescriptor) -> Result<(), HostError> {
    if tool.spec().policy == ToolPolicy::Never {
        Err(HostError::DisabledByPolicy {
            name: tool.name().to_owned(),
        })
    } else {
        Ok(())
    }
}

/// Step 8: a planning turn runs no file mutation except a [`ToolRole::PlanWriter`]'s
/// (`create_plan`: it writes only the reserved plan file). The role is the tool's own
/// declaration, never its name.
pub(crate) fn plan_mode_block(
    tool: &ToolDescriptor,
    ctx: &ToolHostContext,
) -> ControlFlow<ToolResult> {
    let spec = tool.spec();
    if ctx.is_plan_context()
        && spec.kind == ToolKind::FileChange
        && spec.role != ToolRole::PlanWriter
    {
        return ControlFlow::Break(ToolResult::failure(
            ErrorCode::PlanModeWriteBlocked,
            format!(
                "`{}` changes files, and this turn is in plan mode. Investigate with read-only tools, \
                 save the plan with create_plan, and switch to agent mode to make the change.",
                spec.name
            ),
        ));
    }
    ControlFlow::Continue(())
}

/// A sandbox refusal as the result the model sees.
fn blocked(block: SandboxBlock) -> ToolResult {
    ToolResult::failure(block.code, block.message)
}

impl Host {
    /// The sandbox verdict for `query` (SPEC §5): blocked, or how the call runs. Who runs a
    /// command (our confinement or its provider) is the tool spec's
    /// [`command_runner`](kun_ports::ToolSpec::command_runner), and the sandbox decides
    /// what follows from it.
    ///
    /// Only a `built-in` provider's tool can say that our confinement runs its commands: a
    /// command tool of any other provider (an MCP server, an extension) runs outside it
    /// whatever its spec says (SPEC §5 and §9).
    fn sandbox_gate(
        &self,
        tool: &ToolDescriptor,
        query: SandboxQuery,
        ctx: &ToolHostContext,
    ) -> Result<Sandboxing, SandboxBlock> {
        let query = if tool.provider_kind() == ProviderKind::BuiltIn {
            query
        } else {
            SandboxQuery {
                runner: CommandRunner::Provider,
                ..query
            }
        };
        let sandbox = self.registry.filters().sandbox();
        match sandbox.check_tool(tool.name(), query, ctx.sandbox) {
            SandboxVerdict::Blocked(block) => Err(block),
            SandboxVerdict::ApprovalRequired(why) => Ok(Sandboxing::Unconfined(why)),
            SandboxVerdict::Confined => Ok(Sandboxing::Confined),
            SandboxVerdict::Allowed => Ok(Sandboxing::Allowed),
        }
    }

    /// Step 5: the sandbox on the tool's declared kind. `user_interaction` tools are exempt.
    pub(crate) fn sandbox_on_declared_kind(
        &self,
        tool: &ToolDescriptor,
        ctx: &ToolHostContext,
    ) -> ControlFlow<ToolResult, Sandboxing> {
        if tool.spec().user_interaction {
            return ControlFlow::Continue(Sandboxing::Allowed);
        }
        match self.sandbox_gate(tool, SandboxQuery::of(tool.spec()), ctx) {
            Ok(gate) => ControlFlow::Continue(gate),
            Err(block) => ControlFlow::Break(blocked(block)),
        }
    }

    /// Step 10: the runtime policy. The sandbox again on what the call asks: the kind it
    /// claims (a model claiming `tool_call` for a command does not get past it) and a request
    /// to run unconfined; every path the call will write; then the runtime approval policy
    /// `never` (`approval_policy_blocked`, also for an escalated command).
    pub(crate) fn runtime_policy(
        &self,
        tool: &ToolDescriptor,
        declared: Sandboxing,
        claimed_kind: Option<ToolKind>,
        request: SandboxRequest,
        arguments: &Value,
        ctx: &ToolHostContext,
    ) -> ControlFlow<ToolResult, Sandboxing> {
        let spec = tool.spec();
        if spec.user_interaction {
            return ControlFlow::Continue(Sandboxing::Allowed);
        }
        let query = SandboxQuery::of(spec).with_request(request);
        let mut gate = declared;
        let mut kind_in_effect = spec.kind;
        // A read-only action of a command tool (`computer_use` `screenshot`): step 5 passed
        // the declared kind, so the narrower kind can only lift a forced approval.
        if let Some(kind) = tool
            .tool()
            .call_kind(arguments)
            .filter(|kind| *kind == ToolKind::ToolCall && spec.kind != ToolKind::ToolCall)
        {
            match self.sandbox_gate(tool, query.with_kind(kind), ctx) {
                Ok(narrowed) => gate = narrowed,
                Err(block) => return ControlFlow::Break(blocked(block)),
            }
            kind_in_effect = kind;
        }
        let mut kinds = Vec::new();
        if request != SandboxRequest::Confined {
            kinds.push(spec.kind); // step 5 asked only about running confined
        }
        if let Some(claimed) =
            claimed_kind.filter(|claimed| *claimed != kind_in_effect && !kinds.contains(claimed))
        {
            kinds.push(claimed);
        }
        for kind in kinds {
            match self.sandbox_gate(tool, query.with_kind(kind), ctx) {
                Ok(answer) => gate = stricter(gate, answer),
                Err(block) => return ControlFlow::Break(blocked(block)),
            }
        }
        if let ControlFlow::Break(result) = self.check_write_paths(tool, arguments, ctx) {
            return ControlFlow::Break(result);
        }
        if prompt_rule(ctx.approval, spec.policy, gate) == PromptRule::Blocked {
            return ControlFlow::Break(ToolResult::failure(
                ErrorCode::ApprovalPolicyBlocked,
                format!(
                    "`{}` cannot run: the approval policy is `never`, which allows no tool call \
                     that would need a decision. Change the approval policy to run it.",
                    spec.name
                ),
            ));
        }
        ControlFlow::Continue(gate)
    }

    /// Every path the call declares it will write must resolve inside the workspace.
    fn check_write_paths(
        &self,
        tool: &ToolDescriptor,
        arguments: &Value,
        ctx: &ToolHostContext,
    ) -> ControlFlow<ToolResult> {
        let sandbox = self.registry.filters().sandbox();
        for path in tool.tool().write_paths(arguments) {
            if let Err(error) =
                sandbox.resolve_path(&path, &ctx.workspace_roots, ctx.sandbox, PathAccess::Write)
            {
                let mut details = Map::new();
                details.insert("path".to_owned(), Value::String(path));
                return ControlFlow::Break(ToolResult::failure_with(
                    error.code,
                    error.message,
                    details,
                ));
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kun_ports::Unconfined;

    #[test]
    fn the_stricter_answer_wins() {
        let no_tier = Sandboxing::Unconfined(Unconfined::NoTier);
        let escalated = Sandboxing::Unconfined(Unconfined::Escalated);
        let table = [
            (
                Sandboxing::Confined,
                Sandboxing::Confined,
                Sandboxing::Confined,
            ),
            (
                Sandboxing::Confined,
                Sandboxing::Allowed,
                Sandboxing::Allowed,
            ),
            (
                Sandboxing::Allowed,
                Sandboxing::Confined,
                Sandboxing::Allowed,
            ),
            (
                Sandboxing::Allowed,
                Sandboxing::Allowed,
                Sandboxing::Allowed,
            ),
            (Sandboxing::Confined, escalated, escalated),
            (Sandboxing::Allowed, no_tier, no_tier),
            (no_tier, Sandboxing::Confined, no_tier),
            (no_tier, escalated, escalated),
            (escalated, Sandboxing::Allowed, escalated),
        ];
        for (a, b, expected) in table {
            assert_eq!(stricter(a, b), expected, "{a:?} + {b:?}");
        }
    }
}
