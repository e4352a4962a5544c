//! Running one hook command: `sh -c`, its own session and process group, a deadline, bounded
//! output.
//!
//! Invariants:
//! * The command runs in a new session ([`new_session`]), so its process group id is the
//!   shell's pid. When the shell exits, times out or the future is dropped, the whole group gets
//!   `SIGKILL` ([`GroupGuard`]), so nothing the hook started in its group outlives it.
//! * It keeps our whole environment, secrets included: hooks are the user's own programs,
//!   configured by the user (a workspace's hooks run only when the user trusts it), and they
//!   often need credentials (a notifier's token, a linter's registry login), as in Claude Code.
//!   The commands the model runs, language servers and MCP servers get an allow-list instead
//!   (see [`kun_ports::process`]).
//! * The shell itself is always reaped (awaited after the kill; `kill_on_drop` covers a
//!   dropped future).
//! * Reading stdout/stderr never holds the caller past the deadline plus [`DRAIN_GRACE`]: a
//!   process that escaped the group (`setsid`) and still holds a pipe open is abandoned, and
//!   what was captured so far is kept.
//! * Captured output is capped ([`STDOUT_CAP`], [`STDERR_CAP`]); the rest is read and dropped
//!   so the hook never blocks on a full pipe.
//!
//! The kill after a normal exit targets the group id of a reaped leader. A pid is only reused
//! as a group id if a new process takes that pid and makes itself a group leader in the few
//! microseconds between the reap and the kill; that window is accepted.

use kun_ports::process::{GroupGuard, new_session};
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::task::JoinHandle;

/// At most this much stdout is kept.
pub(crate) const STDOUT_CAP: usize = 1024 * 1024;
/// At most this much stderr is kept.
pub(crate) const STDERR_CAP: usize = 64 * 1024;
/// How long the pipes may stay open after the hook's group was killed.
pub(crate) const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How long reaping a killed shell may take before we stop waiting (it is `kill_on_drop`).
const REAP_GRACE: Duration = Duration::from_secs(5);

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

/// Output captured from one pipe.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Captured {
    /// The first bytes, up to the cap.
    pub(crate) bytes: Vec<u8>,
    /// Whether more was written than kept.
    pub(crate) truncated: bool,
}

impl Captured {
    /// The text, lossily decoded.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

/// A command that ran to an exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finished {
    pub(crate) exit: Exit,
    pub(crate) stdout: Captured,
    pub(crate) stderr: Captured,
}

/// Why a command produced no exit.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("could not start `sh`: {0}")]
    Spawn(std::io::Error),
    #[error("waiting for the hook failed: {0}")]
    Wait(std::io::Error),
    #[error("did not finish within {0:?}")]
    TimedOut(Duration),
}

/// The environment a hook sees: all of ours (see the module docs for why), with
/// `CLAUDE_PROJECT_DIR` and `KUN_PROJECT_DIR` set to the workspace root. Sorted by name.
pub(crate) fn hook_environment(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
    root: &Path,
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = vars
        .into_iter()
        .filter(|(name, _)| {
            let upper = name.to_string_lossy().to_ascii_uppercase();
            upper != "CLAUDE_PROJECT_DIR" && upper != "KUN_PROJECT_DIR"
        })
        .collect();
    env.push(("CLAUDE_PROJECT_DIR".into(), root.into()));
    env.push(("KUN_PROJECT_DIR".into(), root.into()));
    env.sort();
    env
}

/// Runs `sh -c command` in `cwd` with `input` on stdin, within `timeout`.
pub(crate) async fn run_shell(
    command: &str,
    cwd: &Path,
    input: Vec<u8>,
    timeout: Duration,
) -> Result<Finished, RunError> {
    let mut shell = Command::new("sh");
    shell
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env_clear()
        .envs(hook_environment(std::env::vars_os(), cwd))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    new_session(shell.as_std_mut());
    let mut child = shell.spawn().map_err(RunError::Spawn)?;
    let mut group = GroupGuard::for_leader(child.id());

    let stdout = Arc::new(Mutex::new(Captured::default()));
    let stderr = Arc::new(Mutex::new(Captured::default()));
    let mut readers = TaskSet::default();
    if let Some(pipe) = child.stdout.take() {
        readers.push(tokio::spawn(drain(pipe, Arc::clone(&stdout), STDOUT_CAP)));
    }
    if let Some(pipe) = child.stderr.take() {
        readers.push(tokio::spawn(drain(pipe, Arc::clone(&stderr), STDERR_CAP)));
    }
    let mut feeder = TaskSet::default();
    if let Some(mut pipe) = child.stdin.take() {
        // A hook that never reads stdin makes this fail with EPIPE: that is fine.
        feeder.push(tokio::spawn(async move {
            let _ = pipe.write_all(&input).await;
            let _ = pipe.shutdown().await;
        }));
    }

    let waited = tokio::time::timeout(timeout, child.wait()).await;
    group.kill();
    let status = match waited {
        Ok(Ok(status)) => status,
        Ok(Err(err)) => {
            let _ = tokio::time::timeout(REAP_GRACE, child.wait()).await;
            return Err(RunError::Wait(err));
        }
        Err(_) => {
            let _ = tokio::time::timeout(REAP_GRACE, child.wait()).await;
            return Err(RunError::TimedOut(timeout));
        }
    };
    readers.join_within(DRAIN_GRACE).await;
    let exit = status
        .code()
        .map_or_else(|| Exit::Signal(status.signal().unwrap_or(0)), Exit::Code);
    Ok(Finished {
        exit,
        stdout: take(&stdout),
        stderr: take(&stderr),
    })
}

fn take(shared: &Mutex<Captured>) -> Captured {
    std::mem::take(&mut *shared.lock().unwrap_or_else(PoisonError::into_inner))
}

/// Reads a pipe to its end, keeping at most `cap` bytes.
async fn drain(mut pipe: impl AsyncRead + Unpin, sink: Arc<Mutex<Captured>>, cap: usize) {
    let mut buffer = vec![0_u8; 16 * 1024];
    loop {
        let read = match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let mut captured = sink.lock().unwrap_or_else(PoisonError::into_inner);
        let room = cap.saturating_sub(captured.bytes.len());
        let kept = read.min(room);
        captured.bytes.extend_from_slice(&buffer[..kept]);
        if kept < read {
            captured.truncated = true;
        }
    }
}

/// Background tasks that are aborted when dropped.
#[derive(Default)]
struct TaskSet {
    tasks: Vec<JoinHandle<()>>,
}

impl TaskSet {
    fn push(&mut self, task: JoinHandle<()>) {
        self.tasks.push(task);
    }

    /// Waits for every task, but no longer than `grace` in total.
    async fn join_within(&mut self, grace: Duration) {
        let all = async {
            for task in &mut self.tasks {
                let _ = task.await;
            }
        };
        let _ = tokio::time::timeout(grace, all).await;
    }
}

impl Drop for TaskSet {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_keep_the_whole_environment_with_the_project_dirs_set() {
        let vars = [
            ("PATH", "/bin"),
            ("GITHUB_TOKEN", "t"),
            ("OPENAI_API_KEY", "k"),
            ("KEYBOARD", "us"),
            ("CLAUDE_PROJECT_DIR", "/elsewhere"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let env = hook_environment(vars, Path::new("/ws"));
        let names: Vec<String> = env
            .iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "CLAUDE_PROJECT_DIR",
                "GITHUB_TOKEN",
                "KEYBOARD",
                "KUN_PROJECT_DIR",
                "OPENAI_API_KEY",
                "PATH"
            ]
        );
        assert!(
            env.iter()
                .all(|(k, v)| !k.to_string_lossy().ends_with("PROJECT_DIR") || v == "/ws")
        );
    }

    #[tokio::test]
    async fn output_beyond_the_cap_is_dropped_and_marked() {
        let dir = tempfile::tempdir().unwrap();
        let done = run_shell(
            "head -c 3000000 /dev/zero",
            dir.path(),
            Vec::new(),
            Duration::from_secs(60),
        )
        .await
        .unwrap();
        assert_eq!(done.exit, Exit::Code(0));
        assert_eq!(done.stdout.bytes.len(), STDOUT_CAP);
        assert!(done.stdout.truncated);
    }

    #[tokio::test]
    async fn an_escaped_process_holding_stdout_does_not_hold_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        let started = std::time::Instant::now();
        let done = run_shell(
            "setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' &
             while [ ! -s escaped.pid ]; do sleep 0.05; done; echo done",
            dir.path(),
            Vec::new(),
            Duration::from_secs(60),
        )
        .await
        .unwrap();
        let elapsed = started.elapsed();
        let escaped = std::fs::read_to_string(dir.path().join("escaped.pid"))
            .ok()
            .and_then(|pid| pid.trim().parse::<i32>().ok())
            .and_then(rustix::process::Pid::from_raw);
        let escaped = escaped.expect("the escaped process wrote its pid");
        let _ = rustix::process::kill_process(escaped, rustix::process::Signal::KILL);
        assert_eq!(done.stdout.text().trim(), "done");
        assert!(
            elapsed < Duration::from_secs(20),
            "waited {elapsed:?} for a pipe held by a process outside the group"
        );
    }

    #[tokio::test]
    async fn a_hook_that_ignores_stdin_still_finishes() {
        let dir = tempfile::tempdir().unwrap();
        let done = run_shell(
            "echo ok",
            dir.path(),
            vec![b'x'; 1024 * 1024],
            Duration::from_secs(60),
        )
        .await
        .unwrap();
        assert_eq!(done.stdout.text().trim(), "ok");
    }
}
