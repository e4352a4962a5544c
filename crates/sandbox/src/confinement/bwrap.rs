//! Tier 1: bubblewrap. The command runs in new user, pid, ipc (and, with the network off,
//! network) namespaces, with `/` read-only, a private `/dev`, `/proc` and `/tmp`, the workspace
//! roots writable and their guards read-only (see `guards`), the seccomp filter, no
//! capabilities, and its own pids cgroup.
//!
//! The argument list, in order (order matters):
//!
//! | arguments | why |
//! |---|---|
//! | `--new-session --die-with-parent` | no terminal; the sandbox dies with the outer bwrap |
//! | `--unshare-user --unshare-pid --unshare-ipc`, `--unshare-net` when the network is off | as root, bwrap makes no user namespace unless asked; a pid namespace hides our processes and their `/proc/PID/environ` |
//! | `--cap-drop ALL` | as root, a command with capabilities remounts a read-only bind (confinement.md V3–V5) |
//! | `--ro-bind / /`, `--dev /dev`, `--proc /proc` | everything readable, nothing writable |
//! | `--ro-bind /proc/P /proc/P` for `sys`, `sysrq-trigger`, `irq`, `bus` | a fresh `/proc` is writable, and euid 0 writes sysctls without any capability (`kernel.core_pattern` runs a program as root on the host) |
//! | `--tmpfs /tmp` | a private `/tmp`, **before** the roots, so a workspace under `/tmp` stays reachable (V13) |
//! | `--bind R R` per writable root, parents first | the workspace |
//! | `--ro-bind P P` per read-only root and guard | `.git`, `.kun`, `.mcp.json`, `.claude`, `.agents` |
//! | `--seccomp FD` | the filter of `seccomp`, installed by bwrap just before exec |
//! | `--chdir CWD -- PROGRAM ARGS…` | the command |
//!
//! bwrap itself is exec'd with exactly the command's environment (`TMPDIR=/tmp`): its pid 1
//! inside the sandbox keeps bwrap's environment, readable in `/proc/1/environ` (V9).

use super::child::ChildSetup;
use super::enforcement::Enforcement;
use super::guards;
use kun_ports::{
    CommandConfinement, CommandSpec, ConfinedCommand, ConfinementError, ConfinementLease,
    ConfinementTier, FileSystemScope, NetworkAccess,
};
use std::ffi::{OsStr, OsString};
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Parts of a fresh `/proc` that euid 0 could write without capabilities; re-bound read-only
/// (the ones that exist here).
const PROC_COVERS: [&str; 4] = ["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"];

/// The entries of [`PROC_COVERS`] that exist on this machine.
fn proc_covers() -> Vec<PathBuf> {
    PROC_COVERS
        .iter()
        .map(PathBuf::from)
        .filter(|path| path.exists())
        .collect()
}

/// What one bwrap run binds and runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BwrapPlan<'a> {
    /// Writable roots, canonical, parents first.
    pub(crate) writable: Vec<PathBuf>,
    /// Parts of `/proc` re-bound read-only.
    pub(crate) proc_covers: Vec<PathBuf>,
    /// Paths re-bound read-only after the writable ones (read-only roots, guards).
    pub(crate) read_only: Vec<PathBuf>,
    /// Whether the network namespace is shared.
    pub(crate) network: NetworkAccess,
    /// The descriptor bwrap reads the seccomp program from.
    pub(crate) seccomp_fd: i32,
    /// The working directory inside.
    pub(crate) cwd: &'a Path,
    /// The program and its arguments.
    pub(crate) program: &'a OsStr,
    /// Its arguments.
    pub(crate) args: &'a [OsString],
}

/// bwrap's arguments for `plan` (see the module table).
pub(crate) fn arguments(plan: &BwrapPlan<'_>) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |items: &[&OsStr]| args.extend(items.iter().map(|s| s.to_os_string()));
    let s = OsStr::new;
    push(&[s("--new-session"), s("--die-with-parent")]);
    push(&[s("--unshare-user"), s("--unshare-pid"), s("--unshare-ipc")]);
    if plan.network == NetworkAccess::Disabled {
        push(&[s("--unshare-net")]);
    }
    push(&[s("--cap-drop"), s("ALL")]);
    push(&[s("--ro-bind"), s("/"), s("/")]);
    push(&[s("--dev"), s("/dev"), s("--proc"), s("/proc")]);
    for path in &plan.proc_covers {
        push(&[s("--ro-bind"), path.as_os_str(), path.as_os_str()]);
    }
    push(&[s("--tmpfs"), s("/tmp")]);
    for root in &plan.writable {
        push(&[s("--bind"), root.as_os_str(), root.as_os_str()]);
    }
    for path in &plan.read_only {
        push(&[s("--ro-bind"), path.as_os_str(), path.as_os_str()]);
    }
    let fd = plan.seccomp_fd.to_string();
    push(&[s("--seccomp"), s(&fd)]);
    push(&[s("--chdir"), plan.cwd.as_os_str(), s("--"), plan.program]);
    args.extend(plan.args.iter().cloned());
    args
}

/// The bubblewrap tier.
#[derive(Debug)]
pub struct BubblewrapConfinement {
    bwrap: PathBuf,
    enforcement: Enforcement,
}

impl BubblewrapConfinement {
    /// The tier running `bwrap` (an absolute path) with these filters and bounds.
    pub(crate) const fn new(bwrap: PathBuf, enforcement: Enforcement) -> Self {
        Self { bwrap, enforcement }
    }

    /// The process bound, when commands get a cgroup.
    pub(crate) fn max_processes(&self) -> Option<u32> {
        self.enforcement.max_processes()
    }

    /// The `bwrap` program.
    pub(crate) fn program(&self) -> &Path {
        &self.bwrap
    }
}

impl CommandConfinement for BubblewrapConfinement {
    fn tier(&self) -> ConfinementTier {
        ConfinementTier::Bubblewrap
    }

    fn command(&self, spec: &CommandSpec) -> Result<ConfinedCommand, ConfinementError> {
        let (writable, readable) = match &spec.scope.files {
            FileSystemScope::Unrestricted => {
                return Ok(ConfinedCommand::bare(spec.unconfined_command()));
            }
            FileSystemScope::Workspace(roots) => (existing(roots)?, Vec::new()),
            FileSystemScope::ReadOnly(roots) => (Vec::new(), existing(roots)?),
        };
        let guards = guards::plan(&writable)?;
        let mut read_only = readable;
        read_only.extend(guards.read_only.iter().cloned());
        let filter = memfd_with(&self.enforcement.filter(spec.scope.network).to_bytes())?;
        let plan = BwrapPlan {
            writable,
            proc_covers: proc_covers(),
            read_only,
            network: spec.scope.network,
            seccomp_fd: filter.as_raw_fd(),
            cwd: &spec.cwd,
            program: &spec.program,
            args: &spec.args,
        };
        let mut inner = spec.clone();
        inner.env.set("TMPDIR", "/tmp");
        let mut command = inner.base_command(self.bwrap.as_os_str());
        command.args(arguments(&plan));
        let cgroup = self.enforcement.cgroup()?;
        let (cgroup, procs) = cgroup.map_or((None, None), |(c, p)| (Some(c), Some(p)));
        ChildSetup {
            cgroup: procs,
            inherit: Some(filter),
            ..ChildSetup::default()
        }
        .install(&mut command);
        Ok(ConfinedCommand {
            command,
            lease: ConfinementLease::holding((cgroup, guards.masks)),
        })
    }
}

/// The canonical paths of the roots that exist, parents first. A missing root is skipped (a
/// command cannot write there anyway).
pub(crate) fn existing(roots: &[PathBuf]) -> Result<Vec<PathBuf>, ConfinementError> {
    let mut found = Vec::new();
    for root in roots {
        match std::fs::canonicalize(root) {
            Ok(path) => found.push(path),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => {
                return Err(ConfinementError::new(format!(
                    "cannot resolve the workspace root {}: {err}",
                    root.display()
                )));
            }
        }
    }
    found.sort_by_key(|path| path.components().count());
    found.dedup();
    Ok(found)
}

/// A memory file holding `bytes`, positioned at the start, closed on exec unless the child
/// clears the flag (only the bwrap child does).
fn memfd_with(bytes: &[u8]) -> Result<OwnedFd, ConfinementError> {
    let fail = |err: std::io::Error| {
        ConfinementError::new(format!(
            "cannot hand the seccomp filter to bubblewrap: {err}"
        ))
    };
    let fd = rustix::fs::memfd_create(c"kun-seccomp", rustix::fs::MemfdFlags::CLOEXEC)
        .map_err(|errno| fail(errno.into()))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes).map_err(fail)?;
    file.seek(SeekFrom::Start(0)).map_err(fail)?;
    Ok(OwnedFd::from(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_keep_their_order() {
        let args = [OsString::from("-c"), OsString::from("true")];
        let plan = BwrapPlan {
            writable: vec![PathBuf::from("/tmp/ws")],
            proc_covers: vec![PathBuf::from("/proc/sys")],
            read_only: vec![PathBuf::from("/tmp/ws/.git")],
            network: NetworkAccess::Disabled,
            seccomp_fd: 7,
            cwd: Path::new("/tmp/ws/sub"),
            program: OsStr::new("/bin/sh"),
            args: &args,
        };
        let shown: Vec<String> = arguments(&plan)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            shown.join(" "),
            "--new-session --die-with-parent --unshare-user --unshare-pid --unshare-ipc \
             --unshare-net --cap-drop ALL --ro-bind / / --dev /dev --proc /proc \
             --ro-bind /proc/sys /proc/sys --tmpfs /tmp \
             --bind /tmp/ws /tmp/ws --ro-bind /tmp/ws/.git /tmp/ws/.git --seccomp 7 \
             --chdir /tmp/ws/sub -- /bin/sh -c true"
        );
        let online = BwrapPlan {
            network: NetworkAccess::Enabled,
            ..plan
        };
        assert!(
            !arguments(&online).contains(&OsString::from("--unshare-net")),
            "the network stays shared when enabled"
        );
    }
}
