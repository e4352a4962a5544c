//! Confirming walk entries from their parent directory's handle: one single-name lookup per
//! entry instead of a whole path resolved again from the root.
//!
//! The walk (`ignore`, as ripgrep) reads each directory **by path**. Between the moment a
//! directory is listed in its parent and the moment the walk reads it, another process may swap
//! it for a symbolic link to somewhere else; the walk would then list the names found there.
//! So every entry a listing reports is confirmed on a chain of directory handles:
//!
//! 1. the chain starts at the search root, opened **beneath the workspace root's handle through
//!    no link** ([`Anchored::open`]);
//! 2. each directory the walk enters is opened `O_PATH | O_DIRECTORY | O_NOFOLLOW` **by its
//!    single name from its parent's handle** (the handle one level up the chain), and counts only
//!    when that handle is a directory with the inode the walk's `readdir` reported;
//! 3. each file is looked up the same way, `fstatat(parent handle, name, AT_SYMLINK_NOFOLLOW)`,
//!    and counts only when it is a regular file with the inode the walk saw.
//!
//! # Why this is race-free
//!
//! A handle, once open, names an inode, not a path: renaming or swapping a component of the path
//! afterwards does not change what the handle refers to. By induction every handle on the chain
//! is a directory that was reached from the root's handle through plain names, each opened
//! without following a link (`O_NOFOLLOW` with `O_DIRECTORY` fails on a link). A file is then
//! reported only when *that* directory — not whatever the path leads to now — holds a regular
//! file of that name (a link in its place fails the type check). If the walk read a swapped
//! directory (a link to outside), the names it found are looked up in the real directory of the
//! chain: a name that is not there, or is another inode there, is dropped, so nothing found
//! outside is ever reported. The lookups never pass through the path again, so there is no
//! window between check and use to race.
//!
//! What a held handle cannot stop: a directory **moved** out of the workspace while the walk is
//! inside it (which needs write access to both places, on one file system) keeps its handle, so
//! names in it could still be listed. Those are the names the mover had inside the workspace,
//! not outside data; the same holds for the workspace root's own handle, which every check
//! already starts from. Reading a file (`grep`) still opens it beneath the root from the root's
//! handle ([`Anchored::open`]), so contents keep that stronger per-open guarantee.

use crate::fs::beneath::Anchored;
use ignore::DirEntry;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

/// How each directory on the chain is held: a path handle, no read access needed.
const DIR_FLAGS: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Which entries [`DirChain::confirms`] looks up; directories always (the chain needs them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileCheck {
    /// Files too (`glob`: it reports names and never opens them).
    Lookup,
    /// Files are confirmed later, where they are opened (`grep` opens each one beneath the
    /// root's handle before reading it).
    AtOpen,
}

/// The handles of the directories from the search root down to the one the walk is in,
/// indexed by depth (0 = the search root).
///
/// The walk hands entries over depth first, so when an entry at depth `d` arrives the handle
/// at `d - 1` is its parent: the chain is cut back to `d` and a directory that passes is pushed.
#[derive(Debug)]
pub(crate) struct DirChain {
    handles: Mutex<Vec<OwnedFd>>,
    files: FileCheck,
}

impl DirChain {
    /// A chain starting at `walk_root` (an absolute path under the anchor), opened beneath the
    /// anchor through no link; empty when the root is not a directory (a search of one file:
    /// the walk then yields only the root, which is confirmed from the anchor itself).
    pub(crate) fn new(anchored: &Anchored, walk_root: &Path, files: FileCheck) -> Self {
        Self::below(anchored, walk_root, None, files)
    }

    /// A chain starting at `dir`, a directory a walk of its parent has confirmed (with inode
    /// `ino`), opened again beneath the anchor through no link for a walk of its own; empty
    /// (confirming nothing below) unless it is still that directory.
    pub(crate) fn below(
        anchored: &Anchored,
        dir: &Path,
        ino: Option<u64>,
        files: FileCheck,
    ) -> Self {
        // `O_DIRECTORY` already refuses anything but a directory; only the inode is left.
        let handle = anchored.open(dir, DIR_FLAGS).ok().filter(|handle| {
            ino.is_none_or(|ino| rustix::fs::fstat(handle).is_ok_and(|stat| stat.st_ino == ino))
        });
        Self {
            handles: Mutex::new(handle.into_iter().collect()),
            files,
        }
    }

    /// Whether the walk entry (depth ≥ 1) is what its parent's handle holds under its name: a
    /// directory (whose handle then joins the chain) or, when files are looked up, a regular
    /// file, with the inode the walk saw. Other kinds (links, FIFOs) pass untouched: the walk
    /// never follows or reports them.
    pub(crate) fn confirms(&self, entry: &DirEntry) -> bool {
        let depth = entry.depth();
        let Some(file_type) = entry.file_type() else {
            return false;
        };
        let is_dir = file_type.is_dir();
        let looked_up = is_dir || (file_type.is_file() && self.files == FileCheck::Lookup);
        if !looked_up {
            return true;
        }
        let mut handles = self.handles.lock().unwrap_or_else(PoisonError::into_inner);
        handles.truncate(depth);
        let Some(parent) = depth.checked_sub(1).and_then(|up| handles.get(up)) else {
            return false;
        };
        let name = last_name(entry.path());
        if name.is_empty() {
            return false;
        }
        let same = |stat: &rustix::fs::Stat, kind: FileType| {
            FileType::from_raw_mode(stat.st_mode) == kind
                && entry.ino().is_none_or(|ino| ino == stat.st_ino)
        };
        if is_dir {
            let Ok(handle) = rustix::fs::openat(parent, name, DIR_FLAGS, Mode::empty()) else {
                return false;
            };
            let confirmed =
                rustix::fs::fstat(&handle).is_ok_and(|stat| same(&stat, FileType::Directory));
            if confirmed && handles.len() == depth {
                handles.push(handle);
            }
            confirmed
        } else {
            rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|stat| same(&stat, FileType::RegularFile))
        }
    }
}

/// The last name of a walk entry's path (the root joined with plain names), found by its last
/// `/` without parsing components.
fn last_name(path: &Path) -> &OsStr {
    let bytes = path.as_os_str().as_bytes();
    let start = bytes
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(0, |slash| slash + 1);
    OsStr::from_bytes(&bytes[start..])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;
    use crate::fs::beneath::Beneath;
    use crate::search::walk::{SearchRoot, is_reportable_file, path_key, sorted_walker};
    use std::path::PathBuf;
    use std::sync::Arc;

    /// A workspace `ws` with `d/a.rs`, `d/b.rs`, `d/sub/c.rs`, `z.rs`, and an outside directory
    /// with `a.rs`, `secret.rs` and `sub/c.rs`.
    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (ws, outside) = (base.join("ws"), base.join("outside"));
        for (root, files) in [
            (&ws, &["d/a.rs", "d/b.rs", "d/sub/c.rs", "z.rs"][..]),
            (&outside, &["a.rs", "secret.rs", "sub/c.rs"][..]),
        ] {
            for file in files {
                let path = root.join(file);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, "fn x() {}\n").unwrap();
            }
        }
        (dir, ws, outside)
    }

    fn root(ws: &Path) -> SearchRoot {
        SearchRoot {
            walk_root: ws.to_path_buf(),
            display: ".".to_owned(),
            glob_root: ws.to_path_buf(),
            anchored: Arc::new(Beneath::locate(ws, [&ws.to_path_buf()]).anchored().unwrap()),
        }
    }

    /// Walks `ws` for `*.rs` with files looked up, calling `meddle` with each yielded key
    /// before asking for the next entry; the reported files' keys.
    fn walk(ws: &Path, mut meddle: impl FnMut(&str)) -> Vec<String> {
        let root = root(ws);
        let walker = sorted_walker(&root, Some("*.rs"), None, FileCheck::Lookup).unwrap();
        let mut reported = Vec::new();
        for entry in walker {
            let entry = entry.unwrap();
            let key = String::from_utf8(path_key(ws, entry.path()).to_vec()).unwrap();
            if is_reportable_file(&entry) {
                reported.push(key.clone());
            }
            meddle(&key);
        }
        reported
    }

    #[test]
    fn an_untouched_tree_is_reported_whole() {
        let (_dir, ws, _outside) = setup();
        assert_eq!(
            walk(&ws, |_| {}),
            ["d/a.rs", "d/b.rs", "d/sub/c.rs", "z.rs"]
        );
    }

    #[test]
    fn a_directory_swapped_for_a_link_before_the_walk_enters_it_is_skipped() {
        // The root has been read (`d` listed as a directory); `d` then becomes a link to the
        // outside directory, or to a directory inside the workspace (a link to `.git/hooks`
        // would bypass protected-path decisions): `d` is refused, nothing below it is read.
        for target in ["outside", "inside"] {
            let (_dir, ws, outside) = setup();
            std::fs::create_dir_all(ws.join(".hidden/sub")).unwrap();
            std::fs::write(ws.join(".hidden/a.rs"), "").unwrap();
            let link_to = if target == "outside" {
                outside.clone()
            } else {
                ws.join(".hidden")
            };
            let reported = walk(&ws, |key| {
                if key.is_empty() {
                    std::fs::rename(ws.join("d"), ws.join("d-real")).unwrap();
                    std::os::unix::fs::symlink(&link_to, ws.join("d")).unwrap();
                }
            });
            assert_eq!(reported, ["z.rs"], "a link to {target}");
        }
    }

    #[test]
    fn names_read_through_a_swapped_directory_are_looked_up_in_the_real_one() {
        // The window between confirming `d` and the walk reading it by path cannot be hit on
        // demand, so its effect is built directly: the chain holds the real `d`, and is handed
        // the entries a read of the outside directory yields (same depth, same names). Each is
        // looked up in the real `d`: `secret.rs` is not there; `a.rs` and `sub` are, but as
        // other inodes. The real `d`'s own entries still pass.
        let (_dir, ws, outside) = setup();
        let base = outside.parent().unwrap();
        let root = root(&ws);
        let chain = DirChain::new(&root.anchored, &ws, FileCheck::Lookup);
        let entries = |at: &Path| -> Vec<DirEntry> {
            ignore::WalkBuilder::new(at)
                .standard_filters(false)
                .sort_by_file_name(Ord::cmp)
                .build()
                .map(Result::unwrap)
                .collect()
        };
        let inside = entries(&ws);
        let named = |list: &[DirEntry], suffix: &str| {
            list.iter()
                .find(|e| e.path().ends_with(suffix))
                .cloned()
                .unwrap()
        };
        assert!(chain.confirms(&named(&inside, "d")));
        let read_outside = entries(base);
        for name in ["outside/a.rs", "outside/secret.rs", "outside/sub"] {
            let entry = named(&read_outside, name);
            assert_eq!(entry.depth(), 2);
            assert!(!chain.confirms(&entry), "{name} passed");
        }
        assert!(chain.confirms(&named(&inside, "d/a.rs")));
        assert!(chain.confirms(&named(&inside, "d/sub")));
    }

    #[test]
    fn a_file_swapped_for_a_link_after_its_directory_was_read_is_not_reported() {
        // `d` is read whole when the walk enters it; `b.rs` is then replaced by a link to an
        // outside file before the walk hands it over: the lookup sees the link.
        let (_dir, ws, outside) = setup();
        let reported = walk(&ws, |key| {
            if key == "d/a.rs" {
                std::fs::remove_file(ws.join("d/b.rs")).unwrap();
                std::os::unix::fs::symlink(outside.join("secret.rs"), ws.join("d/b.rs")).unwrap();
            }
        });
        assert_eq!(reported, ["d/a.rs", "d/sub/c.rs", "z.rs"]);
    }

    #[test]
    fn a_file_replaced_by_another_inode_is_not_reported_as_the_one_listed() {
        let (_dir, ws, _outside) = setup();
        let reported = walk(&ws, |key| {
            if key == "d/a.rs" {
                std::fs::remove_file(ws.join("d/b.rs")).unwrap();
                std::fs::create_dir(ws.join("d/b.rs")).unwrap();
            }
        });
        assert_eq!(reported, ["d/a.rs", "d/sub/c.rs", "z.rs"]);
    }

    #[test]
    fn a_search_root_that_cannot_be_opened_beneath_reports_nothing() {
        let (_dir, ws, outside) = setup();
        let root = root(&ws);
        // A chain started at a directory outside the anchor holds no handle: nothing below
        // it is confirmed.
        let chain = DirChain::new(&root.anchored, &outside, FileCheck::Lookup);
        assert!(chain.handles.lock().unwrap().is_empty());
    }

    #[test]
    fn last_names_are_found_without_parsing() {
        assert_eq!(last_name(Path::new("/w/d/a.rs")), "a.rs");
        assert_eq!(last_name(Path::new("a.rs")), "a.rs");
        assert_eq!(last_name(Path::new("/w/d/")), "");
    }
}
