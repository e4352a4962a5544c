//! `background_shell`: start long-running commands (servers, watchers, slow builds) and check
//! on them later.
//!
//! Invariants:
//! * jobs belong to the thread that started them; other threads cannot see or kill them;
//! * at most [`BackgroundLimits::max_live_per_thread`] jobs run per thread and
//!   [`BackgroundLimits::max_live_total`] in all; finished jobs are kept for reading, the
//!   oldest dropped beyond [`BackgroundLimits::max_finished_per_thread`];
//! * each job's output goes through its own accumulator (bounded tail, spill file);
//! * `kill`, the job timeout, and dropping the tool kill the job's whole process group.

use super::ShellConfig;
use super::escalation::{SandboxArg, check_justification};
use super::process::{self, Ending, ProcessGroup, Stream};
use super::scope::command_approval;
use crate::output::{FullText, OutputAccumulator, StreamEnd, truncate_tail};
use crate::{Failure, Outcome, OutputLimits, finish, parse_args, schema_for};
use async_trait::async_trait;
use kun_ports::{
    AbortSignal, CommandApproval, CommandConfinement, CommandRunner, CommandSafety, SideEffect,
    Tool, ToolContext, ToolError, ToolHostContext, ToolKind, ToolPolicy, ToolResult, ToolSpec,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
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
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Action {
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
struct BackgroundArgs {
    /// start, list, read or kill.
    action: Action,
    /// For start: the command line to run with `bash -c` in the workspace root.
    command: Option<String>,
    /// For read and kill: the job id returned by start (e.g. `bg-1`).
    id: Option<String>,
    /// For read: return at most this many of the newest lines.
    tail_lines: Option<usize>,
    /// For start: `confined` (default) runs the command in the sandbox; `escalated` runs it
    /// outside, with full access to this machine, after the user approves. Use it only after
    /// the same command failed because of the sandbox.
    #[serde(default)]
    sandbox: SandboxArg,
    /// For start with `sandbox: "escalated"`: one sentence for the user on why the command
    /// must run outside the sandbox.
    justification: Option<String>,
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
    fn name(&self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Exited(_) => "exited",
            Self::Killed => "killed",
            Self::TimedOut => "timed_out",
            Self::Lost(_) => "lost",
        }
    }

    fn describe(&self, into: &mut Map<String, Value>) {
        into.insert("status".into(), json!(self.name()));
        match self {
            Self::Exited(code) => {
                into.insert("exit_code".into(), json!(code));
            }
            Self::Lost(err) => {
                into.insert("error".into(), json!(err));
            }
            Self::Running | Self::Killed | Self::TimedOut => {}
        }
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
        let spec = ToolSpec::new(
            "background_shell",
            description,
            schema_for::<BackgroundArgs>(),
        )
        .with_kind(ToolKind::CommandExecution)
        .with_command_runner(CommandRunner::Confinement)
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

    async fn run(&self, arguments: Value, ctx: &ToolContext<'_>) -> Outcome {
        let args: BackgroundArgs = parse_args("background_shell", arguments)?;
        let thread = ctx.turn.thread_id;
        tracing::debug!(sandbox = ?args.sandbox, "background_shell");
        match args.action {
            Action::Start => self.start(args.command.as_deref(), ctx),
            Action::List => Ok(self.list(thread)),
            Action::Read => self.read(thread, args.id.as_deref(), args.tail_lines),
            Action::Kill => self.kill(thread, args.id.as_deref()).await,
        }
    }

    fn start(&self, command: Option<&str>, ctx: &ToolContext<'_>) -> Outcome {
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
        let shell_command = process::shell_command(command, ctx.turn.primary_root());
        let scope = process::workspace_scope(&ctx.turn, self.config.network);
        let running = process::spawn(shell_command, self.confinement.as_ref(), &scope)?;
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
        Ok(json!({
            "id": job_id(number),
            "command": command,
            "status": "running",
        }))
    }

    fn list(&self, thread: &str) -> Value {
        let jobs = lock(&self.jobs);
        let listed: Vec<Value> = jobs
            .by_thread
            .get(thread)
            .into_iter()
            .flatten()
            .map(|(number, job)| {
                let mut entry = Map::new();
                entry.insert("id".into(), json!(job_id(*number)));
                entry.insert("command".into(), json!(job.command));
                job.status.borrow().describe(&mut entry);
                entry.insert(
                    "output_bytes".into(),
                    json!(lock(&job.output).total_bytes()),
                );
                entry.insert(
                    "unread_bytes".into(),
                    json!(lock(&job.output).total_bytes() - job.read_offset),
                );
                entry.insert(
                    "running_seconds".into(),
                    json!(job.started.elapsed().as_secs()),
                );
                Value::Object(entry)
            })
            .collect();
        json!({ "jobs": listed })
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

    fn read(&self, thread: &str, id: Option<&str>, tail_lines: Option<usize>) -> Outcome {
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
        let mut result = Map::new();
        result.insert("id".into(), json!(job_id(number)));
        status.describe(&mut result);
        result.insert("output".into(), json!(cut.content));
        if new.skipped_bytes > 0 {
            result.insert("skipped_bytes".into(), json!(new.skipped_bytes));
        }
        let path = output.full_output_path().map(std::path::Path::to_path_buf);
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
            result.insert("notice".into(), json!(notice));
        }
        if let Some(path) = path {
            result.insert("full_output_path".into(), json!(path.display().to_string()));
        }
        Ok(Value::Object(result))
    }

    async fn kill(&self, thread: &str, id: Option<&str>) -> Outcome {
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
        let mut result = Map::new();
        result.insert("id".into(), json!(job_id(number)));
        status.borrow().describe(&mut result);
        Ok(Value::Object(result))
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
impl Tool for BackgroundShellTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// An escalated start must carry a justification (checked before anyone is asked).
    fn explicit_approval(&self, arguments: &Value, _ctx: &ToolHostContext) -> Result<bool, String> {
        match serde_json::from_value::<BackgroundArgs>(arguments.clone()) {
            Ok(args) if matches!(args.action, Action::Start) => {
                check_justification(args.sandbox, args.justification.as_deref()).map(|()| false)
            }
            // Other actions start nothing; bad arguments are reported by the run.
            Ok(_) | Err(_) => Ok(false),
        }
    }

    /// For start: the command's grant keys, safety and sandbox request (see
    /// [`command_approval`]); for list and read (which only read): the action, known safe;
    /// for kill: the action.
    fn approval_scope(&self, arguments: &Value, ctx: &ToolHostContext) -> Option<CommandApproval> {
        let args: BackgroundArgs = serde_json::from_value(arguments.clone()).ok()?;
        Some(match args.action {
            Action::Start => command_approval(
                args.command.as_deref()?,
                &ctx.workspace_roots,
                args.sandbox.into(),
                args.justification.as_deref(),
            ),
            Action::List => CommandApproval::action("list", CommandSafety::KnownSafe),
            Action::Read => CommandApproval::action("read", CommandSafety::KnownSafe),
            Action::Kill => CommandApproval::action("kill", CommandSafety::NotKnownSafe),
        })
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        Ok(finish(self.run(arguments, &ctx).await))
    }
}
