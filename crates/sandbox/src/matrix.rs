//! The sandbox matrix: which calls a sandbox mode admits (SPEC §5).
//!
//! | mode | `tool_call` | `file_change` | `command_execution` |
//! |---|---|---|---|
//! | read-only | allowed | `sandbox_read_only` | `sandbox_command_blocked` |
//! | workspace-write | allowed | allowed (paths checked) | see below |
//! | danger-full-access | allowed | allowed | allowed |
//! | external-sandbox | allowed | `sandbox_write_blocked` | `sandbox_command_blocked` |
//!
//! A command under workspace-write, first row that applies:
//!
//! | the command | verdict |
//! |---|---|
//! | its provider runs it ([`CommandRunner::Provider`]: MCP servers, extensions) | approval required ([`Unconfined::Provider`]) |
//! | the call asks to run unconfined ([`SandboxRequest::Escalated`]) | approval required ([`Unconfined::Escalated`]) |
//! | the tier does not confine ([`ConfinementTier::None`]) | approval required ([`Unconfined::NoTier`]) |
//! | otherwise | [`SandboxVerdict::Confined`]: approval follows the sandbox |
//!
//! The verdict depends on the query (kind, command runner, request), the mode and the tier
//! only; the tool's name appears in the message and nowhere else. Escalation never unblocks
//! a blocked kind, and under danger-full-access there is no confinement to leave.

use kun_ports::{
    CommandRunner, ConfinementTier, ErrorCode, SandboxBlock, SandboxMode, SandboxQuery,
    SandboxRequest, SandboxVerdict, ToolKind, Unconfined,
};

/// How the user changes the sandbox mode; every refusal ends by pointing there.
pub(crate) const MODE_SETTING: &str =
    "the sandbox mode (the `--sandbox` flag, or the `sandbox` setting in .kun/config.toml)";

/// The verdict for a call described by `query` under `mode` when commands run under `tier`.
///
/// Invariants: `tool_call` is allowed in every mode; a blocked verdict always carries one of
/// the three `sandbox_*` codes; only a command run by our confinement, not escalated, on a
/// confining tier is [`SandboxVerdict::Confined`].
#[must_use]
pub fn tool_verdict(
    tool_name: &str,
    query: SandboxQuery,
    mode: SandboxMode,
    tier: ConfinementTier,
) -> SandboxVerdict {
    match (mode, query.kind) {
        (_, ToolKind::ToolCall)
        | (SandboxMode::DangerFullAccess, _)
        | (SandboxMode::WorkspaceWrite, ToolKind::FileChange) => SandboxVerdict::Allowed,
        (SandboxMode::WorkspaceWrite, ToolKind::CommandExecution) => workspace_command(query, tier),
        (SandboxMode::ReadOnly, ToolKind::FileChange) => blocked(
            ErrorCode::SandboxReadOnly,
            format!(
                "`{tool_name}` is blocked: it changes files and the sandbox is read-only. \
                 Keep to reading tools, or ask the user to set {MODE_SETTING} to \
                 workspace-write so files inside the workspace can change."
            ),
        ),
        (SandboxMode::ReadOnly, ToolKind::CommandExecution) => blocked(
            ErrorCode::SandboxCommandBlocked,
            format!(
                "`{tool_name}` is blocked: it runs commands and the sandbox is read-only. \
                 Keep to reading tools, or ask the user to set {MODE_SETTING} to \
                 workspace-write (commands then run confined, or after approval)."
            ),
        ),
        (SandboxMode::ExternalSandbox, ToolKind::FileChange) => blocked(
            ErrorCode::SandboxWriteBlocked,
            format!(
                "`{tool_name}` is blocked: under external-sandbox, in-process tools do not \
                 change files, because the outer sandbox cannot see or vet those writes. \
                 Ask the user to set {MODE_SETTING} to workspace-write if this change is needed."
            ),
        ),
        (SandboxMode::ExternalSandbox, ToolKind::CommandExecution) => blocked(
            ErrorCode::SandboxCommandBlocked,
            format!(
                "`{tool_name}` is blocked: under external-sandbox, host commands do not run. \
                 Ask the user to set {MODE_SETTING} to workspace-write if a command is needed."
            ),
        ),
    }
}

/// A command under workspace-write: confined, or why it would not be.
const fn workspace_command(query: SandboxQuery, tier: ConfinementTier) -> SandboxVerdict {
    match (query.runner, query.request) {
        (CommandRunner::Provider, _) => SandboxVerdict::ApprovalRequired(Unconfined::Provider),
        (CommandRunner::Confinement, SandboxRequest::Escalated) => {
            SandboxVerdict::ApprovalRequired(Unconfined::Escalated)
        }
        (CommandRunner::Confinement, SandboxRequest::Confined) => {
            if tier.is_confined() {
                SandboxVerdict::Confined
            } else {
                SandboxVerdict::ApprovalRequired(Unconfined::NoTier)
            }
        }
    }
}

/// A blocked verdict.
fn blocked(code: ErrorCode, message: String) -> SandboxVerdict {
    SandboxVerdict::Blocked(SandboxBlock { code, message })
}
