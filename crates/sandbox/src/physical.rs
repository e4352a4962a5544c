//! Physical resolution: where a path really leads once every symbolic link is followed,
//! including paths that do not exist yet and links that dangle.
//!
//! `realpath` answers for paths that exist. For the rest (a file about to be created, or a
//! path through a dangling link) the resolver walks the path one component at a time from
//! `/`: an existing directory is entered, a symbolic link is read and its target spliced in
//! (absolute targets restart at `/`, relative ones continue from the link's real parent), and
//! the first component that does not exist ends the physical part; what follows is appended
//! lexically. So `<ws>/evil -> /nonexistent/x` resolves to `/nonexistent/x` and
//! `<ws>/good -> <ws>/data` (with `data` missing) resolves to `<ws>/data`.
//!
//! Invariants:
//! * The walk follows at most [`MAX_LINK_FOLLOWS`] links in total (the kernel's own limit),
//!   so a loop is an error, never a hang: every step consumes a component or spends one
//!   follow.
//! * `..` after a component that does not exist cancels that component; `..` after an
//!   existing one goes to its real parent. The result is absolute and has no `.`/`..`.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

/// How many symbolic links one resolution may follow before it gives up.
pub const MAX_LINK_FOLLOWS: usize = 40;

/// Why a path has no physical target.
#[derive(Debug)]
pub(crate) enum Unresolvable {
    /// More than [`MAX_LINK_FOLLOWS`] links: a loop or an absurd chain.
    TooManyLinks,
    /// A link was seen but could not be read (removed or changed mid-walk).
    UnreadableLink {
        /// The link.
        link: PathBuf,
        /// What reading it said.
        source: io::Error,
    },
}

/// One step of the walk.
enum Segment {
    /// `..`
    Up,
    /// A name.
    Name(OsString),
}

/// The physical target of the absolute, normalised `path`.
///
/// # Errors
/// [`Unresolvable`] when the links loop, chain too deep, or cannot be read.
pub(crate) fn physical_path(path: &Path) -> Result<PathBuf, Unresolvable> {
    match fs::canonicalize(path) {
        Ok(real) => Ok(real),
        Err(_) => walk(path),
    }
}

/// The component walk described in the module docs.
fn walk(path: &Path) -> Result<PathBuf, Unresolvable> {
    let mut current = PathBuf::from("/");
    let mut missing: Vec<OsString> = Vec::new();
    let mut todo: Vec<Segment> = segments(path);
    let mut follows = 0usize;

    while let Some(segment) = todo.pop() {
        match segment {
            Segment::Up => {
                if missing.pop().is_none() {
                    current.pop();
                }
            }
            Segment::Name(name) if !missing.is_empty() => missing.push(name),
            Segment::Name(name) => {
                let candidate = current.join(&name);
                match fs::symlink_metadata(&candidate) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        follows += 1;
                        if follows > MAX_LINK_FOLLOWS {
                            return Err(Unresolvable::TooManyLinks);
                        }
                        let target = fs::read_link(&candidate).map_err(|source| {
                            Unresolvable::UnreadableLink {
                                link: candidate.clone(),
                                source,
                            }
                        })?;
                        if target.is_absolute() {
                            current = PathBuf::from("/");
                        }
                        todo.extend(segments(&target));
                    }
                    Ok(_) => current = candidate,
                    // Missing, not a directory, or not searchable: the physical part ends here.
                    Err(_) => missing.push(name),
                }
            }
        }
    }

    current.extend(missing);
    Ok(current)
}

/// The walkable components of `path`, reversed so that `pop` yields the first one.
fn segments(path: &Path) -> Vec<Segment> {
    let mut out: Vec<Segment> = path
        .components()
        .filter_map(|c| match c {
            Component::ParentDir => Some(Segment::Up),
            Component::Normal(name) => Some(Segment::Name(name.to_os_string())),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn canon_tempdir() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let real = fs::canonicalize(dir.path()).unwrap();
        (dir, real)
    }

    #[test]
    fn existing_paths_match_realpath() {
        let (_dir, root) = canon_tempdir();
        fs::create_dir_all(root.join("a/b")).unwrap();
        symlink("a/b", root.join("link")).unwrap();
        let got = physical_path(&root.join("link")).unwrap();
        assert_eq!(got, root.join("a/b"));
        assert_eq!(walk(&root.join("link")).unwrap(), root.join("a/b"));
    }

    #[test]
    fn missing_suffix_is_appended() {
        let (_dir, root) = canon_tempdir();
        let got = physical_path(&root.join("new/deep/file.txt")).unwrap();
        assert_eq!(got, root.join("new/deep/file.txt"));
    }

    #[test]
    fn dangling_links_are_followed_by_hand() {
        let (_dir, root) = canon_tempdir();
        symlink(root.join("data"), root.join("good")).unwrap();
        symlink("/nonexistent/x", root.join("evil")).unwrap();
        symlink("../escape/y", root.join("rel")).unwrap();
        assert_eq!(
            physical_path(&root.join("good/note.txt")).unwrap(),
            root.join("data/note.txt")
        );
        assert_eq!(
            physical_path(&root.join("evil")).unwrap(),
            PathBuf::from("/nonexistent/x")
        );
        assert_eq!(
            physical_path(&root.join("rel/z")).unwrap(),
            root.parent().unwrap().join("escape/y/z")
        );
    }

    #[test]
    fn parent_after_a_missing_component_resumes_the_walk() {
        let (_dir, root) = canon_tempdir();
        symlink("/etc", root.join("out")).unwrap();
        symlink("missing/../out/passwd", root.join("sneaky")).unwrap();
        assert_eq!(
            physical_path(&root.join("sneaky")).unwrap(),
            PathBuf::from("/etc/passwd")
        );
    }

    #[test]
    fn parent_cancels_only_the_last_missing_component() {
        let (_dir, root) = canon_tempdir();
        symlink("m1/m2/../x", root.join("l")).unwrap();
        assert_eq!(physical_path(&root.join("l")).unwrap(), root.join("m1/x"));
    }

    #[test]
    fn loops_are_errors() {
        let (_dir, root) = canon_tempdir();
        symlink("b", root.join("a")).unwrap();
        symlink("a", root.join("b")).unwrap();
        symlink("self", root.join("self")).unwrap();
        for name in ["a", "b/x", "self", "self/deeper"] {
            assert!(
                matches!(
                    physical_path(&root.join(name)),
                    Err(Unresolvable::TooManyLinks)
                ),
                "{name}"
            );
        }
    }

    #[test]
    fn the_follow_limit_is_exactly_forty() {
        let (_dir, root) = canon_tempdir();
        // link0 -> link1 -> ... -> link{n-1} -> missing: n follows, all dangling.
        let chain = |prefix: &str, n: usize| {
            for i in 0..n {
                let target = if i + 1 == n {
                    "missing".to_owned()
                } else {
                    format!("{prefix}{}", i + 1)
                };
                symlink(target, root.join(format!("{prefix}{i}"))).unwrap();
            }
            root.join(format!("{prefix}0"))
        };
        let ok = chain("ok", MAX_LINK_FOLLOWS);
        assert_eq!(physical_path(&ok).unwrap(), root.join("missing"));
        let too_long = chain("long", MAX_LINK_FOLLOWS + 1);
        assert!(matches!(
            physical_path(&too_long),
            Err(Unresolvable::TooManyLinks)
        ));
    }

    #[test]
    fn files_used_as_directories_end_the_physical_part() {
        let (_dir, root) = canon_tempdir();
        fs::write(root.join("file"), "x").unwrap();
        assert_eq!(
            physical_path(&root.join("file/child")).unwrap(),
            root.join("file/child")
        );
    }
}
