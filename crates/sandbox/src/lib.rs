//! # kun-sandbox
//!
//! Gate one of kun-rs (SPEC §5): which tool kinds a sandbox mode admits, where path arguments
//! may point, and how commands are confined by the operating system.
//!
//! ## The matrix
//!
//! The sandbox looks at a tool's kind, never its name ([`tool_verdict`]):
//!
//! | mode | `tool_call` | `file_change` | `command_execution` |
//! |---|---|---|---|
//! | read-only | allowed | blocked: `sandbox_read_only` | blocked: `sandbox_command_blocked` |
//! | workspace-write | allowed | allowed; paths must stay inside the roots | allowed when the confinement tier is confined, otherwise approval for every call |
//! | danger-full-access | allowed | allowed | allowed |
//! | external-sandbox | allowed | blocked: `sandbox_write_blocked` | blocked: `sandbox_command_blocked` |
//!
//! ## Paths
//!
//! [`resolve_workspace_path`] resolves a path argument against the workspace roots. In every
//! mode but danger-full-access its physical target, with symlinks followed (dangling ones by
//! hand, at most [`MAX_LINK_FOLLOWS`] links), must lie inside a root's canonical path, for
//! reads as well as writes: `<ws>/evil -> /etc/passwd` is as far out as `../../etc/passwd`.
//! A read outside is `sandbox_read_blocked`, a write outside `sandbox_write_blocked`.
//!
//! ## Protected paths
//!
//! A write may not touch the agent's own guards — `.git`, `.kun`, `.mcp.json`, `.claude`,
//! `.agents`, at any depth — in any mode but danger-full-access: `sandbox_protected_path`,
//! unless the user's config lists an exception ([`ProtectedPaths`]). The rule sits where
//! paths are resolved for writing, so every file-changing tool obeys it.
//!
//! ## Confinement
//!
//! [`SandboxCapabilities::probe`] picks the tier commands run under, once at start: bubblewrap
//! when usable, else Landlock + seccomp, else [`NoConfinement`], each behind the
//! [`CommandConfinement`](kun_ports::CommandConfinement) port (see the `confinement` module
//! and the README's threat model).
//!
//! ## Example
//!
//! ```
//! use kun_ports::{ErrorCode, PathAccess, SandboxMode, SandboxPolicy, SandboxVerdict, ToolKind};
//! use kun_sandbox::{SandboxCapabilities, WorkspaceSandbox};
//!
//! let caps = SandboxCapabilities::probe();
//! let sandbox = WorkspaceSandbox::for_confinement(caps.confinement().as_ref());
//!
//! // Under workspace-write, commands need an approval unless a tier confines them.
//! let verdict = sandbox.check_tool("bash", ToolKind::CommandExecution, SandboxMode::WorkspaceWrite);
//! let expected = if caps.tier().is_confined() {
//!     SandboxVerdict::Allowed
//! } else {
//!     SandboxVerdict::ApprovalRequired
//! };
//! assert_eq!(verdict, expected);
//!
//! // Paths stay inside the workspace.
//! let ws = tempfile::tempdir()?;
//! let roots = [ws.path().to_path_buf()];
//! let ok = sandbox.resolve_path("src/new.rs", &roots, SandboxMode::WorkspaceWrite, PathAccess::Write)?;
//! assert_eq!(ok.relative, "src/new.rs");
//! assert_eq!(ok.lexical, ws.path().join("src/new.rs"));
//!
//! let escape = sandbox
//!     .resolve_path("../elsewhere.txt", &roots, SandboxMode::WorkspaceWrite, PathAccess::Read)
//!     .unwrap_err();
//! assert_eq!(escape.code, ErrorCode::SandboxReadBlocked);
//!
//! // The agent's own guards are not writable.
//! let guard = sandbox
//!     .resolve_path(".git/hooks/pre-commit", &roots, SandboxMode::WorkspaceWrite, PathAccess::Write)
//!     .unwrap_err();
//! assert_eq!(guard.code, ErrorCode::SandboxProtectedPath);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// The README is compiled as doctests, so its examples cannot rot.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

mod confinement;
mod lexical;
mod matrix;
mod paths;
mod physical;
mod policy;
mod protected;

#[cfg(target_os = "linux")]
pub use confinement::{BubblewrapConfinement, LandlockConfinement};
pub use confinement::{
    BubblewrapProgram, ConfinementReport, DEFAULT_MAX_PROCESSES, LandlockProbe, NoConfinement,
    ProbeOptions, ProbeOutcome, ProbeStatus, SandboxCapabilities,
};
pub use matrix::tool_verdict;
pub use paths::resolve_workspace_path;
pub use physical::MAX_LINK_FOLLOWS;
pub use policy::WorkspaceSandbox;
pub use protected::{InvalidException, ProtectedPaths};
