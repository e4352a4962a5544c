//! Where a call is made from: a workspace's [`MemoryPlace`].
//!
//! * The workspace key is the workspace's real path (symlinks resolved), so two spellings of
//!   one directory share memories.
//! * The project key is the repository's remote URL — `origin`, else the first remote with a
//!   URL — normalised so that every clone agrees ([`normalise_remote`]); without a remote it
//!   is the workspace key.
//!
//! The remote is read from the repository's own `.git/config`, which the repository controls:
//! a clone that names another project's remote sees that project's `project` memories. That is
//! what project scope means (every clone of a project shares them); keep secrets out of
//! memories. Credentials in a remote URL never become part of the key.

use kun_ports::MemoryPlace;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most of a git config file that is read.
const MAX_CONFIG_BYTES: u64 = 256 * 1024;

/// The place of `workspace`.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let place = kun_memory::place_for(dir.path());
/// assert_eq!(place.workspace, place.project, "no remote: the project is the workspace");
/// ```
#[must_use]
pub fn place_for(workspace: &Path) -> MemoryPlace {
    let real = std::fs::canonicalize(workspace).unwrap_or_else(|_| workspace.to_path_buf());
    let key = real.to_string_lossy().into_owned();
    let project = git_config(&real)
        .and_then(|text| remote_url(&text))
        .map(|url| normalise_remote(&url))
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| key.clone());
    MemoryPlace::new(key, project)
}

/// The text of the repository config for the repository containing `dir`, if any.
fn git_config(dir: &Path) -> Option<String> {
    let dot_git = dir
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|p| p.exists())?;
    let git_dir = if dot_git.is_file() {
        // A worktree or submodule: `gitdir: <path>`, relative to the file's directory.
        let text = read_capped(&dot_git)?;
        let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        let base = dot_git.parent().unwrap_or(dir);
        base.join(target)
    } else {
        dot_git
    };
    // A linked worktree keeps its config in the common directory.
    let common = read_capped(&git_dir.join("commondir"))
        .map(|rel| git_dir.join(rel.trim()))
        .unwrap_or_else(|| git_dir.clone());
    read_capped(&common.join("config"))
}

fn read_capped(path: &PathBuf) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The URL of `origin`, else of the first remote that has one.
#[must_use]
pub fn remote_url(config: &str) -> Option<String> {
    let mut remote: Option<String> = None;
    let mut found: Vec<(String, String)> = Vec::new();
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            remote = section_remote(line);
            continue;
        }
        let Some(name) = &remote else { continue };
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim().eq_ignore_ascii_case("url") {
            let value = value.trim().trim_matches('"').to_owned();
            found.push((name.clone(), value));
        }
    }
    found
        .iter()
        .find(|(name, _)| name == "origin")
        .or_else(|| found.first())
        .map(|(_, url)| url.clone())
}

/// `[remote "origin"]` → `origin`.
fn section_remote(header: &str) -> Option<String> {
    let inner = header.strip_prefix('[')?.strip_suffix(']')?.trim();
    let (kind, name) = inner.split_once(char::is_whitespace)?;
    kind.eq_ignore_ascii_case("remote")
        .then(|| name.trim().trim_matches('"').to_owned())
}

/// A remote URL as a key every clone agrees on: no scheme, no credentials, no `.git`, the
/// host lower-cased.
///
/// ```
/// use kun_memory::normalise_remote;
/// for url in [
///     "https://github.com/Acme/App.git",
///     "git@github.com:Acme/App.git",
///     "ssh://git@GitHub.com/Acme/App",
///     "https://user:token@github.com/Acme/App/",
/// ] {
///     assert_eq!(normalise_remote(url), "github.com/Acme/App");
/// }
/// ```
#[must_use]
pub fn normalise_remote(url: &str) -> String {
    let url = url.trim();
    let (host_and_path, is_url) = match url.split_once("://") {
        Some((_, rest)) => (rest, true),
        None => (url, false),
    };
    let (authority, path) = if is_url {
        host_and_path.split_once('/').unwrap_or((host_and_path, ""))
    } else if let Some((host, path)) = scp_like(host_and_path) {
        (host, path)
    } else {
        // A local path remote: keep it as it is.
        return url
            .trim_end_matches('/')
            .trim_end_matches(".git")
            .to_owned();
    };
    let host = authority
        .rsplit('@')
        .next()
        .unwrap_or(authority)
        .to_lowercase();
    let path = path
        .trim_matches('/')
        .trim_end_matches(".git")
        .trim_end_matches('/');
    format!("{host}/{path}")
}

/// `user@host:path` (scp syntax): a colon before any slash.
fn scp_like(text: &str) -> Option<(&str, &str)> {
    let colon = text.find(':')?;
    let slash = text.find('/').unwrap_or(usize::MAX);
    (colon < slash).then(|| (&text[..colon], &text[colon + 1..]))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    #[test]
    fn remote_urls_from_config() {
        let config = "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://a.example/up.git\n[remote \"origin\"]\n\turl = git@github.com:me/app.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n";
        assert_eq!(
            remote_url(config).as_deref(),
            Some("git@github.com:me/app.git")
        );
        let only = "[remote \"fork\"]\nurl = https://x.example/f\n";
        assert_eq!(remote_url(only).as_deref(), Some("https://x.example/f"));
        assert_eq!(remote_url("[core]\nurl = nothing\n"), None);
    }

    #[test]
    fn local_path_remotes_stay_paths() {
        assert_eq!(normalise_remote("/srv/git/app.git"), "/srv/git/app");
        assert_eq!(normalise_remote("../app"), "../app");
    }

    #[test]
    fn workspaces_with_a_remote_key_the_project_by_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git/config"),
            "[remote \"origin\"]\n\turl = https://tok:en@GitHub.com/acme/app.git\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        let place = place_for(&dir.path().join("sub"));
        assert_eq!(place.project, "github.com/acme/app");
        assert!(place.workspace.ends_with("sub"), "{}", place.workspace);
        assert!(!place.project.contains("tok"), "no credentials in the key");
    }

    #[test]
    fn linked_worktrees_read_the_common_config() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main");
        std::fs::create_dir_all(main.join(".git/worktrees/wt")).unwrap();
        std::fs::write(
            main.join(".git/config"),
            "[remote \"origin\"]\nurl = git@h.example:o/r\n",
        )
        .unwrap();
        std::fs::write(main.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        let wt = dir.path().join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        assert_eq!(place_for(&wt).project, "h.example/o/r");
    }
}
