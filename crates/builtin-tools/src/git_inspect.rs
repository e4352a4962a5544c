//! `git_inspect`: read-only views of the workspace's git repository — status, diff, log, show,
//! blame.
//!
//! Invariants:
//! * only the five read-only subcommands above are ever run, as
//!   `git --no-pager -c core.quotepath=false … <subcommand>` with `GIT_OPTIONAL_LOCKS=0`
//!   (no index refresh writes), no pager, no colour, no external diff or textconv programs and
//!   no fsmonitor hook;
//! * `rev` cannot inject options: it must not start with `-`, contain whitespace or control
//!   characters, and it is passed after `--end-of-options` (blame excepted, whose parser does
//!   not take it there); paths go after `--`, resolved by the sandbox and matched literally;
//! * the command is confined with a scope that writes nowhere;
//! * output keeps its head within the limits, with a notice saying how much was cut.

use crate::output::{FullText, KeptEnd, TruncationNotice, truncate_head};
use crate::shell::{Stream, read_only_scope, spawn};
use crate::{Failure, Outcome, OutputLimits, finish, parse_args, schema_for};
use async_trait::async_trait;
use kun_ports::process::EnvAllowList;
use kun_ports::{
    CommandConfinement, CommandSpec, ErrorCode, PathAccess, SideEffect, Tool, ToolContext,
    ToolError, ToolKind, ToolPolicy, ToolResult, ToolSpec,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Default and maximum number of commits for `log`.
const DEFAULT_LOG_LIMIT: usize = 20;
const MAX_LOG_LIMIT: usize = 500;
/// How much of stderr is kept for error messages.
const MAX_STDERR: usize = 4 * 1024;
/// Options that keep git from running programs or writing on a read-only call.
const GLOBAL_OPTIONS: &[&str] = &[
    "--no-pager",
    "-c",
    "core.quotepath=false",
    "-c",
    "color.ui=false",
    "-c",
    "core.fsmonitor=false",
];

/// What to inspect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum GitAction {
    /// Branch and changed files (`git status --short --branch`).
    Status,
    /// Unstaged changes, or staged ones with `staged`, or changes against `rev`.
    Diff,
    /// Recent commits (`limit`, default 20), optionally from `rev` and touching `path`.
    Log,
    /// One commit (`rev`, default HEAD) with its stat and patch.
    Show,
    /// Who last changed each line of `path` (at `rev`; the first `limit` lines when given).
    Blame,
}

impl GitAction {
    fn name(self) -> &'static str {
        match self {
            Self::Status => "status",
            Self::Diff => "diff",
            Self::Log => "log",
            Self::Show => "show",
            Self::Blame => "blame",
        }
    }
}

/// The arguments of `git_inspect`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GitArgs {
    /// status, diff, log, show or blame.
    action: GitAction,
    /// Limit to this file or directory (required for blame).
    path: Option<String>,
    /// A revision: commit, branch, tag or range such as `main..HEAD` (diff, log, show, blame).
    rev: Option<String>,
    /// log: how many commits (default 20, at most 500); blame: how many lines from the top.
    limit: Option<usize>,
    /// diff: show staged changes instead of unstaged ones.
    staged: Option<bool>,
}

/// How `git_inspect` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GitInspectConfig {
    /// Output limits (the head is kept): default 2,000 lines / 50 KiB.
    pub limits: OutputLimits,
    /// How long one git command may run (default 60 s).
    pub timeout: Duration,
}

impl Default for GitInspectConfig {
    fn default() -> Self {
        Self {
            limits: OutputLimits::default(),
            timeout: Duration::from_secs(60),
        }
    }
}

/// The `git_inspect` tool (tool_call, auto, read-only). Output:
/// `{action, command, output, truncated, notice?}`.
pub struct GitInspectTool {
    spec: ToolSpec,
    config: GitInspectConfig,
    confinement: Arc<dyn CommandConfinement>,
}

impl fmt::Debug for GitInspectTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GitInspectTool")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Checks `rev` for option injection and garbage.
fn validate_rev(rev: &str) -> Result<(), Failure> {
    if rev.is_empty() || rev.len() > 256 {
        return Err(Failure::invalid(
            "rev must be a revision name of 1 to 256 characters",
        ));
    }
    if rev.starts_with('-') {
        return Err(Failure::invalid(format!(
            "rev `{rev}` starts with `-`, which git would read as an option; pass a commit, branch, tag or range"
        )));
    }
    if rev.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Failure::invalid(format!(
            "rev `{rev}` contains whitespace or control characters"
        )));
    }
    Ok(())
}

/// The subcommand arguments for `args` (after the global options); `path` is already resolved.
fn subcommand(args: &GitArgs, path: Option<&str>) -> Result<Vec<String>, Failure> {
    let owned = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    if let Some(rev) = &args.rev {
        validate_rev(rev)?;
    }
    let rev_args = |default: Option<&str>| match args.rev.as_deref().or(default) {
        Some(rev) => vec!["--end-of-options".to_owned(), rev.to_owned()],
        None => Vec::new(),
    };
    let mut argv = match args.action {
        GitAction::Status => {
            if args.rev.is_some() {
                return Err(Failure::invalid(
                    "status takes no rev; use diff with rev to compare against a revision",
                ));
            }
            owned(&["status", "--short", "--branch"])
        }
        GitAction::Diff => {
            let mut argv = owned(&["diff", "--no-color", "--no-ext-diff", "--no-textconv"]);
            if args.staged == Some(true) {
                argv.push("--staged".to_owned());
            }
            argv.extend(rev_args(None));
            argv
        }
        GitAction::Log => {
            let limit = args
                .limit
                .unwrap_or(DEFAULT_LOG_LIMIT)
                .clamp(1, MAX_LOG_LIMIT);
            let mut argv = owned(&[
                "log",
                "--no-color",
                "--date=short",
                "--format=%h %ad %an: %s",
            ]);
            argv.push(format!("--max-count={limit}"));
            argv.extend(rev_args(None));
            argv
        }
        GitAction::Show => {
            let mut argv = owned(&[
                "show",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--stat",
                "--patch",
            ]);
            argv.extend(rev_args(Some("HEAD")));
            argv
        }
        GitAction::Blame => {
            if path.is_none() {
                return Err(Failure::invalid("blame needs the path of a file"));
            }
            let mut argv = owned(&["blame", "--date=short", "--no-textconv"]);
            if let Some(limit) = args.limit {
                argv.push(format!("-L1,+{}", limit.max(1)));
            }
            // blame's own argument parser takes `--end-of-options` for the end of revisions
            // too; the validated rev cannot start with `-`, so it goes in plainly.
            argv.extend(args.rev.clone());
            argv
        }
    };
    if let Some(path) = path {
        argv.push("--".to_owned());
        argv.push(path.to_owned());
    }
    Ok(argv)
}

/// Keeps the head of a stream and counts all of it.
#[derive(Debug, Default)]
struct Head {
    kept: Vec<u8>,
    cap: usize,
    total_bytes: u64,
    newlines: u64,
    last: Option<u8>,
}

impl Head {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            ..Self::default()
        }
    }

    fn push(&mut self, chunk: &[u8]) {
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
        self.total_bytes += chunk.len() as u64;
        self.newlines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        if let Some(&last) = chunk.last() {
            self.last = Some(last);
        }
    }

    fn total_lines(&self) -> u64 {
        match self.last {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }
}

impl GitInspectTool {
    /// A `git_inspect` tool with the default configuration.
    #[must_use]
    pub fn new(confinement: Arc<dyn CommandConfinement>) -> Self {
        Self::with_config(confinement, GitInspectConfig::default())
    }

    /// A `git_inspect` tool with `config`.
    #[must_use]
    pub fn with_config(confinement: Arc<dyn CommandConfinement>, config: GitInspectConfig) -> Self {
        let description = "Inspect the workspace's git repository without changing it. action: status (branch and \
                           changed files), diff (unstaged changes; staged=true for the index; rev to compare with a \
                           revision), log (recent commits; limit, rev, path), show (one commit, default HEAD), \
                           blame (who changed each line of path). Long output keeps its beginning.";
        let spec = ToolSpec::new("git_inspect", description, schema_for::<GitArgs>())
            .with_kind(ToolKind::ToolCall)
            .with_policy(ToolPolicy::Auto)
            .with_side_effect(SideEffect::ReadOnly);
        Self {
            spec,
            config,
            confinement,
        }
    }

    async fn run(&self, arguments: Value, ctx: &ToolContext<'_>) -> Outcome {
        let args: GitArgs = parse_args("git_inspect", arguments)?;
        let path = match args.path.as_deref() {
            Some(path) => Some(ctx.resolve_path(path, PathAccess::Read)?.relative),
            None => None,
        };
        let argv = subcommand(&args, path.as_deref())?;
        let root = ctx.turn.primary_root();
        // The allow-list leaves out every GIT_* variable of ours (GIT_DIR, GIT_WORK_TREE,
        // GIT_EXTERNAL_DIFF, GIT_PAGER, …).
        let mut env = EnvAllowList::default().from_current_process();
        env.set("GIT_OPTIONAL_LOCKS", "0")
            .set("GIT_TERMINAL_PROMPT", "0")
            .set("GIT_LITERAL_PATHSPECS", "1")
            .set("LC_ALL", "C")
            .set("PAGER", "cat");
        let spec = CommandSpec::new("git", root, env, read_only_scope(ctx.turn.workspace_roots))
            .args(
                GLOBAL_OPTIONS
                    .iter()
                    .copied()
                    .chain(argv.iter().map(String::as_str)),
            );
        let running = spawn(&spec, self.confinement.as_ref()).map_err(|failure| {
            Failure::new(format!(
                "could not run git (is it installed?): {}",
                failure.message
            ))
        })?;
        let limits = self.config.limits;
        let mut stdout = Head::new(limits.max_bytes.saturating_add(1));
        let mut stderr = Head::new(MAX_STDERR);
        let finished = running
            .drive(
                self.config.timeout,
                ctx.turn.abort,
                |stream, chunk| match stream {
                    Stream::Stdout => stdout.push(chunk),
                    Stream::Stderr => stderr.push(chunk),
                },
            )
            .await;
        let shown_command = format!("git {}", argv.join(" "));
        let exit_code = match finished.ending.exit_code() {
            Some(code) => code,
            None if ctx.is_aborted() => {
                return Err(Failure::new("the turn was aborted; git was stopped"));
            }
            None => {
                return Err(Failure::coded(
                    ErrorCode::ToolTimeout,
                    format!(
                        "git took longer than {} seconds and was stopped; narrow the request with path, rev or limit",
                        self.config.timeout.as_secs()
                    ),
                ));
            }
        };
        let errors = String::from_utf8_lossy(&stderr.kept).trim().to_owned();
        if exit_code != 0 {
            if errors.contains("not a git repository") {
                return Err(Failure::new(format!(
                    "{} is not inside a git repository, so there is nothing for git_inspect to show; use ls, \
                     read and grep to look at the files",
                    root.display()
                )));
            }
            return Err(Failure::new(format!(
                "`{shown_command}` failed with exit code {exit_code}: {errors}"
            ))
            .with("exit_code", exit_code));
        }
        let text = String::from_utf8_lossy(&stdout.kept);
        let head = truncate_head(&text, limits);
        let truncated = stdout.total_bytes > limits.max_bytes as u64
            || stdout.total_lines() > limits.max_lines as u64;
        let mut result = json!({
            "action": args.action.name(),
            "command": shown_command,
            "output": if truncated { head.content.clone() } else { text.into_owned() },
            "truncated": truncated,
        });
        if truncated {
            let notice = TruncationNotice {
                kept: KeptEnd::Head,
                shown_lines: head.output_lines as u64,
                total_lines: stdout.total_lines(),
                shown_bytes: head.output_bytes as u64,
                total_bytes: stdout.total_bytes,
                partial_line: false,
                full: FullText::Hint("narrow the request with path, rev or limit to see the rest"),
            };
            result["notice"] = json!(notice.to_string());
        }
        Ok(result)
    }
}

#[async_trait]
impl Tool for GitInspectTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        Ok(finish(self.run(arguments, &ctx).await))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(action: GitAction) -> GitArgs {
        GitArgs {
            action,
            path: None,
            rev: None,
            limit: None,
            staged: None,
        }
    }

    #[test]
    fn revs_cannot_inject_options() {
        for bad in ["-p", "--output=/tmp/x", "", "a b", "a\nb", "main\t"] {
            assert!(validate_rev(bad).is_err(), "{bad:?}");
        }
        for good in [
            "HEAD",
            "HEAD~2",
            "main..feature",
            "v1.0",
            "abc123",
            "refs/heads/x",
        ] {
            assert!(validate_rev(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn revs_follow_end_of_options_and_paths_follow_the_separator() {
        let mut log = args(GitAction::Log);
        log.rev = Some("main".into());
        log.limit = Some(5);
        let argv = subcommand(&log, Some("src/a.rs")).unwrap();
        assert_eq!(
            argv,
            [
                "log",
                "--no-color",
                "--date=short",
                "--format=%h %ad %an: %s",
                "--max-count=5",
                "--end-of-options",
                "main",
                "--",
                "src/a.rs"
            ]
        );
        let show = subcommand(&args(GitAction::Show), None).unwrap();
        assert_eq!(show[show.len() - 2..], ["--end-of-options", "HEAD"]);
    }

    #[test]
    fn only_read_only_subcommands() {
        let mut blame = args(GitAction::Blame);
        assert!(subcommand(&blame, None).is_err());
        blame.limit = Some(3);
        assert_eq!(subcommand(&blame, Some("a")).unwrap()[0], "blame");
        for action in [
            GitAction::Status,
            GitAction::Diff,
            GitAction::Log,
            GitAction::Show,
        ] {
            let first = subcommand(&args(action), None).unwrap()[0].clone();
            assert!(["status", "diff", "log", "show"].contains(&first.as_str()));
        }
        let mut status = args(GitAction::Status);
        status.rev = Some("HEAD".into());
        assert!(subcommand(&status, None).is_err());
    }
}
