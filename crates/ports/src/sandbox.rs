//! Gate one's ports: which tool kinds a sandbox mode admits, where paths may point, and how
//! commands are confined by the operating system.

use crate::{ErrorCode, SandboxMode, ToolKind};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A sandbox refusal: one of the three `sandbox_*` codes and a message for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxBlock {
    /// `sandbox_read_only`, `sandbox_write_blocked` or `sandbox_command_blocked`.
    pub code: ErrorCode,
    /// What was refused and what to do instead.
    pub message: String,
}

/// The sandbox's verdict on a call in a mode (SPEC §5's table, with the tier in force).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxVerdict {
    /// The call may run as the approval matrix says (paths are still checked): tool calls,
    /// file changes under workspace-write, every kind under danger-full-access.
    Allowed,
    /// A command that runs confined by the operating system: approval follows the sandbox
    /// (SPEC §6: no prompt under `on-request`/`suggest`).
    Confined,
    /// A command that would run unconfined under workspace-write: it runs only after an
    /// approval that nothing skips (not a hook's `allow`, not the approval matrix).
    ApprovalRequired(Unconfined),
    /// The call may not run.
    Blocked(SandboxBlock),
}

/// Why a command under workspace-write would run unconfined, so an approval is forced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unconfined {
    /// No confining tier on this machine ([`ConfinementTier::None`]).
    NoTier,
    /// The tool's provider runs it, outside our confinement (an MCP server, an extension):
    /// see [`CommandRunner::Provider`].
    Provider,
    /// The call asked to run outside the sandbox ([`SandboxRequest::Escalated`]).
    Escalated,
}

/// Who runs a command tool's commands. A [`ToolSpec`](crate::ToolSpec) field; only
/// `command_execution` verdicts read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandRunner {
    /// The tool's provider, outside our confinement (an MCP server, an extension). The
    /// default: a tool must say that its commands go through our confinement.
    #[default]
    Provider,
    /// Our [`CommandConfinement`]: the built-in command tools (`bash`, `background_shell`,
    /// `verify_changes`, `lsp` servers). Confined whenever the tier confines.
    Confinement,
}

/// What one call asks of the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxRequest {
    /// Run as the sandbox mode and tier say (the default).
    #[default]
    Confined,
    /// Run outside the confinement (`"sandbox": "escalated"`, with a justification): under
    /// workspace-write it always asks, and the approval policy `never` refuses it.
    Escalated,
}

/// What the sandbox is asked about a call: the tool kind, and for commands who runs them and
/// whether the call asks to leave the confinement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxQuery {
    /// The kind checked (declared by the tool, or claimed by the call).
    pub kind: ToolKind,
    /// Who runs the tool's commands.
    pub runner: CommandRunner,
    /// What the call asks for.
    pub request: SandboxRequest,
}

impl SandboxQuery {
    /// A query about `kind` alone: commands run by their provider, no escalation. Enough to
    /// know whether a kind is blocked (the catalog asks this).
    #[must_use]
    pub const fn kind(kind: ToolKind) -> Self {
        Self {
            kind,
            runner: CommandRunner::Provider,
            request: SandboxRequest::Confined,
        }
    }

    /// A query about a tool as its spec declares it (kind and command runner), no escalation.
    #[must_use]
    pub const fn of(spec: &crate::ToolSpec) -> Self {
        Self {
            kind: spec.kind,
            runner: spec.command_runner,
            request: SandboxRequest::Confined,
        }
    }

    /// The same query about another kind (one a call claims).
    #[must_use]
    pub const fn with_kind(mut self, kind: ToolKind) -> Self {
        self.kind = kind;
        self
    }

    /// The same query with the call's request.
    #[must_use]
    pub const fn with_request(mut self, request: SandboxRequest) -> Self {
        self.request = request;
        self
    }
}

/// What a path will be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathAccess {
    /// Reading (also checked: reading `~/.ssh` is an exfiltration path).
    Read,
    /// Creating or changing.
    Write,
}

/// A path argument resolved against the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// The absolute lexical path (for display and as a command's cwd).
    pub lexical: PathBuf,
    /// The physical target with symlinks followed (dangling ones by hand); what was checked.
    pub physical: PathBuf,
    /// The root (lexical) the path lies in; `None` under danger-full-access outside every root.
    pub root: Option<PathBuf>,
    /// The path relative to that root, `/`-separated, `.` for the root itself; the absolute
    /// lexical path when it lies outside every root.
    pub relative: String,
}

/// Why a path cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PathError {
    /// The code a tool result should carry (`sandbox_write_blocked` for escapes,
    /// `sandbox_read_only` for writes in read-only mode, `invalid_arguments` for bad input).
    pub code: ErrorCode,
    /// What was wrong, naming the path as given.
    pub message: String,
}

/// Gate one's policy.
#[cfg_attr(feature = "testkit", mockall::automock)]
pub trait SandboxPolicy: Send + Sync {
    /// The verdict for a call in a mode (SPEC §5's table): its kind, and for commands who runs
    /// them, whether the call asks to run unconfined and whether the tier confines. Blocking
    /// depends on the kind and mode alone. `tool_name` is only for the message.
    fn check_tool(&self, tool_name: &str, query: SandboxQuery, mode: SandboxMode)
    -> SandboxVerdict;

    /// Resolves a path argument: relative paths against `roots[0]`; the physical target must
    /// lie inside a root's physical path in every mode but danger-full-access, for reads as
    /// well as writes; writes are refused in read-only and external-sandbox modes.
    ///
    /// # Errors
    /// When the path escapes, loops, is malformed, or `access` is not allowed in `mode`.
    fn resolve_path(
        &self,
        input: &str,
        roots: &[PathBuf],
        mode: SandboxMode,
        access: PathAccess,
    ) -> Result<ResolvedPath, PathError>;

    /// The OS confinement tier commands run under.
    fn confinement_tier(&self) -> ConfinementTier;
}

/// How strongly commands are confined, chosen by a start-up probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfinementTier {
    /// bubblewrap: read-only root, writable workspace, guards re-bound read-only.
    Bubblewrap,
    /// Landlock + seccomp applied before exec.
    Landlock,
    /// No confinement: workspace-write asks before every command.
    None,
}

impl ConfinementTier {
    /// Whether commands run confined.
    #[must_use]
    pub const fn is_confined(self) -> bool {
        !matches!(self, Self::None)
    }
}

/// Where a confined command may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfinementScope {
    /// Writable roots.
    pub writable_roots: Vec<PathBuf>,
    /// Paths inside them that stay read-only (`.git`, our config and hooks).
    pub read_only_paths: Vec<PathBuf>,
    /// Whether the network is reachable.
    pub network: bool,
}

impl ConfinementScope {
    /// A scope writing only to `root`, without network.
    #[must_use]
    pub fn workspace(root: &Path) -> Self {
        Self {
            writable_roots: vec![root.to_path_buf()],
            read_only_paths: Vec::new(),
            network: false,
        }
    }
}

/// Could not confine a command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot confine the command: {message}")]
pub struct ConfinementError {
    /// Why.
    pub message: String,
}

/// Applies OS confinement to a command before it is spawned.
#[cfg_attr(feature = "testkit", mockall::automock)]
pub trait CommandConfinement: Send + Sync {
    /// The tier in force.
    fn tier(&self) -> ConfinementTier;

    /// Prepares `command` to run confined to `scope` (a no-op for the `None` tier).
    ///
    /// # Errors
    /// When the confinement cannot be set up; the command must then not run.
    fn confine(
        &self,
        command: &mut std::process::Command,
        scope: &ConfinementScope,
    ) -> Result<(), ConfinementError>;
}
