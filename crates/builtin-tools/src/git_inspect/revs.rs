//! Revisions: what `rev` may say, and how it becomes object ids git cannot misread.
//!
//! | form | actions | becomes |
//! |---|---|---|
//! | `<commit>` | diff, log, show, blame | the commit's full id |
//! | `<a>..<b>`, `<a>...<b>` (either side may be empty: `HEAD`) | diff, log, show | both ids, same operator |
//! | `<commit>:<path>` | show | the id of that file or directory, when `path` lies inside the workspace |
//!
//! Every side is resolved with `git rev-parse --verify <side>^{commit}`, so a tree or blob id
//! (`HEAD^{tree}`, a blob's hash) is refused: `show` of a bare tree or blob, or `diff` between
//! two blobs, would print content from anywhere in the repository. `:` appears only in the
//! `<commit>:<path>` form, where `path` is **relative to the workspace** (like every path
//! argument of every tool), normalised, and refused when it leaves the workspace:
//! `HEAD:../x` from a workspace that is a subfolder of its repository is
//! `sandbox_read_blocked`. Nothing that starts with `-`, holds whitespace or control
//! characters, or is longer than 256 characters gets this far.

use super::hardened::HardenedGit;
use super::repo::Repo;
use kun_ports::{ErrorCode, ToolFailure};
use std::path::{Component, Path};

/// The longest `rev` accepted.
const MAX_REV: usize = 256;

/// A parsed `rev`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RevSpec {
    /// One commit.
    Commit(String),
    /// A range between two commits (`None`: `HEAD`).
    Range {
        from: Option<String>,
        operator: &'static str,
        to: Option<String>,
    },
    /// A file or directory at a commit, the path relative to the workspace.
    Object { commit: String, path: String },
}

/// Which forms an action takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Forms {
    /// A commit only (blame).
    CommitOnly,
    /// A commit or a range (diff, log).
    CommitOrRange,
    /// A commit, a range or `commit:path` (show).
    Any,
}

/// Checks `rev` for option injection and garbage, then parses it.
///
/// # Errors
/// `invalid_arguments` saying what is wrong.
pub(super) fn parse(rev: &str, forms: Forms) -> Result<RevSpec, ToolFailure> {
    if rev.is_empty() || rev.chars().count() > MAX_REV {
        return Err(ToolFailure::invalid(format!(
            "rev must be a revision name of 1 to {MAX_REV} characters"
        )));
    }
    if rev.starts_with('-') {
        return Err(ToolFailure::invalid(format!(
            "rev `{rev}` starts with `-`, which git would read as an option; pass a commit, \
             branch, tag or range"
        )));
    }
    if rev.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(ToolFailure::invalid(format!(
            "rev `{}` contains whitespace or control characters",
            rev.escape_debug()
        )));
    }
    if let Some((commit, path)) = rev.split_once(':') {
        if forms != Forms::Any {
            return Err(ToolFailure::invalid(format!(
                "rev `{rev}` names a file (`commit:path`); this action takes a commit{}",
                if forms == Forms::CommitOrRange {
                    " or a range such as main..HEAD"
                } else {
                    ""
                }
            )));
        }
        if commit.is_empty() || commit.contains("..") {
            return Err(ToolFailure::invalid(format!(
                "rev `{rev}`: put a commit before the `:` (as in HEAD:src/lib.rs)"
            )));
        }
        return Ok(RevSpec::Object {
            commit: commit.to_owned(),
            path: path.to_owned(),
        });
    }
    let range = ["...", ".."]
        .into_iter()
        .find_map(|op| rev.split_once(op).map(|(a, b)| (a, op, b)));
    match range {
        Some(_) if forms == Forms::CommitOnly => Err(ToolFailure::invalid(format!(
            "rev `{rev}` is a range; this action takes one commit"
        ))),
        Some((from, operator, to)) => {
            let side = |s: &str| (!s.is_empty()).then(|| s.to_owned());
            if to.contains("..") {
                return Err(ToolFailure::invalid(format!(
                    "rev `{rev}` has more than one range operator"
                )));
            }
            Ok(RevSpec::Range {
                from: side(from),
                operator,
                to: side(to),
            })
        }
        None => Ok(RevSpec::Commit(rev.to_owned())),
    }
}

/// Resolves a parsed `rev` to the argument git gets: a commit id, `id..id`, or the id of a
/// file or directory inside the workspace.
///
/// # Errors
/// `invalid_arguments` for names that are not commits; `sandbox_read_blocked` for a
/// `commit:path` outside the workspace.
pub(super) async fn resolve(
    spec: &RevSpec,
    repo: &Repo,
    git: &HardenedGit<'_>,
) -> Result<String, ToolFailure> {
    match spec {
        RevSpec::Commit(commit) => commit_id(commit, git).await,
        RevSpec::Range { from, operator, to } => {
            let from = commit_id(from.as_deref().unwrap_or("HEAD"), git).await?;
            let to = commit_id(to.as_deref().unwrap_or("HEAD"), git).await?;
            Ok(format!("{from}{operator}{to}"))
        }
        RevSpec::Object { commit, path } => {
            let id = commit_id(commit, git).await?;
            let top_relative = top_relative(path, repo).ok_or_else(|| {
                ToolFailure::coded(
                    ErrorCode::SandboxReadBlocked,
                    format!(
                        "`{commit}:{path}` names a file outside the workspace; the path after \
                         `:` is relative to the workspace and must stay inside it"
                    ),
                )
            })?;
            verify(&format!("{id}:{top_relative}"), git)
                .await?
                .ok_or_else(|| {
                    ToolFailure::invalid(format!(
                        "`{path}` does not exist at `{commit}`; check the path (relative to the \
                         workspace) with log or show"
                    ))
                })
        }
    }
}

/// The full id of the commit `name` names.
async fn commit_id(name: &str, git: &HardenedGit<'_>) -> Result<String, ToolFailure> {
    verify(&format!("{name}^{{commit}}"), git)
        .await?
        .ok_or_else(|| {
            ToolFailure::invalid(format!(
                "`{name}` does not name a commit in this repository; pass a commit id, branch, \
                 tag or an expression such as HEAD~2 (trees and blobs are not accepted)"
            ))
        })
}

/// `git rev-parse --verify --quiet <name>`: the id, or `None` when it names nothing.
async fn verify(name: &str, git: &HardenedGit<'_>) -> Result<Option<String>, ToolFailure> {
    let args = ["rev-parse", "--verify", "--quiet", name].map(str::to_owned);
    let ran = git.run(&args, 4096).await?;
    let id = String::from_utf8_lossy(&ran.stdout.kept).trim().to_owned();
    let is_id = !id.is_empty() && id.chars().all(|c| c.is_ascii_hexdigit());
    Ok((ran.code == 0 && is_id).then_some(id))
}

/// `path` (relative to the workspace) relative to the top of the work tree, `/`-separated;
/// `None` when it leaves the workspace or is absolute.
pub(super) fn top_relative(path: &str, repo: &Repo) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(name) => parts.push(name.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    let inside = parts.join("/");
    Some(match (repo.prefix.is_empty(), inside.is_empty()) {
        (true, _) => inside,
        (false, true) => repo.prefix.clone(),
        (false, false) => format!("{}/{inside}", repo.prefix),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn revs_cannot_inject_options_or_garbage() {
        for bad in ["-p", "--output=/tmp/x", "", "a b", "a\nb", "main\t"] {
            assert!(parse(bad, Forms::Any).is_err(), "{bad:?}");
        }
        assert!(parse(&"a".repeat(257), Forms::Any).is_err());
    }

    #[test]
    fn forms_per_action() {
        let table: &[(&str, Forms, Option<RevSpec>)] = &[
            (
                "HEAD~2",
                Forms::CommitOnly,
                Some(RevSpec::Commit("HEAD~2".into())),
            ),
            ("main..HEAD", Forms::CommitOnly, None),
            ("HEAD:a", Forms::CommitOnly, None),
            (
                "main..feature",
                Forms::CommitOrRange,
                Some(RevSpec::Range {
                    from: Some("main".into()),
                    operator: "..",
                    to: Some("feature".into()),
                }),
            ),
            (
                "main...",
                Forms::CommitOrRange,
                Some(RevSpec::Range {
                    from: Some("main".into()),
                    operator: "...",
                    to: None,
                }),
            ),
            ("a..b..c", Forms::CommitOrRange, None),
            ("HEAD:src/lib.rs", Forms::CommitOrRange, None),
            (
                "HEAD:../x",
                Forms::Any,
                Some(RevSpec::Object {
                    commit: "HEAD".into(),
                    path: "../x".into(),
                }),
            ),
            (":/message", Forms::Any, None),
            ("a..b:x", Forms::Any, None),
        ];
        for (rev, forms, expected) in table {
            assert_eq!(parse(rev, *forms).ok(), *expected, "{rev} {forms:?}");
        }
    }

    #[test]
    fn object_paths_stay_inside_the_workspace() {
        let repo = |prefix: &str| Repo {
            git_dir: PathBuf::from("/r/.git"),
            work_tree: PathBuf::from("/r"),
            cwd: PathBuf::from("/r").join(prefix),
            prefix: prefix.to_owned(),
        };
        let sub = repo("sub");
        let top = repo("");
        let table: &[(&Repo, &str, Option<&str>)] = &[
            (&sub, "a.txt", Some("sub/a.txt")),
            (&sub, "./d/../a.txt", Some("sub/a.txt")),
            (&sub, "", Some("sub")),
            (&sub, ".", Some("sub")),
            (&sub, "../x", None),
            (&sub, "d/../../x", None),
            (&sub, "/etc/passwd", None),
            (&top, "a.txt", Some("a.txt")),
            (&top, "", Some("")),
            (&top, "../x", None),
        ];
        for (repo, path, expected) in table {
            assert_eq!(
                top_relative(path, repo).as_deref(),
                *expected,
                "{path} in `{}`",
                repo.prefix
            );
        }
    }
}
