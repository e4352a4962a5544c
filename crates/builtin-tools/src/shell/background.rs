//! `background_shell`: start long-running commands (servers, watchers, slow builds) and check
//! on them later.
//!
//! Invariants:
//! * jobs belong to the thread that started them; other threads cannot see or kill them;
//! * at most [`BackgroundLimits::max_live_per_thread`] jobs run per thread and
//!   [`BackgroundLimits::max_live_total`] in all; finished jobs are kept for reading, the
//!   oldest dropped beyond [`BackgroundLimits::max_finished_per_thread`];
//! * each job's output goes through its own accumulator (bounded tail, spill file);
//! * `kill`, the job timeout, and dropping the tool kill the job's whole process group;
//! * `list` and `read` run nothing and change nothing: they need no approval
//!   ([`CallApproval::NotNeeded`]); `start` and `kill` go through the approval gate.
//!
//! What the model reads, per action:
//!
//! | action | rendering |
//! |---|---|
//! | start | `started bg-1: npm run dev` |
//! | list | one line per job: `bg-1 running, 340 bytes unread: npm run dev` |
//! | read | the new output (after a truncation notice), then `bg-1 running` / `bg-1 exited with code 0` |
//! | kill | `bg-1 killed` |

use super::ShellConfig;
use super::process::{self, Ending, Stream};
use crate::output::{FullText, OutputAccumulator, StreamEnd, truncate_tail};
use crate::{Failure, OutputLimits};
use async_trait::async_trait;
use kun_ports::process::ProcessGroup;
use kun_ports::{
    AbortSignal, CallApproval, CommandConfinement, SideEffect, ToolContext, ToolKind, ToolPolicy,
    ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long `kill` waits for a killed job to be reaped before answering.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Bounds on background jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackgroundLimits {
    /// Running jobs per thread (default 8).
    pub max_live_per_thread: usize,
    /// Running jobs across all threads (default 32).
    pub max_live_total: usize,
    /// Finished jobs kept per thread for reading (default 16).
    pub max_finished_per_thread: usize,
    /// A job is killed after this long (default 24 h).
    pub timeout: Duration,
}

impl Default for BackgroundLimits {
    fn default() -> Self {
        Self {
            max_live_per_thread: 8,
            max_live_total: 32,
            max_finished_per_thread: 16,
            timeout: Duration::from_secs(86_400),
        }
    }
}

/// What to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Start `command` in the background; returns its id.
    Start,
    /// List this thread's jobs.
    List,
    /// Output of job `id` since the last read, and its status.
    Read,
    /// Kill job `id` and everything it started.
    Kill,
}

/// The arguments of `background_shell`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundArgs {
    /// start, list, read or kill.
    action: Action,
    /// For start: the command line to run with `bash -c` in the workspace root.
    command: Option<String>,
    /// For read and kill: the job id returned by start (e.g. `bg-1`).
    id: Option<String>,
    /// For read: return at most this many of the newest lines.
    tail_lines: Option<usize>,
}

/// A job's state.
#[derive(Debug, Clone, PartialEq, Eq)]
enum JobStatus {
    Running,
    Exited(i32),
    Killed,
    TimedOut,
    Lost(String),
}

impl JobStatus {
    fn state(&self) -> JobState {
        let (status, exit_code, error) = match self {
            Self::Running => (StatusName::Running, None, None),
            Self::Exited(code) => (StatusName::Exited, Some(*code), None),
            Self::Killed => (StatusName::Killed, None, None),
            Self::TimedOut => (StatusName::TimedOut, None, None),
            Self::Lost(err) => (StatusName::Lost, None, Some(err.clone())),
        };
        JobState {
            status,
            exit_code,
            error,
        }
    }
}

/// A job's state, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatusName {
    /// Still running.
    Running,
    /// Exited by itself (see `exit_code`).
    Exited,
    /// Killed by `kill` (or when the tool was dropped).
    Killed,
    /// Killed by the job timeout.
    TimedOut,
    /// The supervisor lost track of it (see `error`); it was killed.
    Lost,
}

/// A job's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobState {
    /// The state.
    pub status: StatusName,
    /// The exit code, once it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Why it was lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl JobState {
    /// `running`, `exited with code 0`, `killed`, `timed out and was killed`, `lost: …`.
    fn describe(&self) -> String {
        match (self.status, self.exit_code, &self.error) {
            (StatusName::Running, _, _) => "running".to_owned(),
            (StatusName::Exited, Some(code), _) => format!("exited with code {code}"),
            (StatusName::Exited, None, _) => "exited".to_owned(),
            (StatusName::Killed, _, _) => "killed".to_owned(),
            (StatusName::TimedOut, _, _) => "timed out and was killed".to_owned(),
            (StatusName::Lost, _, error) => {
                format!("lost ({})", error.as_deref().unwrap_or("no reason"))
            }
        }
    }
}

/// What `background_shell` returns, by action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum BackgroundOutput {
    /// A job was started.
    Start(JobStarted),
    /// This thread's jobs.
    List(JobList),
    /// A job's new output and state.
    Read(JobOutput),
    /// A job was killed.
    Kill(JobKilled),
}

/// A started job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobStarted {
    /// Its id, for read and kill.
    pub id: String,
    /// The command line.
    pub command: String,
    /// Its state (running).
    #[serde(flatten)]
    pub state: JobState,
}

/// This thread's jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobList {
    /// The jobs, oldest first.
    pub jobs: Vec<JobSummary>,
}

/// One job in a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobSummary {
    /// Its id.
    pub id: String,
    /// The command line.
    pub command: String,
    /// Its state.
    #[serde(flatten)]
    pub state: JobState,
    /// Bytes it printed in all.
    pub output_bytes: u64,
    /// Bytes not yet read.
    pub unread_bytes: u64,
    /// Seconds since it started.
    pub running_seconds: u64,
}

/// A job's new output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobOutput {
    /// Its id.
    pub id: String,
    /// Its state.
    #[serde(flatten)]
    pub state: JobState,
    /// The output since the last read (its last lines when longer than the limits).
    pub output: String,
    /// Earlier bytes that were not kept in memory (see `full_output_path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped_bytes: Option<u64>,
    /// What was cut and where the whole output is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// The file holding the whole output, once it outgrew the limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
}

/// A killed job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobKilled {
    /// Its id.
    pub id: String,
    /// Its state once reaped.
    #[serde(flatten)]
    pub state: JobState,
}

/// What the model reads (see the module docs).
fn render(output: &BackgroundOutput) -> String {
    match output {
        BackgroundOutput::Start(job) => format!("started {}: {}", job.id, job.command),
        BackgroundOutput::List(list) if list.jobs.is_empty() => {
            "no background jobs in this thread".to_owned()
        }
        BackgroundOutput::List(list) => {
            let mut text = String::new();
            for job in &list.jobs {
                if !text.is_empty() {
                    text.push('\n');
                }
                let _ = write!(
                    text,
                    "{} {}, {} bytes unread: {}",
                    job.id,
                    job.state.describe(),
                    job.unread_bytes,
                    job.command
                );
            }
            text
        }
        BackgroundOutput::Read(read) => {
            let mut text = String::new();
            if let Some(notice) = &read.notice {
                text.push_str(notice);
                text.push('\n');
            }
            let new = read.output.trim_end_matches('\n');
            text.push_str(if new.is_empty() {
                "(no new output)"
            } else {
                new
            });
            let _ = write!(text, "\n{} {}", read.id, read.state.describe());
            text
        }
        BackgroundOutput::Kill(job) => format!("{} {}", job.id, job.state.describe()),
    }
}

/// One background job.
struct Job {
    command: String,
    group: Option<ProcessGroup>,
    stop: AbortSignal,
    status: watch::Receiver<JobStatus>,
    output: Arc<Mutex<OutputAccumulator>>,
    read_offset: u64,
    started: Instant,
}

impl Job {
    fn is_running(&self) -> bool {
        *self.status.borrow() == JobStatus::Running
    }

    /// Kills the group and tells the supervising task to stop.
    fn kill(&self) {
        if self.is_running()
            && let Some(group) = self.group
        {
            group.kill();
        }
        self.stop.abort();
    }
}

/// Every thread's jobs, by number.
#[derive(Default)]
struct Jobs {
    next_id: u64,
    by_thread: HashMap<String, BTreeMap<u64, Job>>,
}

impl Jobs {
    fn live_total(&self) -> usize {
        self.by_thread
            .values()
            .flat_map(BTreeMap::values)
            .filter(|job| job.is_running())
            .count()
    }
}

/// The `background_shell` tool (command_execution, on-request).
pub struct BackgroundShellTool {
    spec: ToolSpec,
    config: ShellConfig,
    limits: BackgroundLimits,
    confinement: Arc<dyn CommandConfinement>,
    jobs: Mutex<Jobs>,
}

impl fmt::Debug for BackgroundShellTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackgroundShellTool")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded maps and accumulators stay consistent even if a holder panicked.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn job_id(number: u64) -> String {
    format!("bg-{number}")
}

impl BackgroundShellTool {
    /// A `background_shell` tool with the default configuration and limits.
    #[must_use]
    pub fn new(confinement: Arc<dyn CommandConfinement>) -> Self {
        Self::with_config(
            confinement,
            ShellConfig::default(),
            BackgroundLimits::default(),
        )
    }

    /// A `background_shell` tool with `config` (its timeouts are not used: jobs run until
    /// `limits.timeout`) and `limits`.
    #[must_use]
    pub fn with_config(
        confinement: Arc<dyn CommandConfinement>,
        config: ShellConfig,
        limits: BackgroundLimits,
    ) -> Self {
        let description = format!(
            "Run long-lived commands (dev servers, watchers, slow builds) in the background with `bash -c` in \
             the workspace root. action=start with command returns an id; action=read with id returns the \
             output since your last read and the status; action=list shows this thread's jobs; \
             action=kill with id stops the job and everything it started. At most {live} jobs run at once; \
             a job is killed after {hours} h.",
            live = limits.max_live_per_thread,
            hours = limits.timeout.as_secs() / 3_600,
        );
        let spec =
            ToolSpec::typed::<BackgroundArgs, BackgroundOutput>("background_shell", description)
                .with_kind(ToolKind::CommandExecution)
                .with_policy(ToolPolicy::OnRequest)
                .with_side_effect(SideEffect::Unknown);
        Self {
            spec,
            config,
            limits,
            confinement,
            jobs: Mutex::new(Jobs::default()),
        }
    }

    async fn act(
        &self,
        args: BackgroundArgs,
        ctx: &ToolContext<'_>,
    ) -> Result<BackgroundOutput, Failure> {
        let thread = ctx.turn.thread_id;
        Ok(match args.action {
            Action::Start => BackgroundOutput::Start(self.start(args.command.as_deref(), ctx)?),
            Action::List => BackgroundOutput::List(self.list(thread)),
            Action::Read => {
                BackgroundOutput::Read(self.read(thread, args.id.as_deref(), args.tail_lines)?)
            }
            Action::Kill => BackgroundOutput::Kill(self.kill(thread, args.id.as_deref()).await?),
        })
    }

    fn start(&self, command: Option<&str>, ctx: &ToolContext<'_>) -> Result<JobStarted, Failure> {
        let command = command
            .filter(|c| !c.trim().is_empty())
            .ok_or_else(|| Failure::invalid("action=start needs a command to run"))?;
        let thread = ctx.turn.thread_id.to_owned();
        let mut jobs = lock(&self.jobs);
        let live_here = jobs
            .by_thread
            .get(&thread)
            .map_or(0, |map| map.values().filter(|j| j.is_running()).count());
        if live_here >= self.limits.max_live_per_thread
            || jobs.live_total() >= self.limits.max_live_total
        {
            return Err(Failure::new(format!(
                "too many background jobs are running ({live_here} in this thread, at most {}); kill one with \
                 action=kill before starting another",
                self.limits.max_live_per_thread
            )));
        }
        let spec = process::shell_spec(command, &ctx.turn, &self.config);
        let running = process::spawn(&spec, self.confinement.as_ref())?;
        let group = running.group();
        let output = Arc::new(Mutex::new(OutputAccumulator::with_spill(
            self.config.limits,
            self.config.spill.clone(),
        )));
        let stop = AbortSignal::new();
        let (status_tx, status_rx) = watch::channel(JobStatus::Running);
        let task_output = Arc::clone(&output);
        let task_stop = stop.clone();
        let timeout = self.limits.timeout;
        tokio::spawn(async move {
            let finished = running
                .drive(timeout, &task_stop, |_: Stream, chunk: &[u8]| {
                    lock(&task_output).push(chunk)
                })
                .await;
            let status = match finished.ending {
                Ending::Exited(_) => JobStatus::Exited(finished.ending.exit_code().unwrap_or(-1)),
                Ending::TimedOut => JobStatus::TimedOut,
                Ending::Aborted => JobStatus::Killed,
                Ending::Lost(err) => JobStatus::Lost(err),
            };
            // Nobody listening means the tool is gone; the status no longer matters.
            let _sent = status_tx.send(status);
        });
        jobs.next_id += 1;
        let number = jobs.next_id;
        let job = Job {
            command: command.to_owned(),
            group,
            stop,
            status: status_rx,
            output,
            read_offset: 0,
            started: Instant::now(),
        };
        let mine = jobs.by_thread.entry(thread).or_default();
        mine.insert(number, job);
        let finished: Vec<u64> = mine
            .iter()
            .filter(|(_, job)| !job.is_running())
            .map(|(n, _)| *n)
            .collect();
        let excess = finished
            .len()
            .saturating_sub(self.limits.max_finished_per_thread);
        for old in finished.into_iter().take(excess) {
            mine.remove(&old);
        }
        Ok(JobStarted {
            id: job_id(number),
            command: command.to_owned(),
            state: JobStatus::Running.state(),
        })
    }

    fn list(&self, thread: &str) -> JobList {
        let jobs = lock(&self.jobs);
        let jobs = jobs
            .by_thread
            .get(thread)
            .into_iter()
            .flatten()
            .map(|(number, job)| {
                let total = lock(&job.output).total_bytes();
                JobSummary {
                    id: job_id(*number),
                    command: job.command.clone(),
                    state: job.status.borrow().state(),
                    output_bytes: total,
                    unread_bytes: total.saturating_sub(job.read_offset),
                    running_seconds: job.started.elapsed().as_secs(),
                }
            })
            .collect();
        JobList { jobs }
    }

    fn find<'j>(
        jobs: &'j mut Jobs,
        thread: &str,
        id: Option<&str>,
    ) -> Result<(u64, &'j mut Job), Failure> {
        let id = id.ok_or_else(|| {
            Failure::invalid("this action needs the id of a job (from start or list)")
        })?;
        let unknown = || {
            Failure::invalid(format!(
                "there is no background job `{id}` in this thread; action=list shows the ids"
            ))
        };
        let number = id
            .strip_prefix("bg-")
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(unknown)?;
        let job = jobs
            .by_thread
            .get_mut(thread)
            .and_then(|map| map.get_mut(&number))
            .ok_or_else(unknown)?;
        Ok((number, job))
    }

    fn read(
        &self,
        thread: &str,
        id: Option<&str>,
        tail_lines: Option<usize>,
    ) -> Result<JobOutput, Failure> {
        let mut jobs = lock(&self.jobs);
        let (number, job) = Self::find(&mut jobs, thread, id)?;
        let status = job.status.borrow().clone();
        let end = if status == JobStatus::Running {
            StreamEnd::Open
        } else {
            StreamEnd::Closed
        };
        let mut output = lock(&job.output);
        let new = output.read_since(job.read_offset, end);
        job.read_offset = new.next_offset;
        let max_lines = tail_lines.map_or(self.config.limits.max_lines, |n| {
            n.min(self.config.limits.max_lines)
        });
        let cut = truncate_tail(
            &new.text,
            OutputLimits::new(max_lines, self.config.limits.max_bytes),
        );
        let path = output.full_output_path().map(std::path::Path::to_path_buf);
        let mut result = JobOutput {
            id: job_id(number),
            state: status.state(),
            output: cut.content.clone(),
            skipped_bytes: (new.skipped_bytes > 0).then_some(new.skipped_bytes),
            notice: None,
            full_output_path: path.as_ref().map(|p| p.display().to_string()),
        };
        if cut.is_truncated() || new.skipped_bytes > 0 {
            let full = path.as_deref().map_or(FullText::NotSaved, FullText::Saved);
            let notice = cut.notice(full).unwrap_or_else(|| match &path {
                Some(path) => format!(
                    "[{} earlier bytes were skipped; full output: {}]",
                    new.skipped_bytes,
                    path.display()
                ),
                None => format!(
                    "[{} earlier bytes were skipped and not kept]",
                    new.skipped_bytes
                ),
            });
            result.notice = Some(notice);
        }
        Ok(result)
    }

    async fn kill(&self, thread: &str, id: Option<&str>) -> Result<JobKilled, Failure> {
        let (number, mut status) = {
            let mut jobs = lock(&self.jobs);
            let (number, job) = Self::find(&mut jobs, thread, id)?;
            job.kill();
            (number, job.status.clone())
        };
        // Wait for the supervisor to reap the job, so the status is final.
        let settled =
            tokio::time::timeout(KILL_WAIT, status.wait_for(|s| *s != JobStatus::Running))
                .await
                .is_ok();
        if !settled {
            tracing::warn!(
                job = number,
                "a killed background job was not reaped in time"
            );
        }
        let state = status.borrow().state();
        Ok(JobKilled {
            id: job_id(number),
            state,
        })
    }
}

impl Drop for BackgroundShellTool {
    /// Kills every job of every thread.
    fn drop(&mut self) {
        let jobs = lock(&self.jobs);
        for job in jobs.by_thread.values().flat_map(BTreeMap::values) {
            job.kill();
        }
    }
}

#[async_trait]
impl TypedTool for BackgroundShellTool {
    type Args = BackgroundArgs;
    type Output = BackgroundOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &BackgroundOutput) -> String {
        render(output)
    }

    /// `list` and `read` run nothing: no approval.
    fn call_approval(&self, args: &BackgroundArgs) -> CallApproval {
        match args.action {
            Action::List | Action::Read => CallApproval::NotNeeded,
            Action::Start | Action::Kill => CallApproval::AsDeclared,
        }
    }

    /// `start <command prefix>` for start (`None` for compound commands), the action name
    /// otherwise.
    fn approval_scope(&self, args: &BackgroundArgs) -> Option<String> {
        match args.action {
            Action::Start => {
                let command = args.command.as_deref()?;
                super::command_scope(command).map(|scope| format!("start {scope}"))
            }
            Action::List => Some("list".to_owned()),
            Action::Read => Some("read".to_owned()),
            Action::Kill => Some("kill".to_owned()),
        }
    }

    async fn run(
        &self,
        args: BackgroundArgs,
        ctx: ToolContext<'_>,
    ) -> Result<BackgroundOutput, Failure> {
        self.act(args, &ctx).await
    }
}
