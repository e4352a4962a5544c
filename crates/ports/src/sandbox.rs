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

/// The sandbox's verdict on a tool kind in a mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxVerdict {
    /// The kind may run (paths are still checked).
    Allowed,
    /// The kind may run only after an approval (workspace-write commands that cannot be confined).
    ApprovalRequired,
    /// The kind may not run.
    Blocked(SandboxBlock),
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
    /// The verdict for a tool kind in a mode (SPEC §5's table). `tool_name` is only for the
    /// message.
    fn check_tool(&self, tool_name: &str, kind: ToolKind, mode: SandboxMode) -> SandboxVerdict;

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
