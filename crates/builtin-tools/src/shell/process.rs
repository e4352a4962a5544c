//! Spawning and supervising child processes: shell detection, the environment scrub, process
//! groups, confinement, timeouts and aborts.
//!
//! Invariants every command tool relies on:
//! * a child runs in its own process group (`process_group(0)`), with stdin closed and the
//!   secret-looking variables removed from its environment;
//! * [`CommandConfinement::confine`] runs on every command before it is spawned, and a command
//!   it cannot confine is not spawned;
//! * when [`Running::drive`] returns, the whole group has been sent SIGKILL — after a normal
//!   exit too, so a `sleep 60 &` left behind does not outlive the call — and the leader has been
//!   reaped; if the future is dropped early, [`GroupGuard`] kills the group instead.
//!
//! The group is killed by its number (the leader's pid). After a normal exit the leader is
//! reaped first, so in theory the number could be reused; Linux does not reuse a pid while a
//! process group of that number still has members, and an empty group only gets ESRCH.

use crate::Failure;
use kun_ports::{
    AbortSignal, CommandConfinement, ConfinementScope, ErrorCode, SandboxMode, ToolTurn,
};
use rustix::process::{Pid, Signal, kill_process_group};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, ChildStdout};

/// How long to keep reading after the group was killed (output still in the pipes, or a
/// process that escaped the group and holds a pipe open).
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for a killed leader to be reaped.
const REAP_GRACE: Duration = Duration::from_secs(5);
/// Suffixes (compared case-insensitively) of variables never passed to a child.
const SECRET_SUFFIXES: [&str; 4] = ["_TOKEN", "_KEY", "_SECRET", "_PASSWORD"];

/// Whether an environment variable name looks like a secret (`*_TOKEN`, `*_KEY`, `*_SECRET`,
/// `*_PASSWORD`, any case).
#[must_use]
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_SUFFIXES.iter().any(|suffix| upper.ends_with(suffix))
}

/// Whether confined commands may reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NetworkAccess {
    /// No network (the default; SPEC §5: unshared unless enabled).
    #[default]
    Disabled,
    /// Network reachable.
    Enabled,
}

/// The shell that runs command lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shell {
    /// `bash` or `sh`.
    pub(crate) name: &'static str,
    /// Where it is.
    pub(crate) path: PathBuf,
}

impl Shell {
    /// `bash` from `PATH` when there is one, otherwise `/bin/sh`. Looked up once.
    pub(crate) fn detect() -> &'static Self {
        static SHELL: OnceLock<Shell> = OnceLock::new();
        SHELL.get_or_init(|| match find_on_path("bash") {
            Some(path) => Self { name: "bash", path },
            None => Self {
                name: "sh",
                path: PathBuf::from("/bin/sh"),
            },
        })
    }
}

/// An executable called `name` in one of the `PATH` directories.
pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            candidate
                .metadata()
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

/// `shell -c script` in `cwd`, prepared by [`prepare`].
pub(crate) fn shell_command(script: &str, cwd: &Path) -> Command {
    let mut command = Command::new(&Shell::detect().path);
    command.arg("-c").arg(script);
    prepare(&mut command, cwd);
    command
}

/// Sets what every child gets: `cwd`, stdin from /dev/null, piped stdout and stderr, its own
/// process group and an environment without secrets.
pub(crate) fn prepare(command: &mut Command, cwd: &Path) {
    command
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (name, _) in std::env::vars_os() {
        if is_secret_name(&name.to_string_lossy()) {
            command.env_remove(name);
        }
    }
}

/// The confinement scope of a workspace command: the roots writable (every path under
/// danger-full-access), each root's `.git` read-only.
pub(crate) fn workspace_scope(turn: &ToolTurn<'_>, network: NetworkAccess) -> ConfinementScope {
    if turn.sandbox == SandboxMode::DangerFullAccess {
        return ConfinementScope {
            writable_roots: vec![PathBuf::from("/")],
            read_only_paths: Vec::new(),
            network: true,
        };
    }
    ConfinementScope {
        writable_roots: turn.workspace_roots.to_vec(),
        read_only_paths: turn
            .workspace_roots
            .iter()
            .map(|root| root.join(".git"))
            .filter(|git| git.exists())
            .collect(),
        network: network == NetworkAccess::Enabled,
    }
}

/// The confinement scope of a read-only command: nothing writable, no network.
pub(crate) fn read_only_scope() -> ConfinementScope {
    ConfinementScope {
        writable_roots: Vec::new(),
        read_only_paths: Vec::new(),
        network: false,
    }
}

/// A process group that can be killed as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcessGroup(Pid);

impl ProcessGroup {
    /// The group led by `pid`; `None` for pids that would address more than one group.
    fn led_by(pid: u32) -> Option<Self> {
        let raw = i32::try_from(pid).ok().filter(|raw| *raw > 1)?;
        Pid::from_raw(raw).map(Self)
    }

    /// Sends SIGKILL to every process in the group (a group that is already gone is fine).
    pub(crate) fn kill(self) {
        if let Err(err) = kill_process_group(self.0, Signal::KILL)
            && err != rustix::io::Errno::SRCH
        {
            tracing::warn!(pgid = self.0.as_raw_nonzero().get(), %err, "could not kill a process group");
        }
    }
}

/// Kills its group when dropped, unless disarmed.
#[derive(Debug)]
pub(crate) struct GroupGuard(Option<ProcessGroup>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(group) = self.0.take() {
            group.kill();
        }
    }
}

/// Which pipe a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// How a supervised child ended.
#[derive(Debug)]
pub(crate) enum Ending {
    /// It exited by itself (leftovers in its group were killed afterwards).
    Exited(ExitStatus),
    /// The timeout passed; the group was killed.
    TimedOut,
    /// The stop signal fired; the group was killed.
    Aborted,
    /// Waiting for it failed; the group was killed.
    Lost(String),
}

impl Ending {
    /// The shell-style exit code: the code, or 128 + signal when a signal ended it.
    pub(crate) fn exit_code(&self) -> Option<i32> {
        match self {
            Self::Exited(status) => Some(
                status
                    .code()
                    .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
            ),
            Self::TimedOut | Self::Aborted | Self::Lost(_) => None,
        }
    }
}

/// What [`Running::drive`] returns.
#[derive(Debug)]
pub(crate) struct Finished {
    /// How it ended.
    pub(crate) ending: Ending,
    /// From spawn to the end of the drain.
    pub(crate) duration: Duration,
}

/// Confines and spawns `command`.
///
/// # Errors
/// `sandbox_command_blocked` when it cannot be confined (it is then not run); a plain failure
/// with `spawn_error` when it cannot be started.
pub(crate) fn spawn(
    mut command: Command,
    confinement: &dyn CommandConfinement,
    scope: &ConfinementScope,
) -> Result<Running, Failure> {
    confinement.confine(&mut command, scope).map_err(|err| {
        Failure::coded(
            ErrorCode::SandboxCommandBlocked,
            format!("{err}; the command was not run"),
        )
    })?;
    let program = command.get_program().to_string_lossy().into_owned();
    let mut command = tokio::process::Command::from(command);
    command.kill_on_drop(true);
    let started = Instant::now();
    let child = command.spawn().map_err(|err| {
        Failure::new(format!("could not start `{program}`: {err}"))
            .with("spawn_error", err.to_string())
    })?;
    let guard = GroupGuard(child.id().and_then(ProcessGroup::led_by));
    Ok(Running {
        child,
        guard,
        started,
    })
}

/// A spawned child and its group.
#[derive(Debug)]
pub(crate) struct Running {
    child: Child,
    guard: GroupGuard,
    started: Instant,
}

impl Running {
    /// The child's process group.
    pub(crate) fn group(&self) -> Option<ProcessGroup> {
        self.guard.0
    }

    /// Feeds the child's output to `sink` until it exits, `timeout` passes or `stop` fires;
    /// then kills the group, drains the pipes briefly and reaps the child.
    pub(crate) async fn drive(
        mut self,
        timeout: Duration,
        stop: &AbortSignal,
        mut sink: impl FnMut(Stream, &[u8]),
    ) -> Finished {
        let mut pipes = Pipes::new(self.child.stdout.take(), self.child.stderr.take());
        let ending = {
            let deadline = tokio::time::sleep(timeout);
            let aborted = stop.aborted();
            tokio::pin!(deadline, aborted);
            loop {
                tokio::select! {
                    () = &mut aborted => break Ending::Aborted,
                    () = &mut deadline => break Ending::TimedOut,
                    status = self.child.wait() => break match status {
                        Ok(status) => Ending::Exited(status),
                        Err(err) => Ending::Lost(err.to_string()),
                    },
                    () = pipes.read_into(&mut sink), if pipes.is_open() => {}
                }
            }
        };
        if let Some(group) = self.guard.0.take() {
            group.kill();
        }
        let grace = tokio::time::sleep(DRAIN_GRACE);
        tokio::pin!(grace);
        while pipes.is_open() {
            tokio::select! {
                () = &mut grace => break,
                () = pipes.read_into(&mut sink) => {}
            }
        }
        if !matches!(ending, Ending::Exited(_)) {
            // SIGKILL was sent; reaping takes a moment. kill_on_drop covers the rare failure.
            let _reaped = tokio::time::timeout(REAP_GRACE, self.child.wait()).await;
        }
        Finished {
            ending,
            duration: self.started.elapsed(),
        }
    }
}

/// The child's two output pipes, read as chunks arrive.
struct Pipes {
    out: Option<ChildStdout>,
    err: Option<ChildStderr>,
    out_buf: Vec<u8>,
    err_buf: Vec<u8>,
}

/// One completed read.
enum Read {
    Out(std::io::Result<usize>),
    Err(std::io::Result<usize>),
    Closed,
}

impl Pipes {
    fn new(out: Option<ChildStdout>, err: Option<ChildStderr>) -> Self {
        Self {
            out,
            err,
            out_buf: vec![0; 16 * 1024],
            err_buf: vec![0; 16 * 1024],
        }
    }

    fn is_open(&self) -> bool {
        self.out.is_some() || self.err.is_some()
    }

    /// Reads one chunk from whichever pipe has data first; a pipe at EOF (or failing) closes.
    /// Cancel-safe: a dropped read has consumed nothing.
    async fn read_into(&mut self, sink: &mut impl FnMut(Stream, &[u8])) {
        let read = tokio::select! {
            n = read_some(self.out.as_mut(), &mut self.out_buf), if self.out.is_some() => Read::Out(n),
            n = read_some(self.err.as_mut(), &mut self.err_buf), if self.err.is_some() => Read::Err(n),
            else => Read::Closed,
        };
        match read {
            Read::Out(Ok(n)) if n > 0 => sink(Stream::Stdout, &self.out_buf[..n]),
            Read::Out(_) => self.out = None,
            Read::Err(Ok(n)) if n > 0 => sink(Stream::Stderr, &self.err_buf[..n]),
            Read::Err(_) => self.err = None,
            Read::Closed => {}
        }
    }
}

async fn read_some<R: tokio::io::AsyncRead + Unpin>(
    pipe: Option<&mut R>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for name in [
            "FOO_TOKEN",
            "x_key",
            "DB_PASSWORD",
            "Api_Secret",
            "AWS_SECRET_ACCESS_KEY",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "KEY",
            "TOKENIZER",
            "MY_KEYS",
            "SECRET_PLACE",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn no_group_for_pids_that_address_many() {
        assert_eq!(ProcessGroup::led_by(0), None);
        assert_eq!(ProcessGroup::led_by(1), None);
        assert!(ProcessGroup::led_by(4242).is_some());
        assert_eq!(ProcessGroup::led_by(u32::MAX), None);
    }
}
