//! Gate one's ports: which tool kinds a sandbox mode admits, where paths may point, and how
//! commands are confined by the operating system.

use crate::process::ChildEnv;
use crate::{ErrorCode, SandboxMode, ToolKind};
use serde::{Deserialize, Serialize};
use std::ffi::{OsStr, OsString};
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

    /// The tier's name as people read it (`doctor`, the model's instructions).
    ///
    /// ```
    /// use kun_ports::ConfinementTier;
    /// assert_eq!(ConfinementTier::Landlock.label(), "Landlock + seccomp");
    /// assert_eq!(ConfinementTier::None.label(), "none");
    /// ```
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::Bubblewrap => "bubblewrap",
            Self::Landlock => "Landlock + seccomp",
            Self::None => "none",
        }
    }
}

/// Whether a confined command may reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkAccess {
    /// No network (the default; SPEC §5: unshared unless enabled).
    #[default]
    Disabled,
    /// The network is reachable.
    Enabled,
}

/// What a command may do to the file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileSystemScope {
    /// Read everywhere, write nowhere but a private temporary directory. The roots listed
    /// (the workspace) stay readable where a tier hides parts of the file system (a private
    /// `/tmp`).
    ReadOnly(Vec<PathBuf>),
    /// Read everywhere; write inside these roots (and a private temporary directory). The
    /// adapter keeps each root's guards read-only where its tier can (`.git`, `.kun`, …).
    Workspace(Vec<PathBuf>),
    /// No file-system confinement at all (danger-full-access).
    Unrestricted,
}

/// Where a confined command may write, and whether it reaches the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfinementScope {
    /// What it may do to the file system.
    pub files: FileSystemScope,
    /// Whether the network is reachable.
    pub network: NetworkAccess,
}

impl ConfinementScope {
    /// A scope writing only inside `root`, without network.
    #[must_use]
    pub fn workspace(root: &Path) -> Self {
        Self {
            files: FileSystemScope::Workspace(vec![root.to_path_buf()]),
            network: NetworkAccess::Disabled,
        }
    }

    /// A scope reading `roots` (and everything else) but writing nowhere, without network.
    #[must_use]
    pub const fn read_only(roots: Vec<PathBuf>) -> Self {
        Self {
            files: FileSystemScope::ReadOnly(roots),
            network: NetworkAccess::Disabled,
        }
    }

    /// No confinement at all (danger-full-access): every path writable, the network on.
    #[must_use]
    pub const fn unrestricted() -> Self {
        Self {
            files: FileSystemScope::Unrestricted,
            network: NetworkAccess::Enabled,
        }
    }

    /// The writable roots (empty for read-only and unrestricted scopes).
    #[must_use]
    pub fn writable_roots(&self) -> &[PathBuf] {
        match &self.files {
            FileSystemScope::Workspace(roots) => roots,
            FileSystemScope::ReadOnly(_) | FileSystemScope::Unrestricted => &[],
        }
    }
}

/// Where one of a child's standard streams goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildPipe {
    /// `/dev/null`.
    Null,
    /// A pipe to us.
    Piped,
}

impl ChildPipe {
    fn stdio(self) -> std::process::Stdio {
        match self {
            Self::Null => std::process::Stdio::null(),
            Self::Piped => std::process::Stdio::piped(),
        }
    }
}

/// A child's standard streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildStdio {
    /// Standard input.
    pub stdin: ChildPipe,
    /// Standard output.
    pub stdout: ChildPipe,
    /// Standard error.
    pub stderr: ChildPipe,
}

impl Default for ChildStdio {
    /// stdin from `/dev/null`, stdout and stderr piped: what a command tool wants.
    fn default() -> Self {
        Self {
            stdin: ChildPipe::Null,
            stdout: ChildPipe::Piped,
            stderr: ChildPipe::Piped,
        }
    }
}

/// Everything needed to start a command: what to run, where, with which environment and
/// streams, and confined to what. A [`CommandConfinement`] builds the real command from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// The program: a path, or a name looked up on the child's `PATH`.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Its complete environment (see [`crate::process::EnvAllowList`]).
    pub env: ChildEnv,
    /// What it may touch.
    pub scope: ConfinementScope,
    /// Its standard streams.
    pub stdio: ChildStdio,
}

impl CommandSpec {
    /// `program` in `cwd` with no arguments, `env`, `scope` and the default streams.
    #[must_use]
    pub fn new(
        program: impl Into<OsString>,
        cwd: impl Into<PathBuf>,
        env: ChildEnv,
        scope: ConfinementScope,
    ) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env,
            scope,
            stdio: ChildStdio::default(),
        }
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets the streams.
    #[must_use]
    pub const fn stdio(mut self, stdio: ChildStdio) -> Self {
        self.stdio = stdio;
        self
    }

    /// The command `program` (often the spec's own, or a launcher such as `bwrap`) with the
    /// spec's working directory, exactly its environment and its streams; no arguments, no
    /// session. Adapters build on it.
    #[must_use]
    pub fn base_command(&self, program: &OsStr) -> std::process::Command {
        let mut command = std::process::Command::new(program);
        command
            .current_dir(&self.cwd)
            .stdin(self.stdio.stdin.stdio())
            .stdout(self.stdio.stdout.stdio())
            .stderr(self.stdio.stderr.stdio());
        self.env.apply_to(&mut command);
        command
    }

    /// The spec run as it is, unconfined: its program and arguments, in a new session (see
    /// `crate::process::new_session`, on Unix).
    #[must_use]
    pub fn unconfined_command(&self) -> std::process::Command {
        let mut command = self.base_command(&self.program);
        command.args(&self.args);
        #[cfg(unix)]
        crate::process::new_session(&mut command);
        command
    }
}

/// What a confinement adapter must keep alive while its command runs (a private temporary
/// directory, a process-count cgroup, masks over missing guard paths) and clean up after it.
/// Dropping the lease releases them: drop it only after the child and its process group are
/// gone. A lease that holds a cgroup also kills whatever is left in it.
#[derive(Default)]
pub struct ConfinementLease(Option<Box<dyn std::any::Any + Send + Sync>>);

impl ConfinementLease {
    /// A lease holding nothing.
    #[must_use]
    pub const fn none() -> Self {
        Self(None)
    }

    /// A lease that drops `resources` when it is dropped.
    #[must_use]
    pub fn holding(resources: impl std::any::Any + Send + Sync) -> Self {
        Self(Some(Box::new(resources)))
    }
}

impl std::fmt::Debug for ConfinementLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ConfinementLease(holding)"
        } else {
            "ConfinementLease(none)"
        })
    }
}

/// A command ready to spawn, and the lease to hold until it and its group are gone.
#[derive(Debug)]
pub struct ConfinedCommand {
    /// The command to spawn (possibly a launcher wrapping the spec's program).
    pub command: std::process::Command,
    /// What to hold until the child and its process group are gone.
    pub lease: ConfinementLease,
}

impl ConfinedCommand {
    /// A command with nothing to hold.
    #[must_use]
    pub fn bare(command: std::process::Command) -> Self {
        Self {
            command,
            lease: ConfinementLease::none(),
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

impl ConfinementError {
    /// An error saying `message`.
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// Builds commands that run confined by the operating system (SPEC §5).
///
/// Every command a tool runs is built here from a [`CommandSpec`]: the adapter may wrap the
/// program in a launcher (bubblewrap), install restrictions that apply between fork and exec
/// (Landlock, seccomp), or run it as it is (the `None` tier). In every tier the child starts
/// a new session, so its process group is its pid, and gets exactly the spec's environment.
#[cfg_attr(feature = "testkit", mockall::automock)]
pub trait CommandConfinement: Send + Sync {
    /// The tier in force.
    fn tier(&self) -> ConfinementTier;

    /// The command that runs `spec` confined to its scope.
    ///
    /// # Errors
    /// When the confinement cannot be set up; the command must then not run.
    fn command(&self, spec: &CommandSpec) -> Result<ConfinedCommand, ConfinementError>;
}
