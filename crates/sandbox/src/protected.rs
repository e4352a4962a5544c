//! Protected paths: the agent's own guards, which no tool may write in any sandbox mode but
//! danger-full-access (SPEC §2 `sandbox_protected_path`).
//!
//! | name | what it holds | why a write is refused |
//! |---|---|---|
//! | `.git` (directory or file) | git's config, hooks, objects; a `gitdir:` redirect | a hook or a config program (`core.fsmonitor`, a filter) runs on the user's next git command |
//! | `.kun` | kun's configuration, hooks, skills, agents | the agent would rewrite its own sandbox, approval and hooks |
//! | `.mcp.json` | the MCP servers a workspace starts | a new server is a program run with the user's rights |
//! | `.claude` | Claude Code's settings, hooks, agents, skills, commands | the same guards, for the user's other agent |
//! | `.agents` | agent skills and definitions | skills and agents steer later turns and their tools |
//!
//! **At any depth.** A name is protected wherever it appears inside a root, not only at the
//! top: a nested repository, a submodule or a package of a monorepo has its own `.git`,
//! `.kun` or `.claude`, and becomes the workspace (or runs its hooks) as soon as the user
//! works there. Agents rarely need to write these; the user lists the exceptions.
//!
//! **Spellings that open the same file.** A component is compared after folding what some
//! file system folds: case (APFS, NTFS, ext4 casefold: `.GIT`), the code points HFS+ ignores
//! (`.g\u{200c}it`), trailing dots and spaces (NTFS: `.git.`), and NTFS short names
//! (`GIT~1`). Lookalikes no file system folds (Cyrillic `і`, a dotless `ı`) name other files
//! that neither git nor kun reads, and are left alone.
//!
//! **Both paths.** The check runs on the lexical path (as written, `..` applied) and on the
//! physical one (symlinks followed), each relative to its root: `./.git/../.git/config`,
//! `link -> .git` and a dangling `x -> .git/hooks/post-checkout` are all refused. A hard link
//! planted beforehand is out of scope (it is the same inode under an unprotected name).
//!
//! **Exceptions** ([`ProtectedPaths::with_exceptions`]) are workspace-relative paths from the
//! user's own configuration (`[sandbox] protected_path_exceptions`); a write is allowed when
//! both its lexical and its physical path lie at or under one, so a link inside an exception
//! cannot lead back into a guard.

use kun_ports::{ErrorCode, PathError};
use std::path::{Component, Path, PathBuf};

/// A protected name and what it holds, for the refusal message.
struct Guard {
    /// The name, lower case.
    name: &'static str,
    /// The stem of its NTFS short name (`GIT~1` → `git`).
    short_stem: &'static str,
    /// What it holds, for the message.
    holds: &'static str,
}

/// The guards (see the module table).
const GUARDS: &[Guard] = &[
    Guard {
        name: ".git",
        short_stem: "git",
        holds: "git's config and hooks, which run programs on the user's next git command",
    },
    Guard {
        name: ".kun",
        short_stem: "kun",
        holds: "kun's own configuration, hooks, skills and agents",
    },
    Guard {
        name: ".mcp.json",
        short_stem: "mcp",
        holds: "the MCP servers this workspace starts",
    },
    Guard {
        name: ".claude",
        short_stem: "claude",
        holds: "Claude Code's settings, hooks, agents, skills and commands",
    },
    Guard {
        name: ".agents",
        short_stem: "agents",
        holds: "agent skills and definitions",
    },
];

/// The guard names, in table order: also what the bubblewrap tier re-binds read-only in each
/// workspace root (`confinement::guards`), so both gates protect one list.
pub(crate) fn guard_names() -> impl Iterator<Item = &'static str> {
    GUARDS.iter().map(|guard| guard.name)
}

/// How a user lists an exception.
pub(crate) const EXCEPTIONS_SETTING: &str =
    "`[sandbox] protected_path_exceptions` in the user config";

/// The protected-path rule and the user's exceptions to it. The default has no exceptions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProtectedPaths {
    /// Normalised, relative, no `..`.
    exceptions: Vec<PathBuf>,
}

/// An exception that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("protected path exception `{entry}`: {reason}")]
pub struct InvalidException {
    /// The entry as given.
    pub entry: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl ProtectedPaths {
    /// The rule with these exceptions: workspace-relative paths (`.claude/commands`,
    /// `.kun/plans`); each allows writes at or under it in every root. Strings and paths both
    /// work, so the config's `Vec<PathBuf>` goes in as it is.
    ///
    /// ```
    /// use kun_sandbox::ProtectedPaths;
    /// let rule = ProtectedPaths::with_exceptions([".claude/commands"])?;
    /// assert_eq!(rule.exceptions().len(), 1);
    /// assert!(ProtectedPaths::with_exceptions(["../.git"]).is_err());
    /// # Ok::<(), kun_sandbox::InvalidException>(())
    /// ```
    ///
    /// # Errors
    /// [`InvalidException`] for an empty, absolute or `..`-containing entry.
    pub fn with_exceptions<I, S>(exceptions: I) -> Result<Self, InvalidException>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<Path>,
    {
        let mut out = Vec::new();
        for entry in exceptions {
            let path = entry.as_ref();
            let invalid = |reason| InvalidException {
                entry: path.display().to_string(),
                reason,
            };
            if path.is_absolute() {
                return Err(invalid(
                    "it is absolute; give a path relative to the workspace root",
                ));
            }
            let mut normal = PathBuf::new();
            for component in path.components() {
                match component {
                    Component::Normal(name) => normal.push(name),
                    Component::CurDir => {}
                    Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                        return Err(invalid(
                            "it contains `..`; name a path inside the workspace",
                        ));
                    }
                }
            }
            if normal.as_os_str().is_empty() {
                return Err(invalid(
                    "it is empty; name a path such as `.claude/commands`",
                ));
            }
            out.push(normal);
        }
        Ok(Self { exceptions: out })
    }

    /// The exceptions in force.
    #[must_use]
    pub fn exceptions(&self) -> &[PathBuf] {
        &self.exceptions
    }

    /// Refuses a write whose lexical or physical path (each relative to its root) names a
    /// guard that no exception covers.
    pub(crate) fn check_write(
        &self,
        input: &str,
        lexical_relative: &Path,
        physical_relative: &Path,
    ) -> Result<(), PathError> {
        for (relative, physical) in [(lexical_relative, false), (physical_relative, true)] {
            let Some(guard) = guard_in(relative) else {
                continue;
            };
            if self.excepted(relative) {
                continue;
            }
            let via = if physical && physical_relative != lexical_relative {
                format!(" (it leads to `{}`)", physical_relative.display())
            } else {
                String::new()
            };
            return Err(PathError {
                code: ErrorCode::SandboxProtectedPath,
                message: format!(
                    "writing `{input}` is refused{via}: `{}` is protected, it holds {}. Tools \
                     may not change the agent's own guards in any sandbox mode but \
                     danger-full-access. Leave it as it is; if the user wants this change, they \
                     can make it themselves or list the path in {EXCEPTIONS_SETTING}.",
                    guard.name, guard.holds
                ),
            });
        }
        Ok(())
    }

    fn excepted(&self, relative: &Path) -> bool {
        self.exceptions
            .iter()
            .any(|exception| relative.starts_with(exception))
    }
}

/// The first guard a component of `relative` names, in any spelling some file system opens as
/// that guard.
fn guard_in(relative: &Path) -> Option<&'static Guard> {
    relative.components().find_map(|component| match component {
        Component::Normal(name) => guard_named(&name.to_string_lossy()),
        _ => None,
    })
}

/// The guard `name` opens on some file system, if any.
fn guard_named(name: &str) -> Option<&'static Guard> {
    let folded = fold(name);
    GUARDS
        .iter()
        .find(|guard| folded == guard.name || is_short_name_of(&folded, guard))
}

/// `name` as a case-folding, HFS+-ignoring, NTFS-trimming file system compares it.
fn fold(name: &str) -> String {
    let kept: String = name
        .chars()
        .filter(|&c| !is_hfs_ignorable(c))
        .flat_map(char::to_lowercase)
        .collect();
    kept.trim_end_matches(['.', ' ']).to_owned()
}

/// The code points HFS+ drops when it compares names (git's `is_hfs_dotgit` list).
const fn is_hfs_ignorable(c: char) -> bool {
    matches!(c, '\u{200C}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{206A}'..='\u{206F}' | '\u{FEFF}')
}

/// Whether `folded` is an NTFS 8.3 short name of `guard`: `git~1`, `claude~2`, `mcp~1.jso`.
fn is_short_name_of(folded: &str, guard: &Guard) -> bool {
    let Some((stem, rest)) = folded.split_once('~') else {
        return false;
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let after = &rest[digits..];
    stem == guard.short_stem && digits > 0 && (after.is_empty() || after.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_that_open_a_guard_are_recognised() {
        let table: &[(&str, Option<&str>)] = &[
            (".git", Some(".git")),
            (".GIT", Some(".git")),
            (".Git", Some(".git")),
            (".g\u{200c}it", Some(".git")),
            ("\u{feff}.git", Some(".git")),
            (".git.", Some(".git")),
            (".git . .", Some(".git")),
            ("GIT~1", Some(".git")),
            ("git~12", Some(".git")),
            (".KUN", Some(".kun")),
            (".mcp.json", Some(".mcp.json")),
            (".MCP.JSON ", Some(".mcp.json")),
            ("MCP~1.JSO", Some(".mcp.json")),
            (".Claude", Some(".claude")),
            ("CLAUDE~1", Some(".claude")),
            (".agents", Some(".agents")),
            // Not the guard on any file system:
            (".g\u{456}t", None), // Cyrillic і
            (".g\u{131}t", None), // dotless ı
            ("git", None),
            (".github", None),
            (".gitignore", None),
            (".gitattributes", None),
            ("git~", None),
            ("git~x", None),
            (".kunrc", None),
            ("mcp.json", None),
            (".agent", None),
        ];
        for (name, expected) in table {
            assert_eq!(guard_named(name).map(|g| g.name), *expected, "{name:?}");
        }
    }

    #[test]
    fn exceptions_are_relative_and_inside() {
        let ok = ProtectedPaths::with_exceptions(["./.claude/commands/", ".kun/plans"]).unwrap();
        assert_eq!(
            ok.exceptions(),
            [
                PathBuf::from(".claude/commands"),
                PathBuf::from(".kun/plans")
            ]
        );
        let from_config = vec![PathBuf::from(".kun/plans")];
        assert_eq!(
            ProtectedPaths::with_exceptions(&from_config)
                .unwrap()
                .exceptions(),
            [PathBuf::from(".kun/plans")]
        );
        for bad in ["", ".", "/abs/.git", "../.git", ".kun/../.git"] {
            let err = ProtectedPaths::with_exceptions([bad]).unwrap_err();
            assert_eq!(err.entry, bad);
        }
    }

    #[test]
    fn an_exception_covers_both_paths_or_nothing() {
        let rule = ProtectedPaths::with_exceptions([".claude/commands"]).unwrap();
        let p = Path::new;
        assert!(
            rule.check_write("x", p(".claude/commands/a.md"), p(".claude/commands/a.md"))
                .is_ok()
        );
        let err = rule
            .check_write(
                ".claude/commands/a.md",
                p(".claude/commands/a.md"),
                p(".claude/settings.json"),
            )
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::SandboxProtectedPath);
        assert!(
            err.message.contains("leads to `.claude/settings.json`"),
            "{}",
            err.message
        );
        assert!(
            rule.check_write("x", p(".claude/settings.json"), p(".claude/settings.json"))
                .is_err()
        );
    }
}
