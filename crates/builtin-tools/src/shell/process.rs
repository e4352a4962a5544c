//! Spawning and supervising child processes: shell detection, the command spec (environment
//! by allow-list, confinement scope), timeouts and aborts.
//!
//! Invariants every command tool relies on:
//! * every child is built by [`CommandConfinement::command`] from a [`CommandSpec`]: a new
//!   session and process group, stdin closed, exactly the allow-listed environment
//!   ([`kun_ports::process::EnvAllowList`]); a command it cannot confine is not spawned;
//! * when [`Running::drive`] returns, the whole group has been sent SIGKILL — after a normal
//!   exit too, so a `sleep 60 &` left behind does not outlive the call — and the leader has been
//!   reaped; if the future is dropped early, the [`GroupGuard`] kills the group instead; the
//!   confinement's lease (its cgroup: processes that left the group too) is dropped after that.

use super::ShellConfig;
use crate::Failure;
use kun_ports::process::{GroupGuard, ProcessGroup};
use kun_ports::{
    AbortSignal, CommandConfinement, CommandSpec, ConfinedCommand, ConfinementLease,
    ConfinementScope, ErrorCode, FileSystemScope, NetworkAccess, SandboxMode, ToolTurn,
};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, ChildStdout};

/// How long to keep reading after the group was killed (output still in the pipes, or a
/// process that escaped the group and holds a pipe open).
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for a killed leader to be reaped.
const REAP_GRACE: Duration = Duration::from_secs(5);

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

/// `shell -c script` in the primary workspace root, with the allow-listed environment and the
/// workspace scope.
pub(crate) fn shell_spec(script: &str, turn: &ToolTurn<'_>, config: &ShellConfig) -> CommandSpec {
    CommandSpec::new(
        &Shell::detect().path,
        turn.primary_root(),
        config.env.from_current_process(),
        workspace_scope(turn, config.network),
    )
    .args(["-c", script])
}

/// The confinement scope of a workspace command: the roots writable (no confinement under
/// danger-full-access).
pub(crate) fn workspace_scope(turn: &ToolTurn<'_>, network: NetworkAccess) -> ConfinementScope {
    if turn.sandbox == SandboxMode::DangerFullAccess {
        return ConfinementScope::unrestricted();
    }
    ConfinementScope {
        files: FileSystemScope::Workspace(turn.workspace_roots.to_vec()),
        network,
    }
}

/// The confinement scope of a read-only command: `roots` readable, nothing writable, no
/// network.
pub(crate) fn read_only_scope(roots: &[PathBuf]) -> ConfinementScope {
    ConfinementScope::read_only(roots.to_vec())
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

/// Confines and spawns `spec`.
///
/// # Errors
/// `sandbox_command_blocked` when it cannot be confined (it is then not run); a plain failure
/// with `spawn_error` when it cannot be started.
pub(crate) fn spawn(
    spec: &CommandSpec,
    confinement: &dyn CommandConfinement,
) -> Result<Running, Failure> {
    let ConfinedCommand { command, lease } = confinement.command(spec).map_err(|err| {
        Failure::coded(
            ErrorCode::SandboxCommandBlocked,
            format!("{err}; the command was not run"),
        )
    })?;
    let program = spec.program.to_string_lossy().into_owned();
    let mut command = tokio::process::Command::from(command);
    command.kill_on_drop(true);
    let started = Instant::now();
    let child = command.spawn().map_err(|err| {
        Failure::new(format!("could not start `{program}`: {err}"))
            .with("spawn_error", err.to_string())
    })?;
    let guard = GroupGuard::for_leader(child.id());
    Ok(Running {
        child,
        guard,
        lease,
        started,
    })
}

/// A spawned child, its group and the confinement's lease. Dropped in this order: the leader
/// (killed on drop), the group, then the lease (what is left in the cgroup).
#[derive(Debug)]
pub(crate) struct Running {
    child: Child,
    guard: GroupGuard,
    lease: ConfinementLease,
    started: Instant,
}

impl Running {
    /// The child's process group.
    pub(crate) fn group(&self) -> Option<ProcessGroup> {
        self.guard.group()
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
        self.guard.kill();
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
        let duration = self.started.elapsed();
        drop(self.lease);
        Finished { ending, duration }
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
