//! `git_inspect`: read-only views of the workspace's git repository — status, diff, log, show,
//! blame.
//!
//! The repository is untrusted (issue 9): it controls `.git/config`, `.gitattributes` and
//! everything they include, and git runs programs named there. Invariants:
//!
//! * **No program from any git configuration runs**: git runs with a cleared environment, no
//!   system or global configuration, attributes from the empty tree, `-c` overrides for every
//!   program-valued key and for every driver the repository defines, and the flags that keep
//!   pagers, external diffs, textconv and signature checks off (the full list and why each
//!   item is there: [What is switched off](#what-is-switched-off)); `tests/hostile_repo.rs`
//!   builds a hostile repository for each and checks that its program never runs.
//! * **Nothing outside the workspace is read or printed**: the repository is found in-process
//!   (`repo.rs`); a `.git` file, `commondir`, alternates or symbolic link leading outside the
//!   roots is refused (`sandbox_read_blocked`). A workspace that is a subfolder of its
//!   repository works, limited to its own paths: every command gets the workspace as its
//!   pathspec, diffs use `--relative`, blame is rendered without file names (`blame.rs`), and a
//!   `rev` is resolved to commit ids before git sees it, so `show HEAD:../x`, a tree or a blob
//!   id are refused (`revs.rs`).
//! * **It changes nothing**: `GIT_OPTIONAL_LOCKS=0` and `diff.autoRefreshIndex=false` keep
//!   the index as it is, hooks are off, and the command is confined with a scope that writes
//!   nowhere; it needs no approval in any sandbox mode.
//! * `rev` cannot inject options, and paths go after `--`, resolved by the sandbox and matched
//!   literally;
//! * output keeps its head within the limits, with a notice saying how much was cut.
//!
//! # What is switched off
//!
//! Think of the repository as the attacker: it controls `.git/config` (and every file that
//! config includes), `.gitattributes`, `.git/info/attributes`, submodules and their configs.
//! Git runs programs from all of them. Every run here is built the same way:
//!
//! **Environment**: cleared, then only what this table lists, plus `PATH` (the system
//! directories and git's own) and the explicit `GIT_DIR` / `GIT_WORK_TREE` of the checked
//! repository — so no `GIT_*` variable of the caller (`GIT_SSH`,
//! `GIT_EXTERNAL_DIFF`, `GIT_PAGER`, `GIT_CONFIG_PARAMETERS`, `GIT_TRACE*`, …), no
//! `PAGER`, no secrets reach git.
//!
//! | variable | value | why |
//! |---|---|---|
//! | `HOME`, `XDG_CONFIG_HOME` | `/nonexistent` | no `~/.gitconfig`, `~/.config/git/{config,attributes,ignore}` |
//! | `GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_SYSTEM`, `GIT_CONFIG_GLOBAL` | `1`, `/dev/null`, `/dev/null` | only the repository's config is read, and ours |
//! | `GIT_ATTR_NOSYSTEM` | `1` | no system attributes file |
//! | `GIT_ATTR_SOURCE` | the empty tree | attributes come from no tree: no `.gitattributes` in the work tree or index can name a filter or diff driver (git 2.40+) |
//! | `GIT_TERMINAL_PROMPT` | `0` | never ask for credentials |
//! | `GIT_OPTIONAL_LOCKS` | `0` | `status` does not rewrite the index |
//! | `GIT_NO_LAZY_FETCH` | `1` | a partial clone does not fetch missing objects (ssh, remote helpers, credential helpers) |
//! | `GIT_PROTOCOL_FROM_USER`, `GIT_ALLOW_PROTOCOL` | `0`, empty | no transport at all |
//! | `GIT_LITERAL_PATHSPECS` | `1` | paths are paths, not pathspec magic |
//! | `LC_ALL`, `LANG` | `C` | stable messages |
//!
//! **Configuration overrides** (`-c`, which wins over every file), a fixed list:
//!
//! | key | value | what it would run or read |
//! |---|---|---|
//! | `core.fsmonitor`, `core.useBuiltinFSMonitor` | `false` | an fsmonitor hook program (or daemon) on `status` and `diff` |
//! | `core.hooksPath` | `/dev/null` | hooks: `git diff` rewrites the index and runs `post-index-change` |
//! | `core.pager` | `cat` | a pager (also `--no-pager`) |
//! | `core.sshCommand`, `core.askPass`, `credential.helper`, `core.gitProxy`, `core.alternateRefsCommand` | empty | ssh, askpass, credential helpers, proxies |
//! | `protocol.allow` | `never` | any transport, `ext::` commands included |
//! | `gpg.program`, `gpg.openpgp.program`, `gpg.x509.program`, `gpg.ssh.program`, `gpg.ssh.defaultKeyCommand` | empty | signature programs |
//! | `gpg.ssh.allowedSignersFile`, `gpg.ssh.revocationFile` | empty | files read from anywhere |
//! | `log.showSignature` | `false` | `gpg.program` on every `log`/`show` (also `--no-show-signature`) |
//! | `diff.external` | empty | an external diff program (also `--no-ext-diff`) |
//! | `diff.autoRefreshIndex` | `false` | `git diff` rewriting the index |
//! | `diff.orderFile` | `/dev/null` | a file read from anywhere |
//! | `diff.submodule`, `diff.ignoreSubmodules`, `status.submoduleSummary`, `submodule.recurse` | `short`, `all`, `false`, `false` | git run inside submodules, under *their* configs |
//! | `core.attributesFile`, `core.excludesFile` | `/dev/null` | attribute and ignore files read from anywhere |
//! | `log.mailmap`, `mailmap.file`, `mailmap.blob` | `false`, `/dev/null`, empty | a mailmap read from anywhere, rewriting names |
//! | `status.relativePaths` | `true` | paths shown relative to the workspace |
//! | `color.ui` | `false` | escape sequences |
//! | `core.quotePath` | `false` | non-ASCII names readable (control characters stay quoted) |
//!
//! (`trace2.*` targets, which would write files, are read only from the system and global
//! configuration, which are not read at all.)
//! | `gc.auto`, `maintenance.auto` | `0`, `false` | background maintenance |
//!
//! **Driver overrides**: before each call the repository's configuration is listed
//! (`git config --list --includes`, under the same environment) and every driver it defines is
//! switched off by name — `filter.<name>.{clean,smudge,process}` empty and `.required=false`,
//! `diff.<name>.{command,textconv}` empty — on top of `GIT_ATTR_SOURCE` (so git older than 2.40
//! is covered too, as is `.git/info/attributes`). A driver name `-c` cannot spell (one holding
//! `=` or a newline) makes the call refuse to run.
//!
//! **Command-line flags** on top: `--no-pager`, `--no-optional-locks`, `--no-ext-diff`,
//! `--no-textconv`, `--no-show-signature`, `--submodule=short`, `--ignore-submodules=all` and an
//! explicit `--pretty` where the subcommand takes them; `--ignore-revs-file=` for blame.
//!
//! Not disabled because they cannot run here: aliases (git never lets an alias shadow a
//! built-in, and only built-ins run), editors, merge drivers, `uploadpack.*`, remote helpers
//! (no transport), `core.worktree` (the explicit `GIT_WORK_TREE` wins). `include.path` and
//! `includeIf` are followed by git and may read files elsewhere, but nothing they set can
//! outrank the overrides above. Every run is also confined by the `CommandConfinement` port
//! with a scope that writes nowhere and has no network.

mod blame;
mod hardened;
mod plan;
mod repo;
mod revs;

use crate::OutputLimits;
use crate::output::{FullText, KeptEnd, TruncationNotice, truncate_head};
use async_trait::async_trait;
use hardened::{HardenedGit, Ran};
use kun_ports::{
    CommandConfinement, SideEffect, ToolContext, ToolFailure, ToolKind, ToolPolicy, ToolSpec,
    TypedTool,
};
use revs::RevSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// How much more porcelain than rendered text blame may read.
const PORCELAIN_FACTOR: usize = 8;

/// What to inspect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GitAction {
    /// Branch and changed files (`git status --short --branch`).
    Status,
    /// Unstaged changes, or staged ones with `staged`, or changes against `rev`.
    Diff,
    /// Recent commits (`limit`, default 20), optionally from `rev` and touching `path`.
    Log,
    /// One commit (`rev`, default HEAD) with its stat and patch, or a file at a commit
    /// (`rev` = `HEAD:path`).
    Show,
    /// Who last changed each line of `path` (at `rev`; the first `limit` lines when given).
    Blame,
}

/// The arguments of `git_inspect`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitArgs {
    /// status, diff, log, show or blame.
    pub action: GitAction,
    /// Limit to this file or directory (required for blame).
    pub path: Option<String>,
    /// A revision: commit, branch, tag or range such as `main..HEAD` (diff, log, show,
    /// blame); for show also `HEAD:path`, with the path relative to the workspace.
    pub rev: Option<String>,
    /// log: how many commits (default 20, at most 500); blame: how many lines from the top.
    pub limit: Option<usize>,
    /// diff: show staged changes instead of unstaged ones.
    pub staged: Option<bool>,
}

/// What `git_inspect` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GitOutput {
    /// The action that ran.
    pub action: GitAction,
    /// The git command, without the options that keep it safe.
    pub command: String,
    /// What git printed (its own text formats; blame as `git blame --date=short` prints).
    pub output: String,
    /// Whether the output was cut to the limits.
    pub truncated: bool,
    /// How much was cut and how to see the rest, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
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

/// The `git_inspect` tool (tool_call, auto, read-only). Output: [`GitOutput`].
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
                           revision), log (recent commits; limit, rev, path), show (one commit, default HEAD; or a \
                           file at a commit with rev=HEAD:path), blame (who changed each line of path). Paths are \
                           relative to the workspace. Long output keeps its beginning.";
        let spec = ToolSpec::typed::<GitArgs, GitOutput>("git_inspect", description)
            .with_kind(ToolKind::ToolCall)
            .with_policy(ToolPolicy::Auto)
            .with_side_effect(SideEffect::ReadOnly);
        Self {
            spec,
            config,
            confinement,
        }
    }

    async fn inspect(
        &self,
        args: GitArgs,
        ctx: &ToolContext<'_>,
    ) -> Result<GitOutput, ToolFailure> {
        let repo = repo::discover(ctx.turn.workspace_roots)?;
        let paths = plan::pathspecs(&args, &repo, ctx)?;
        let plan = plan::for_args(&args, paths)?;
        let git = HardenedGit::prepare(
            &repo,
            self.confinement.as_ref(),
            self.config.timeout,
            ctx.turn.abort,
        )
        .await?;
        let mut argv = plan.argv;
        let rev = match (&plan.rev, plan.default_rev) {
            (Some(spec), _) => Some(revs::resolve(spec, &repo, &git).await?),
            (None, Some(default)) => {
                Some(revs::resolve(&RevSpec::Commit(default.to_owned()), &repo, &git).await?)
            }
            (None, None) => None,
        };
        if let Some(rev) = rev {
            // Blame's own parser does not take `--end-of-options` before a revision; a resolved
            // id cannot start with `-` anyway.
            if args.action != GitAction::Blame {
                argv.push("--end-of-options".to_owned());
            }
            argv.push(rev);
        }
        if !plan.paths.is_empty() {
            argv.push("--".to_owned());
            argv.extend(plan.paths);
        }
        let limits = self.config.limits;
        let cap = match args.action {
            GitAction::Blame => limits.max_bytes.saturating_mul(PORCELAIN_FACTOR),
            _ => limits.max_bytes,
        }
        .saturating_add(1);
        let ran = git.run(&argv, cap).await?;
        let shown_command = format!("git {}", argv.join(" "));
        if ran.code != 0 {
            return Err(ToolFailure::new(format!(
                "`{shown_command}` failed with exit code {}: {}",
                ran.code, ran.stderr
            ))
            .with("exit_code", ran.code));
        }
        Ok(Self::output(args.action, shown_command, &ran, limits))
    }

    /// The output within the limits.
    fn output(action: GitAction, command: String, ran: &Ran, limits: OutputLimits) -> GitOutput {
        let printed = String::from_utf8_lossy(&ran.stdout.kept);
        let (text, cut_before_render) = if action == GitAction::Blame {
            (blame::render(&printed), ran.stdout.cut())
        } else {
            (printed.into_owned(), false)
        };
        let head = truncate_head(&text, limits);
        let (total_bytes, total_lines) = if action == GitAction::Blame {
            (text.len() as u64, text.lines().count() as u64)
        } else {
            (ran.stdout.total_bytes, ran.stdout.total_lines())
        };
        let truncated = cut_before_render
            || total_bytes > limits.max_bytes as u64
            || total_lines > limits.max_lines as u64;
        let notice = truncated.then(|| {
            TruncationNotice {
                kept: KeptEnd::Head,
                shown_lines: head.output_lines as u64,
                total_lines,
                shown_bytes: head.output_bytes as u64,
                total_bytes,
                partial_line: false,
                full: FullText::Hint("narrow the request with path, rev or limit to see the rest"),
            }
            .to_string()
        });
        GitOutput {
            action,
            command,
            output: if truncated { head.content } else { text },
            truncated,
            notice,
        }
    }
}

#[async_trait]
impl TypedTool for GitInspectTool {
    type Args = GitArgs;
    type Output = GitOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &GitOutput) -> String {
        let mut text = output.output.trim_end_matches('\n').to_owned();
        if text.is_empty() {
            text = match output.action {
                GitAction::Status | GitAction::Diff => "no changes".to_owned(),
                GitAction::Log => "no commits".to_owned(),
                GitAction::Show | GitAction::Blame => "git printed nothing".to_owned(),
            };
        }
        if let Some(notice) = &output.notice {
            text.push('\n');
            text.push_str(notice);
        }
        text
    }

    async fn run(&self, args: GitArgs, ctx: ToolContext<'_>) -> Result<GitOutput, ToolFailure> {
        self.inspect(args, &ctx).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_output_renders_as_a_sentence() {
        let tool = GitInspectTool::new(Arc::new(NoConfinementForTests));
        let out = GitOutput {
            action: GitAction::Diff,
            command: "git diff".into(),
            output: String::new(),
            truncated: false,
            notice: None,
        };
        assert_eq!(tool.render(&out), "no changes");
    }

    struct NoConfinementForTests;

    impl CommandConfinement for NoConfinementForTests {
        fn tier(&self) -> kun_ports::ConfinementTier {
            kun_ports::ConfinementTier::None
        }
        fn command(
            &self,
            spec: &kun_ports::CommandSpec,
        ) -> Result<kun_ports::ConfinedCommand, kun_ports::ConfinementError> {
            Ok(kun_ports::ConfinedCommand::bare(spec.unconfined_command()))
        }
    }
}
