//! Steps 2, 4, 5, 8, 10 and 13: aborts, the `never` policy, the sandbox and plan mode.

use super::Host;
use kun_ports::{
    AbortStage, ErrorCode, HostError, PathAccess, PromptRule, ProviderKind, SandboxBlock,
    SandboxMode, SandboxVerdict, ToolDescriptor, ToolHostContext, ToolKind, ToolPolicy, ToolResult,
    ToolRole, prompt_rule,
};
use serde_json::{Map, Value};
use std::ops::ControlFlow;

/// What the sandbox lets a call do, once it is not blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SandboxGate {
    /// Runs without a sandbox-forced approval.
    Allowed,
    /// Runs only after an approval: a command that is not confined.
    ApprovalRequired,
}

impl SandboxGate {
    /// The stricter of two gates.
    const fn and(self, other: Self) -> Self {
        match (self, other) {
            (Self::Allowed, Self::Allowed) => Self::Allowed,
            _ => Self::ApprovalRequired,
        }
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
    /// The sandbox verdict for `kind`, as a gate.
    ///
    /// A command tool of any provider but `built-in` runs outside our OS confinement (an MCP
    /// server, an extension), so under workspace-write an `Allowed` verdict for it becomes
    /// `ApprovalRequired` (SPEC §5 and §9).
    fn sandbox_gate(
        &self,
        tool: &ToolDescriptor,
        kind: ToolKind,
        ctx: &ToolHostContext,
    ) -> Result<SandboxGate, SandboxBlock> {
        let sandbox = self.registry.filters().sandbox();
        match sandbox.check_tool(tool.name(), kind, ctx.sandbox) {
            SandboxVerdict::Blocked(block) => Err(block),
            SandboxVerdict::ApprovalRequired => Ok(SandboxGate::ApprovalRequired),
            SandboxVerdict::Allowed
                if kind == ToolKind::CommandExecution
                    && ctx.sandbox == SandboxMode::WorkspaceWrite
                    && tool.provider_kind != ProviderKind::BuiltIn =>
            {
                Ok(SandboxGate::ApprovalRequired)
            }
            SandboxVerdict::Allowed => Ok(SandboxGate::Allowed),
        }
    }

    /// Step 5: the sandbox on the tool's declared kind. `user_interaction` tools are exempt.
    pub(crate) fn sandbox_on_declared_kind(
        &self,
        tool: &ToolDescriptor,
        ctx: &ToolHostContext,
    ) -> ControlFlow<ToolResult, SandboxGate> {
        if tool.spec().user_interaction {
            return ControlFlow::Continue(SandboxGate::Allowed);
        }
        match self.sandbox_gate(tool, tool.spec().kind, ctx) {
            Ok(gate) => ControlFlow::Continue(gate),
            Err(block) => ControlFlow::Break(blocked(block)),
        }
    }

    /// Step 10: the runtime policy. The sandbox again on the kind the call claims (a model
    /// claiming `tool_call` for a command does not get past it), every path the call will
    /// write, then the runtime approval policy `never`.
    pub(crate) fn runtime_policy(
        &self,
        tool: &ToolDescriptor,
        declared: SandboxGate,
        claimed_kind: Option<ToolKind>,
        arguments: &Value,
        ctx: &ToolHostContext,
    ) -> ControlFlow<ToolResult, SandboxGate> {
        let spec = tool.spec();
        if spec.user_interaction {
            return ControlFlow::Continue(SandboxGate::Allowed);
        }
        let mut gate = declared;
        let mut kind_in_effect = spec.kind;
        // A read-only action of a command tool (`computer_use` `screenshot`): step 5 passed
        // the declared kind, so the narrower kind can only lift a forced approval.
        if let Some(kind) = tool
            .tool
            .call_kind(arguments)
            .filter(|kind| *kind == ToolKind::ToolCall && spec.kind != ToolKind::ToolCall)
        {
            match self.sandbox_gate(tool, kind, ctx) {
                Ok(narrowed) => gate = narrowed,
                Err(block) => return ControlFlow::Break(blocked(block)),
            }
            kind_in_effect = kind;
        }
        if let Some(kind) = claimed_kind.filter(|k| *k != kind_in_effect) {
            match self.sandbox_gate(tool, kind, ctx) {
                Ok(claimed) => gate = gate.and(claimed),
                Err(block) => return ControlFlow::Break(blocked(block)),
            }
        }
        if let ControlFlow::Break(result) = self.check_write_paths(tool, arguments, ctx) {
            return ControlFlow::Break(result);
        }
        if prompt_rule(ctx.approval, spec.policy) == PromptRule::Blocked {
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
        for path in tool.tool.write_paths(arguments) {
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
