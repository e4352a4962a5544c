//! What git runs for a request: the subcommand with the options that keep it read-only and
//! safe, the revision still to be resolved, and the pathspecs that keep it inside the
//! workspace (the workspace itself when it is a subfolder of its repository).

use super::repo::Repo;
use super::revs::{self, Forms, RevSpec};
use super::{GitAction, GitArgs};
use kun_ports::{ErrorCode, PathAccess, ToolContext, ToolFailure};

/// Default and maximum number of commits for `log`.
const DEFAULT_LOG_LIMIT: usize = 20;
const MAX_LOG_LIMIT: usize = 500;

/// A validated request: the subcommand's arguments before the revision, the revision, and the
/// pathspecs.
pub(super) struct Plan {
    /// The subcommand and its options.
    pub(super) argv: Vec<String>,
    /// The revision asked for.
    pub(super) rev: Option<RevSpec>,
    /// The revision when none is asked for.
    pub(super) default_rev: Option<&'static str>,
    /// The pathspecs (after `--`).
    pub(super) paths: Vec<String>,
}

/// The pathspec for `path` (relative to the workspace's physical root), or the workspace
/// itself when the workspace is a subfolder of the repository.
pub(super) fn pathspecs(
    args: &GitArgs,
    repo: &Repo,
    ctx: &ToolContext<'_>,
) -> Result<Vec<String>, ToolFailure> {
    let Some(path) = args.path.as_deref() else {
        return Ok(if repo.is_subfolder() {
            vec![".".to_owned()]
        } else {
            Vec::new()
        });
    };
    let resolved = ctx.resolve_path(path, PathAccess::Read)?;
    let relative = resolved.physical.strip_prefix(&repo.cwd).map_err(|_| {
        ToolFailure::coded(
            ErrorCode::SandboxReadBlocked,
            format!(
                "`{path}` lies outside the primary workspace root {}; git_inspect looks at \
                 that root's repository only",
                repo.cwd.display()
            ),
        )
    })?;
    let spec = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/");
    Ok(vec![if spec.is_empty() {
        ".".to_owned()
    } else {
        spec
    }])
}

/// The subcommand for `args`, before revisions are resolved.
pub(super) fn for_args(args: &GitArgs, paths: Vec<String>) -> Result<Plan, ToolFailure> {
    let owned = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let rev = |forms| {
        args.rev
            .as_deref()
            .map(|r| revs::parse(r, forms))
            .transpose()
    };
    let plan = match args.action {
        GitAction::Status => {
            if args.rev.is_some() {
                return Err(ToolFailure::invalid(
                    "status takes no rev; use diff with rev to compare against a revision",
                ));
            }
            Plan {
                argv: owned(&["status", "--short", "--branch", "--ignore-submodules=all"]),
                rev: None,
                default_rev: None,
                paths,
            }
        }
        GitAction::Diff => {
            let mut argv = owned(&[
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--submodule=short",
                "--ignore-submodules=all",
                "--relative",
            ]);
            if args.staged == Some(true) {
                argv.push("--staged".to_owned());
            }
            Plan {
                argv,
                rev: rev(Forms::CommitOrRange)?,
                default_rev: None,
                paths,
            }
        }
        GitAction::Log => {
            let limit = args
                .limit
                .unwrap_or(DEFAULT_LOG_LIMIT)
                .clamp(1, MAX_LOG_LIMIT);
            let mut argv = owned(&[
                "log",
                "--no-color",
                "--no-show-signature",
                "--date=short",
                "--format=%h %ad %an: %s",
            ]);
            argv.push(format!("--max-count={limit}"));
            Plan {
                argv,
                rev: rev(Forms::CommitOrRange)?,
                default_rev: None,
                paths,
            }
        }
        GitAction::Show => {
            let rev = rev(Forms::Any)?;
            let object = matches!(rev, Some(RevSpec::Object { .. }));
            if object && args.path.is_some() {
                return Err(ToolFailure::invalid(
                    "give the file either in rev (HEAD:path) or in path, not both",
                ));
            }
            let argv = if object {
                owned(&["show", "--no-color", "--no-textconv"])
            } else {
                owned(&[
                    "show",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--no-show-signature",
                    "--pretty=medium",
                    "--submodule=short",
                    "--relative",
                    "--stat",
                    "--patch",
                ])
            };
            Plan {
                argv,
                rev,
                default_rev: Some("HEAD"),
                paths: if object { Vec::new() } else { paths },
            }
        }
        GitAction::Blame => {
            if args.path.is_none() {
                return Err(ToolFailure::invalid("blame needs the path of a file"));
            }
            let mut argv = owned(&[
                "blame",
                "--porcelain",
                "--no-textconv",
                "--ignore-revs-file=",
            ]);
            if let Some(limit) = args.limit {
                argv.push(format!("-L1,+{}", limit.max(1)));
            }
            Plan {
                argv,
                rev: rev(Forms::CommitOnly)?,
                default_rev: None,
                paths,
            }
        }
    };
    Ok(plan)
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
    fn plans_put_paths_last_and_only_read_only_subcommands() {
        let mut log = args(GitAction::Log);
        log.rev = Some("main".into());
        log.limit = Some(5);
        let planned = for_args(&log, vec!["src/a.rs".into()]).unwrap();
        assert_eq!(
            planned.argv,
            [
                "log",
                "--no-color",
                "--no-show-signature",
                "--date=short",
                "--format=%h %ad %an: %s",
                "--max-count=5",
            ]
        );
        assert_eq!(planned.rev, Some(RevSpec::Commit("main".into())));
        assert_eq!(planned.paths, ["src/a.rs"]);
        for action in [
            GitAction::Status,
            GitAction::Diff,
            GitAction::Log,
            GitAction::Show,
        ] {
            let first = for_args(&args(action), Vec::new()).unwrap().argv[0].clone();
            assert_eq!(serde_json::json!(first), serde_json::json!(action));
        }
        assert!(for_args(&args(GitAction::Blame), Vec::new()).is_err());
        let mut status = args(GitAction::Status);
        status.rev = Some("HEAD".into());
        assert!(for_args(&status, Vec::new()).is_err());
        let mut show = args(GitAction::Show);
        show.rev = Some("HEAD:a.txt".into());
        show.path = Some("a.txt".into());
        assert!(for_args(&show, Vec::new()).is_err());
    }
}
