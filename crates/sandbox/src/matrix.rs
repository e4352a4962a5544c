//! The sandbox matrix: which tool kinds a sandbox mode admits (SPEC §5).
//!
//! | mode | `tool_call` | `file_change` | `command_execution` |
//! |---|---|---|---|
//! | read-only | allowed | `sandbox_read_only` | `sandbox_command_blocked` |
//! | workspace-write | allowed | allowed (paths checked) | allowed when confined, else approval |
//! | danger-full-access | allowed | allowed | allowed |
//! | external-sandbox | allowed | `sandbox_write_blocked` | `sandbox_command_blocked` |
//!
//! The verdict depends on the kind, the mode and the confinement tier only; the tool's name
//! appears in the message and nowhere else.

use kun_ports::{ConfinementTier, ErrorCode, SandboxBlock, SandboxMode, SandboxVerdict, ToolKind};

/// How the user changes the sandbox mode; every refusal ends by pointing there.
pub(crate) const MODE_SETTING: &str =
    "the sandbox mode (the `--sandbox` flag, or the `sandbox` setting in .kun/config.toml)";

/// The verdict for a tool of `kind` under `mode` when commands run under `tier`.
///
/// Invariant: `tool_call` is allowed in every mode; a blocked verdict always carries one of
/// the three `sandbox_*` codes.
#[must_use]
pub fn tool_verdict(
    tool_name: &str,
    kind: ToolKind,
    mode: SandboxMode,
    tier: ConfinementTier,
) -> SandboxVerdict {
    match (mode, kind) {
        (_, ToolKind::ToolCall)
        | (SandboxMode::DangerFullAccess, _)
        | (SandboxMode::WorkspaceWrite, ToolKind::FileChange) => SandboxVerdict::Allowed,
        (SandboxMode::WorkspaceWrite, ToolKind::CommandExecution) => {
            if tier.is_confined() {
                SandboxVerdict::Allowed
            } else {
                SandboxVerdict::ApprovalRequired
            }
        }
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

/// A blocked verdict.
fn blocked(code: ErrorCode, message: String) -> SandboxVerdict {
    SandboxVerdict::Blocked(SandboxBlock { code, message })
}
