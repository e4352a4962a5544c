//! OS confinement of commands: the tiers, and the start-up probe that picks one.
//!
//! SPEC §5 orders three tiers; [`SandboxCapabilities::probe`] takes the first usable one:
//!
//! | tier | usable when | what a command gets |
//! |---|---|---|
//! | bubblewrap ([`BubblewrapConfinement`]) | `bwrap` is on `PATH` and a trial `/bin/true` with the real flags succeeds | `/` read-only, the workspace roots writable, their guards (`.git`, `.kun`, `.mcp.json`, `.claude`, `.agents`) read-only, private `/tmp`, `/dev`, `/proc`, pid and ipc namespaces, no network unless enabled |
//! | Landlock + seccomp ([`LandlockConfinement`]) | the kernel's Landlock ABI is at least 3 and a trial `/bin/true` succeeds | writes only to the workspace roots and a private `TMPDIR`, no TCP unless enabled; guards inside the roots stay writable |
//! | none ([`NoConfinement`]) | always | nothing: workspace-write asks before every command |
//!
//! Both confining tiers also give every command: a new session and process group, exactly the
//! environment its spec names, no_new_privs, no capabilities, the seccomp filter of
//! `seccomp.rs` (ptrace, io_uring, bpf, mounts, keyrings, new user namespaces; non-unix
//! sockets and `connect` with the network off), and its own pids cgroup when one is available
//! (as root `RLIMIT_NPROC` does not bind), killed and removed when its lease is dropped.
//! A scope of [`FileSystemScope::Unrestricted`](kun_ports::FileSystemScope) (danger-full-access)
//! runs unconfined in every tier.

#[cfg(target_os = "linux")]
mod bwrap;
#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod child;
#[cfg(target_os = "linux")]
mod enforcement;
#[cfg(target_os = "linux")]
mod guards;
#[cfg(target_os = "linux")]
mod landlock;
mod probe;
#[cfg(target_os = "linux")]
mod seccomp;

#[cfg(target_os = "linux")]
pub use bwrap::BubblewrapConfinement;
#[cfg(target_os = "linux")]
pub use landlock::LandlockConfinement;
pub use probe::{
    BubblewrapProgram, ConfinementReport, DEFAULT_MAX_PROCESSES, LandlockProbe, ProbeOptions,
    ProbeOutcome, ProbeStatus, SandboxCapabilities,
};

use kun_ports::{
    CommandConfinement, CommandSpec, ConfinedCommand, ConfinementError, ConfinementTier,
};

/// The tier of no confinement: commands run as they are, in a new session, with exactly the
/// spec's environment.
///
/// Under workspace-write that means every command needs an approval (see
/// [`crate::tool_verdict`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoConfinement;

impl CommandConfinement for NoConfinement {
    fn tier(&self) -> ConfinementTier {
        ConfinementTier::None
    }

    /// The spec's program and arguments, unconfined.
    fn command(&self, spec: &CommandSpec) -> Result<ConfinedCommand, ConfinementError> {
        Ok(ConfinedCommand::bare(spec.unconfined_command()))
    }
}
