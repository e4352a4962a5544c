//! The walk shared by `grep` and `glob`: ripgrep's default filters, the search root, and the
//! path order every result is sorted by.
//!
//! # Filters (what `rg` does with no flags, plus `--no-require-git`)
//!
//! | rule | setting |
//! |---|---|
//! | hidden files and directories (`.name`) | skipped |
//! | `.gitignore`, `.git/info/exclude`, the global git excludes file | honoured, **also outside a git repository** |
//! | `.ignore`, `.rgignore` | honoured |
//! | ignore files in parent directories of the search root | honoured |
//! | symbolic links | not followed, not searched |
//! | an entry that its parent directory's handle (a chain of handles opened from the root's through no link, see [`super::handles`]) does not hold under its name with the inode the walk read | skipped, not descended (a directory swapped for a link mid-walk) |
//! | binary files (a NUL byte) | skipped (see [`super::scan`]) |
//! | the search root itself | never filtered: `path: ".github"` searches that hidden directory |
//!
//! A `glob` narrows the walk like `rg -g` run from the workspace root: gitignore syntax, where a
//! pattern without `/` matches the file name at any depth, a pattern with `/` is matched against
//! the workspace-relative path (the path the results show), and a leading `!` excludes. As in
//! `rg`, a file the glob names explicitly is listed even when an ignore file excludes it
//! (directories still follow the ignore rules).
//!
//! # Order
//!
//! Results are sorted by [`cmp_path_keys`]: component by component, bytewise, which is the
//! order `rg --sort path` prints (`a/b` before `a-c`, because the directory `a` sorts before
//! the file `a-c`).

use super::handles::{DirChain, FileCheck};
use crate::Failure;
use crate::fs::beneath::Anchored;
use ignore::overrides::OverrideBuilder;
use ignore::{DirEntry, Walk, WalkBuilder};
use kun_ports::{PathAccess, ToolContext};
use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// ripgrep never uses more than this many threads by default; neither do we.
const MAX_THREADS: usize = 12;

/// Where a search starts, resolved through the sandbox.
#[derive(Debug, Clone)]
pub(crate) struct SearchRoot {
    /// The physical directory (or file) the walk starts at; checked by the sandbox.
    pub(crate) walk_root: PathBuf,
    /// The root as the results name it: workspace-relative, `/`-separated, `.` for the
    /// workspace itself.
    pub(crate) display: String,
    /// The physical directory globs are anchored at: the workspace root as seen from
    /// `walk_root` (the walk root itself when the search lies outside every workspace root).
    pub(crate) glob_root: PathBuf,
    /// The workspace root's handle every entry is checked against (see
    /// [`crate::fs::beneath`]): the walk reads directories by path, so a directory swapped
    /// for a link mid-walk is caught here.
    pub(crate) anchored: Arc<Anchored>,
}

impl SearchRoot {
    /// Resolves the `path` argument (default `.`) for reading and checks that it exists.
    ///
    /// # Errors
    /// The sandbox's error when the path escapes the workspace; `invalid_arguments` when it
    /// does not exist.
    pub(crate) fn resolve(ctx: &ToolContext<'_>, path: Option<&str>) -> Result<Self, Failure> {
        let input = path.map(str::trim).filter(|p| !p.is_empty()).unwrap_or(".");
        let resolved = ctx.resolve_path(input, PathAccess::Read)?;
        if let Err(err) = std::fs::metadata(&resolved.physical) {
            return Err(Failure::invalid(format!(
                "cannot search {input}: {err}; pass a path inside the workspace that exists (ls shows what is there)"
            ))
            .with("path", input));
        }
        let glob_root = glob_root(
            &resolved.physical,
            &resolved.relative,
            resolved.root.is_some(),
        );
        let anchored = crate::fs::beneath(&resolved, ctx)
            .anchored()
            .map_err(|errno| {
                Failure::new(format!(
                    "cannot open the workspace root to search {input}: {errno}"
                ))
            })?;
        Ok(Self {
            walk_root: resolved.physical,
            display: resolved.relative,
            glob_root,
            anchored: Arc::new(anchored),
        })
    }

    /// The workspace-relative display path of a walk entry, given its [`path_key`].
    pub(crate) fn display_path(&self, key: &[u8]) -> String {
        let inner = String::from_utf8_lossy(key);
        match (self.display.as_str(), inner.is_empty()) {
            (_, true) => self.display.clone(),
            (".", false) => inner.into_owned(),
            (prefix, false) => format!("{}/{inner}", prefix.trim_end_matches('/')),
        }
    }
}

/// The workspace root as an ancestor of `walk_root`: `walk_root` with the components of the
/// workspace-relative path `relative` taken off its end.
fn glob_root(walk_root: &Path, relative: &str, in_workspace: bool) -> PathBuf {
    if !in_workspace || relative == "." {
        return walk_root.to_path_buf();
    }
    let depth = relative
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .count();
    let mut root = walk_root;
    for _ in 0..depth {
        match root.parent() {
            Some(parent) => root = parent,
            None => return walk_root.to_path_buf(),
        }
    }
    if walk_root.ends_with(relative) {
        root.to_path_buf()
    } else {
        walk_root.to_path_buf()
    }
}

/// A walker over `root.walk_root` with ripgrep's default filters and an optional `rg -g` glob
/// anchored at `root.glob_root`, yielding entries **in path order** ([`cmp_path_keys`]: each
/// directory's entries sorted by name, depth first), lazily, so a page can stop walking once
/// it is full.
///
/// With `after` (a key from a cursor), every directory and file sorting before it is pruned
/// without being read, so the walk resumes right where the previous page stopped; the entry
/// `after` itself is still yielded (grep resumes inside it).
///
/// Every directory below the root (and with [`FileCheck::Lookup`] every file) is yielded only
/// once confirmed from its parent directory's handle ([`DirChain`]): the walk reads
/// directories by path, so one swapped for a link mid-walk is caught there.
///
/// # Errors
/// `invalid_arguments` with the glob parser's message when `glob` is not a valid glob.
pub(crate) fn sorted_walker(
    root: &SearchRoot,
    glob: Option<&str>,
    after: Option<Vec<u8>>,
    files: FileCheck,
) -> Result<Walk, Failure> {
    let chain = DirChain::new(&root.anchored, &root.walk_root, files);
    let part = WalkPart {
        at: &root.walk_root,
        chain,
        max_depth: None,
    };
    sorted_walker_of(root, part, glob, after)
}

/// Which part of a search root's tree a walker covers (see [`super::subtrees`]).
pub(crate) struct WalkPart<'a> {
    /// Where the walk starts: the search root, or a directory below it that a walk of its
    /// parent already yielded (so it passed every filter there).
    pub(crate) at: &'a Path,
    /// The handles entries are confirmed with, starting at `at`.
    pub(crate) chain: DirChain,
    /// At most this deep below `at` (`Some(1)`: its entries only).
    pub(crate) max_depth: Option<usize>,
}

/// [`sorted_walker`] over a part of the tree: the same filters (the ignore files of `part.at`'s
/// parents are read as parents), the glob anchored at `root.glob_root`, and keys (for
/// `after`) relative to `root.walk_root`, so the entries are exactly the ones a walk of the
/// whole root yields below `part.at`.
pub(crate) fn sorted_walker_of(
    root: &SearchRoot,
    part: WalkPart<'_>,
    glob: Option<&str>,
    after: Option<Vec<u8>>,
) -> Result<Walk, Failure> {
    let mut builder = WalkBuilder::new(part.at);
    builder
        .hidden(true)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .max_depth(part.max_depth)
        .current_dir(&root.glob_root)
        // Entries of one directory share its path up to their names, so comparing whole paths
        // bytewise orders them by name; it spares taking each name apart on every comparison.
        .sort_by_file_path(|a, b| {
            a.as_os_str()
                .as_encoded_bytes()
                .cmp(b.as_os_str().as_encoded_bytes())
        });
    builder.add_custom_ignore_filename(".rgignore");
    let chain = part.chain;
    let walk_root = root.walk_root.clone();
    builder.filter_entry(move |entry| {
        if let Some(after) = &after
            && entry.depth() > 0
            && sorts_before(path_key(&walk_root, entry.path()), after, is_dir(entry))
        {
            return false;
        }
        chain.confirms(entry)
    });
    if let Some(glob) = glob {
        builder.overrides(overrides(&root.glob_root, glob)?);
    }
    Ok(builder.build())
}

fn is_dir(entry: &DirEntry) -> bool {
    entry.file_type().is_some_and(|t| t.is_dir())
}

/// Whether the entry `key` (and, for a directory, everything under it) sorts before the
/// resume key `after`, so a resumed walk can skip it.
fn sorts_before(key: &[u8], after: &[u8], dir: bool) -> bool {
    if cmp_path_keys(key, after) != Ordering::Less {
        return false;
    }
    // A directory on the way to `after` holds entries after it: keep it.
    let ancestor = after.len() > key.len() && after.starts_with(key) && after[key.len()] == b'/';
    !(dir && ancestor)
}

fn overrides(root: &Path, glob: &str) -> Result<ignore::overrides::Override, Failure> {
    let invalid = |err: ignore::Error| {
        Failure::invalid(format!(
            "invalid glob {glob:?}: {err}; use gitignore-style globs such as *.rs, src/**/*.ts or !*.min.js"
        ))
        .with("glob", glob)
    };
    if glob.trim().is_empty() {
        return Err(Failure::invalid(
            "glob is empty; pass a pattern such as *.rs, or leave glob out",
        )
        .with("glob", glob));
    }
    let mut builder = OverrideBuilder::new(root);
    builder.add(glob).map_err(invalid)?;
    builder.build().map_err(invalid)
}

/// How often (in walk entries) a listing walk looks at the turn's abort signal (and a
/// parallel one at its stop flag).
pub(crate) const CHECK_EVERY: usize = 64;

/// How many walker threads to use: the available parallelism, at most 12 (as ripgrep).
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS)
}

/// Whether a walk entry is a file to report: a regular file. Symbolic links are neither
/// followed nor reported (the search root was already resolved to its physical path), and
/// special files (FIFOs, devices) are never opened.
pub(crate) fn is_reportable_file(entry: &DirEntry) -> bool {
    entry
        .file_type()
        .is_some_and(|file_type| file_type.is_file())
}

/// The entry's path relative to the walk root, as raw bytes with `/` separators; empty for the
/// root itself. Borrowed from the entry: no allocation, and no component parsing (walk entries
/// are the root joined with names, so the root's bytes are a prefix of theirs).
pub(crate) fn path_key<'e>(root: &Path, path: &'e Path) -> &'e [u8] {
    let (root_bytes, bytes) = (
        root.as_os_str().as_encoded_bytes(),
        path.as_os_str().as_encoded_bytes(),
    );
    match bytes.strip_prefix(root_bytes) {
        Some([]) => &[],
        Some([b'/', rest @ ..]) => rest,
        Some(rest) if root_bytes.ends_with(b"/") => rest,
        _ => path
            .strip_prefix(root)
            .unwrap_or(path)
            .as_os_str()
            .as_encoded_bytes(),
    }
}

/// The result order: component by component, each compared bytewise (`rg --sort path`).
pub(crate) fn cmp_path_keys(a: &[u8], b: &[u8]) -> Ordering {
    a.split(|&byte| byte == b'/')
        .cmp(b.split(|&byte| byte == b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::fs::beneath::Beneath;

    #[allow(clippy::unwrap_used, reason = "tests fail loudly")]
    fn anchored(dir: &Path) -> Arc<Anchored> {
        Arc::new(
            Beneath::locate(dir, [&dir.to_path_buf()])
                .anchored()
                .unwrap(),
        )
    }

    #[test]
    fn keys_sort_by_component() {
        let mut keys: Vec<&[u8]> = vec![b"a-c", b"a/b", b"B", b"a", b"a/a/z", "é".as_bytes(), b"z"];
        keys.sort_by(|a, b| cmp_path_keys(a, b));
        let expected: Vec<&[u8]> = vec![b"B", b"a", b"a/a/z", b"a/b", b"a-c", b"z", "é".as_bytes()];
        assert_eq!(keys, expected);
    }

    #[test]
    fn keys_are_the_path_below_the_root() {
        for (root, path, key) in [
            ("/w", "/w/src/a.rs", &b"src/a.rs"[..]),
            ("/w", "/w", b""),
            ("/w/", "/w/src", b"src"),
            ("/", "/etc/hosts", b"etc/hosts"),
            ("/w", "/wx/a", b"/wx/a"),
        ] {
            assert_eq!(path_key(Path::new(root), Path::new(path)), key, "{path}");
        }
    }

    #[test]
    fn display_paths_join_the_root() {
        let root = |display: &str| SearchRoot {
            walk_root: PathBuf::from("/w"),
            display: display.to_owned(),
            glob_root: PathBuf::from("/w"),
            anchored: anchored(Path::new("/")),
        };
        assert_eq!(root(".").display_path(b"src/a.rs"), "src/a.rs");
        assert_eq!(root("src").display_path(b"a.rs"), "src/a.rs");
        assert_eq!(root("src/a.rs").display_path(b""), "src/a.rs");
    }

    #[test]
    fn globs_anchor_at_the_workspace_root() {
        let walk = Path::new("/ws/src/nested");
        assert_eq!(glob_root(walk, "src/nested", true), PathBuf::from("/ws"));
        assert_eq!(glob_root(walk, ".", true), PathBuf::from("/ws/src/nested"));
        assert_eq!(
            glob_root(walk, "/elsewhere/nested", false),
            PathBuf::from("/ws/src/nested")
        );
        // A root reached through a link whose name differs: anchor at the search root.
        assert_eq!(
            glob_root(walk, "link", true),
            PathBuf::from("/ws/src/nested")
        );
    }

    #[test]
    fn bad_and_empty_globs_are_invalid_arguments() {
        let dir = std::env::temp_dir();
        let root = SearchRoot {
            walk_root: dir.clone(),
            display: ".".to_owned(),
            anchored: anchored(&dir),
            glob_root: dir,
        };
        for (glob, ok) in [("[unclosed", false), ("  ", false), ("*.rs", true)] {
            assert_eq!(
                sorted_walker(&root, Some(glob), None, FileCheck::Lookup).is_ok(),
                ok,
                "{glob}"
            );
        }
    }

    #[test]
    fn resumed_walks_prune_what_sorts_before_the_key() {
        let after = b"b/c/d.rs";
        for (key, dir, skipped) in [
            (&b"a"[..], true, true),
            (b"a.rs", false, true),
            (b"b", true, false),
            (b"b/a", true, true),
            (b"b/c", true, false),
            (b"b/c/a.rs", false, true),
            (b"b/c/d.rs", false, false),
            (b"b/c/e.rs", false, false),
            (b"b/c-", true, false),
            (b"c", false, false),
        ] {
            assert_eq!(
                sorts_before(key, after, dir),
                skipped,
                "{}",
                String::from_utf8_lossy(key)
            );
        }
    }
}
