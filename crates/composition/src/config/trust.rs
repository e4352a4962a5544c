//! Workspace trust: whether the workspace layer counts as the user's own.
//!
//! A workspace is **untrusted** unless the user says otherwise, in one of three ways:
//!
//! | how | lasts | where |
//! |---|---|---|
//! | `[trust] workspaces = ["/path", "~/src/mine"]` | until removed | the user config or the `--config` file |
//! | `kun-tools trust DIR` | until removed | adds DIR's canonical path to the user config |
//! | `--trust-workspace` | this run | the command line |
//!
//! A workspace is trusted by an entry when its canonical path (symlinks resolved) equals the
//! entry's or lies inside it, compared component by component (`/src/app` is inside `/src`,
//! `/src-old` is not). An entry must be absolute or start with `~/`. A repository's own
//! configuration can never trust itself: `[trust]` is read from the user's files only.

use kun_mcp::WorkspaceStanding;
use serde::Serialize;
use std::path::{Component, Path, PathBuf};

/// `--trust-workspace`, or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrustFlag {
    /// Trust as the configuration says.
    #[default]
    AsConfigured,
    /// Trust the workspace for this run (`--trust-workspace`).
    ThisRun,
}

/// Whether the workspace is trusted, and why.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(tag = "trust", rename_all = "snake_case")]
pub enum WorkspaceTrust {
    /// Not trusted: its configuration may only narrow.
    #[default]
    Untrusted,
    /// Trusted by a `[trust] workspaces` entry.
    Configured {
        /// The entry as written.
        entry: PathBuf,
        /// The file holding it.
        file: PathBuf,
    },
    /// Trusted for this run by `--trust-workspace`.
    Flag,
}

impl WorkspaceTrust {
    /// The standing kun-mcp needs.
    #[must_use]
    pub const fn standing(&self) -> WorkspaceStanding {
        match self {
            Self::Untrusted => WorkspaceStanding::Untrusted,
            Self::Configured { .. } | Self::Flag => WorkspaceStanding::Trusted,
        }
    }

    /// Whether the workspace is trusted.
    #[must_use]
    pub const fn is_trusted(&self) -> bool {
        matches!(self.standing(), WorkspaceStanding::Trusted)
    }

    /// One sentence for `doctor`.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Untrusted => "untrusted: its .kun/config.toml and .mcp.json may only narrow; its hooks do not run and its MCP servers do not start".to_owned(),
            Self::Configured { entry, file } => format!(
                "trusted by `{}` in [trust] workspaces of {}",
                entry.display(),
                file.display()
            ),
            Self::Flag => "trusted for this run (--trust-workspace)".to_owned(),
        }
    }
}

/// Decides the workspace's trust from the `[trust] workspaces` entries of the user's files
/// (entry, file) and the flag. The flag wins; then the first entry that covers it.
#[must_use]
pub fn decide(workspace: &Path, entries: &[(PathBuf, PathBuf)], flag: TrustFlag) -> WorkspaceTrust {
    if flag == TrustFlag::ThisRun {
        return WorkspaceTrust::Flag;
    }
    let here = canonical(workspace);
    entries
        .iter()
        .find(|(entry, _)| expand(entry).is_some_and(|root| here.starts_with(canonical(&root))))
        .map_or(WorkspaceTrust::Untrusted, |(entry, file)| {
            WorkspaceTrust::Configured {
                entry: entry.clone(),
                file: file.clone(),
            }
        })
}

/// `~/x` → `$HOME/x`; absolute paths as they are; anything else `None`.
#[must_use]
pub fn expand(entry: &Path) -> Option<PathBuf> {
    if let Ok(rest) = entry.strip_prefix("~") {
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
        return Some(PathBuf::from(home).join(rest));
    }
    entry.is_absolute().then(|| entry.to_path_buf())
}

/// The path with symlinks resolved when it exists; otherwise made absolute and normalised
/// lexically (`.` dropped, `..` folded).
#[must_use]
pub fn canonical(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The command that trusts `workspace`, quoted for a POSIX shell when needed.
#[must_use]
pub fn trust_command(workspace: &Path) -> String {
    format!(
        "kun-tools trust {}",
        shell_quote(&workspace.to_string_lossy())
    )
}

fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_cover_the_workspace_and_what_lies_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("src");
        std::fs::create_dir_all(root.join("app")).unwrap();
        std::fs::create_dir_all(dir.path().join("src-old")).unwrap();
        std::os::unix::fs::symlink(root.join("app"), dir.path().join("link")).unwrap();
        let file = PathBuf::from("/u/config.toml");
        let entries = vec![(root.clone(), file.clone())];
        let cases = [
            (root.clone(), true),
            (root.join("app"), true),
            (dir.path().join("link"), true),
            (root.join("app/../app"), true),
            (dir.path().join("src-old"), false),
            (dir.path().to_path_buf(), false),
        ];
        for (workspace, trusted) in cases {
            let got = decide(&workspace, &entries, TrustFlag::AsConfigured);
            assert_eq!(got.is_trusted(), trusted, "{}", workspace.display());
        }
        let other = dir.path().join("src-old");
        assert_eq!(
            decide(&other, &entries, TrustFlag::ThisRun),
            WorkspaceTrust::Flag
        );
        assert_eq!(
            decide(
                &root,
                &[(PathBuf::from("relative/src"), file)],
                TrustFlag::AsConfigured
            ),
            WorkspaceTrust::Untrusted
        );
    }

    #[test]
    fn commands_are_quoted_for_the_shell() {
        assert_eq!(trust_command(Path::new("/w/app")), "kun-tools trust /w/app");
        assert_eq!(
            trust_command(Path::new("/w/my app's")),
            "kun-tools trust '/w/my app'\\''s'"
        );
    }
}
