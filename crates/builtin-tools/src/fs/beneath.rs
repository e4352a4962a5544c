//! Opening a checked path from its workspace root's directory handle, never through a
//! symbolic link.
//!
//! The sandbox decides (gate one resolves the path, follows every link and checks the
//! physical target against the roots, protected paths and read-blocked paths); this module
//! enforces that decision at the moment of the I/O. Between the check and the open another
//! process may swap any directory of the path for a symbolic link — to the outside, or to a
//! protected path inside the workspace (`.git/hooks`). So:
//!
//! 1. the **anchor** is the physical root the checked path lies in (opened by its real path:
//!    the root is the user's own choice, above the repository's reach);
//! 2. the rest of the path is opened **from the anchor's handle**: `openat2` with
//!    `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` where the kernel has it
//!    (Linux ≥ 5.6), otherwise a walk that opens one component at a time with
//!    `O_DIRECTORY | O_NOFOLLOW` from the previous component's handle.
//!
//! A checked physical path has no symbolic link left in it, so *any* link met on the way was
//! put there after the check: the open fails with `ELOOP` (or `EXDEV` for a `..` escape) and
//! the tool answers with a `sandbox_write_blocked` error instead of following it. Refusing
//! links *inside* the workspace too is deliberate, and why `cap-std` (which follows a link
//! as long as it stays beneath the root) is not used: a swap of `d1` for a link to
//! `.git/hooks` stays beneath the root but bypasses the protected-path decision.
//!
//! Under danger-full-access a path outside every root is anchored at `/`: the same walk,
//! so a swapped link is still refused rather than followed.

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Flags for every directory on the way.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// What `openat2` must refuse: leaving the anchor, and every link (magic ones included).
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// How often `openat2` is retried when the kernel answers `EAGAIN` (a rename elsewhere on
/// the system raced the lookup) before the component walk takes over.
const OPENAT2_RETRIES: usize = 4;

/// Set once `openat2` answered `ENOSYS` (an old kernel, or a seccomp filter that hides it).
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Whether the component walk is used instead of `openat2` (for tests of the fallback).
#[cfg(test)]
static FORCE_WALK: AtomicBool = AtomicBool::new(false);

fn openat2_usable() -> bool {
    #[cfg(test)]
    if FORCE_WALK.load(Ordering::Relaxed) {
        return false;
    }
    !NO_OPENAT2.load(Ordering::Relaxed)
}

/// A checked physical path split into the anchor it is opened from and the components below.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Beneath {
    /// The physical root (or `/`).
    anchor: PathBuf,
    /// The path below the anchor: plain names only.
    relative: PathBuf,
}

impl Beneath {
    /// Anchors `physical` at the first of `roots` whose real path contains it, else at `/`.
    ///
    /// A root that `physical` starts with as written is the anchor as written: a checked
    /// physical path has no link left in it, so such a root is already its own real path
    /// (and the root is the user's choice, opened like its canonical form would be). Only a
    /// root written otherwise (through a link, relative) is canonicalised, which spares
    /// every call a `readlink` walk over the root.
    pub(crate) fn locate<'a>(
        physical: &Path,
        roots: impl IntoIterator<Item = &'a PathBuf>,
    ) -> Self {
        for root in roots {
            if root.is_absolute()
                && let Ok(relative) = physical.strip_prefix(root)
                && only_names(relative)
            {
                return Self {
                    anchor: root.clone(),
                    relative: relative.to_path_buf(),
                };
            }
            let Ok(real) = root.canonicalize() else {
                continue;
            };
            if let Ok(relative) = physical.strip_prefix(&real)
                && only_names(relative)
            {
                return Self {
                    anchor: real,
                    relative: relative.to_path_buf(),
                };
            }
        }
        let root = Path::new("/");
        Self {
            anchor: root.to_path_buf(),
            relative: physical
                .strip_prefix(root)
                .unwrap_or(physical)
                .to_path_buf(),
        }
    }

    /// The whole physical path.
    pub(crate) fn physical(&self) -> PathBuf {
        self.anchor.join(&self.relative)
    }

    /// The final name and the directory holding it (`None` for the anchor itself).
    pub(crate) fn split(&self) -> Option<(&Path, &OsStr)> {
        let name = self.relative.file_name()?;
        Some((self.relative.parent().unwrap_or(Path::new("")), name))
    }

    /// The anchor opened, for checking many paths below it.
    pub(crate) fn anchored(&self) -> Result<Anchored, Errno> {
        Ok(Anchored {
            path: self.anchor.clone(),
            fd: self.open_anchor()?,
        })
    }

    fn open_anchor(&self) -> Result<OwnedFd, Errno> {
        // The anchor is the user's root (or `/`): it is opened by its real path, following
        // nothing below it.
        rustix::fs::open(&self.anchor, DIR_FLAGS, Mode::empty())
    }

    /// Opens the path itself with `flags` (`O_NOFOLLOW` and `O_CLOEXEC` are added).
    pub(crate) fn open(&self, flags: OFlags) -> Result<OwnedFd, Errno> {
        let anchor = self.open_anchor()?;
        open_below(anchor.as_fd(), &self.relative, flags)
    }

    /// Opens the directory holding the path's final name (creating the missing directories
    /// on the way, one `mkdirat` at a time, when `create`), and returns it with that name.
    pub(crate) fn open_parent(&self, create: bool) -> Result<Option<(OwnedFd, &OsStr)>, Errno> {
        let Some((dir, name)) = self.split() else {
            return Ok(None);
        };
        let anchor = self.open_anchor()?;
        if dir.as_os_str().is_empty() {
            return Ok(Some((anchor, name)));
        }
        match try_openat2(anchor.as_fd(), dir, DIR_FLAGS) {
            Ok(Some(fd)) => return Ok(Some((fd, name))),
            Ok(None) => {}
            Err(Errno::NOENT) if create => {}
            Err(errno) => return Err(errno),
        }
        Ok(Some((walk(anchor.as_fd(), dir, create)?, name)))
    }
}

/// Whether `path` is made of plain names only (no `..`, `.`, or root).
fn only_names(path: &Path) -> bool {
    path.components()
        .all(|component| matches!(component, Component::Normal(_)))
}

/// `openat2` beneath `anchor`; `Ok(None)` when the kernel lacks it (or kept answering
/// `EAGAIN`) and the walk must be used.
fn try_openat2(
    anchor: BorrowedFd<'_>,
    relative: &Path,
    flags: OFlags,
) -> Result<Option<OwnedFd>, Errno> {
    if !openat2_usable() {
        return Ok(None);
    }
    let relative = if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    };
    for _ in 0..OPENAT2_RETRIES {
        match rustix::fs::openat2(anchor, relative, flags, Mode::empty(), RESOLVE) {
            Ok(fd) => return Ok(Some(fd)),
            Err(Errno::AGAIN) => {}
            // A link where a directory should be (`O_DIRECTORY | O_NOFOLLOW`), or a file in
            // the middle: the walk tells which.
            Err(Errno::NOTDIR) => return Ok(None),
            Err(Errno::NOSYS) => {
                // No openat2 (an old kernel, or a seccomp filter hiding it): walk from now on.
                NO_OPENAT2.store(true, Ordering::Relaxed);
                return Ok(None);
            }
            Err(errno) => return Err(errno),
        }
    }
    Ok(None)
}

/// Opens `relative` (plain names) below `anchor` one directory at a time, never following a
/// link; missing directories are made when `create`.
fn walk(anchor: BorrowedFd<'_>, relative: &Path, create: bool) -> Result<OwnedFd, Errno> {
    let mut dir = rustix::fs::openat(anchor, ".", DIR_FLAGS, Mode::empty())?;
    for component in relative.components() {
        let Component::Normal(name) = component else {
            return Err(Errno::XDEV);
        };
        dir = step(&dir, name, create)?;
    }
    Ok(dir)
}

/// One step of [`walk`]: the directory `name` inside `dir`.
fn step(dir: &OwnedFd, name: &OsStr, create: bool) -> Result<OwnedFd, Errno> {
    match rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty()) {
        Err(Errno::NOENT) if create => {
            match rustix::fs::mkdirat(dir, name, Mode::from_bits_truncate(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(errno) => return Err(errno),
            }
            rustix::fs::openat(dir, name, DIR_FLAGS, Mode::empty())
        }
        // `O_DIRECTORY | O_NOFOLLOW` on a link answers ENOTDIR. Unless a plain file stands
        // there (a real "not a directory"), the entry is a link or changed under us: a swap.
        Err(Errno::NOTDIR) => {
            let plain_file =
                rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|stat| {
                    !matches!(
                        FileType::from_raw_mode(stat.st_mode),
                        FileType::Symlink | FileType::Directory
                    )
                });
            Err(if plain_file {
                Errno::NOTDIR
            } else {
                Errno::LOOP
            })
        }
        other => other,
    }
}

/// Opens `relative` below `anchor` with `flags` (plus `O_NOFOLLOW | O_CLOEXEC`): `openat2`
/// beneath, else the walk to its directory and a no-follow open of the name.
fn open_below(anchor: BorrowedFd<'_>, relative: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if let Some(fd) = try_openat2(anchor, relative, flags)? {
        return Ok(fd);
    }
    match (relative.parent(), relative.file_name()) {
        (Some(dir), Some(name)) => {
            let dir = walk(anchor, dir, false)?;
            rustix::fs::openat(&dir, name, flags, Mode::empty())
        }
        _ if only_names(relative) => rustix::fs::openat(anchor, ".", flags, Mode::empty()),
        _ => Err(Errno::XDEV),
    }
}

/// An opened anchor, for checking the many entries of a directory walk (`ls`, `glob`,
/// `grep`), which reads directories by path: an entry counts only when the same path,
/// opened beneath the anchor through no link, is the same inode the walk saw.
#[derive(Debug)]
pub(crate) struct Anchored {
    path: PathBuf,
    fd: OwnedFd,
}

impl Anchored {
    /// Opens the absolute `path` (under the anchor) with `flags`, beneath the anchor and
    /// through no link.
    pub(crate) fn open(&self, path: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
        let relative = path.strip_prefix(&self.path).map_err(|_| Errno::XDEV)?;
        if !only_names(relative) {
            return Err(Errno::XDEV);
        }
        open_below(self.fd.as_fd(), relative, flags)
    }

    /// Whether `path` is, opened beneath the anchor through no link, the entry with inode
    /// `ino` (what the walk's `readdir` reported), and not a link itself.
    pub(crate) fn confirms(&self, path: &Path, ino: Option<u64>) -> bool {
        let Ok(fd) = self.open(path, OFlags::PATH) else {
            return false;
        };
        rustix::fs::fstat(&fd).is_ok_and(|stat| {
            FileType::from_raw_mode(stat.st_mode) != FileType::Symlink
                && ino.is_none_or(|ino| stat.st_ino == ino)
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]
    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f"), "inside").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("f"), "outside").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("inner")).unwrap();
        (dir, root, outside)
    }

    fn check_both(test: impl Fn()) {
        FORCE_WALK.store(false, Ordering::Relaxed);
        test();
        FORCE_WALK.store(true, Ordering::Relaxed);
        test();
        FORCE_WALK.store(false, Ordering::Relaxed);
    }

    #[test]
    fn locate_anchors_at_the_containing_root_or_slash() {
        let (_dir, root, _outside) = setup();
        let other = PathBuf::from("/nonexistent-root");
        let at = Beneath::locate(&root.join("a/b/f"), [&other, &root]);
        assert_eq!(at.anchor, root);
        assert_eq!(at.relative, Path::new("a/b/f"));
        assert_eq!(at.physical(), root.join("a/b/f"));
        let out = Beneath::locate(Path::new("/etc/hostname"), [&root]);
        assert_eq!(out.anchor, Path::new("/"));
        assert_eq!(out.relative, Path::new("etc/hostname"));
    }

    #[test]
    fn a_root_written_through_a_link_or_relative_is_anchored_at_its_real_path() {
        let (_dir, root, outside) = setup();
        // `root/inner` is a link to `root/a`: as a root, it is anchored where it leads.
        let linked = root.join("inner");
        let at = Beneath::locate(&root.join("a/b/f"), [&linked]);
        assert_eq!(at.anchor, root.join("a"));
        assert_eq!(at.relative, Path::new("b/f"));
        // A root that is a prefix of the path only as text through a link is not taken as
        // written: `root/link/f` is really `outside/f`, beneath no root here.
        let real_outside = outside.path().canonicalize().unwrap();
        let at = Beneath::locate(&real_outside.join("f"), [&root.join("link")]);
        assert_eq!(at.anchor, real_outside);
        assert_eq!(at.relative, Path::new("f"));
        let relative = PathBuf::from(".");
        let here = std::env::current_dir().unwrap().canonicalize().unwrap();
        let at = Beneath::locate(&here.join("x"), [&relative]);
        assert_eq!(at.anchor, here);
        assert_eq!(at.relative, Path::new("x"));
    }

    #[test]
    fn opens_plain_paths_and_refuses_every_link_on_the_way() {
        let (_dir, root, _outside) = setup();
        check_both(|| {
            let at = |rel: &str| Beneath::locate(&root.join(rel), [&root]);
            assert!(at("a/b/f").open(OFlags::RDONLY).is_ok());
            assert_eq!(at("link/f").open(OFlags::RDONLY).unwrap_err(), Errno::LOOP);
            // A link that stays inside the workspace is refused too (protected paths).
            assert_eq!(
                at("inner/b/f").open(OFlags::RDONLY).unwrap_err(),
                Errno::LOOP
            );
            assert_eq!(
                at("a/missing").open(OFlags::RDONLY).unwrap_err(),
                Errno::NOENT
            );
            assert!(matches!(at("link/new").open_parent(true), Err(Errno::LOOP)));
        });
    }

    #[test]
    fn open_parent_creates_missing_directories_beneath() {
        let (_dir, root, _outside) = setup();
        check_both(|| {
            let at = Beneath::locate(&root.join("x/y/z/file"), [&root]);
            let (dir, name) = at.open_parent(true).unwrap().unwrap();
            assert_eq!(name, "file");
            assert!(rustix::fs::statat(&dir, ".", rustix::fs::AtFlags::empty()).is_ok());
            assert!(root.join("x/y/z").is_dir());
            std::fs::remove_dir_all(root.join("x")).unwrap();
        });
        let at = Beneath::locate(&root, [&root]);
        assert!(at.open_parent(true).unwrap().is_none());
    }

    #[test]
    fn walk_entries_are_confirmed_by_inode_through_no_link() {
        use std::os::unix::fs::MetadataExt as _;
        let (_dir, root, _outside) = setup();
        let anchored = Beneath::locate(&root, [&root]).anchored().unwrap();
        let file = root.join("a/b/f");
        let ino = std::fs::metadata(&file).unwrap().ino();
        check_both(|| {
            assert!(anchored.confirms(&file, Some(ino)));
            assert!(!anchored.confirms(&file, Some(ino + 1)), "another inode");
            assert!(
                !anchored.confirms(&root.join("inner/b/f"), None),
                "through a link"
            );
            assert!(
                !anchored.confirms(&root.join("link"), None),
                "a link itself"
            );
            assert!(
                !anchored.confirms(Path::new("/etc/hostname"), None),
                "outside"
            );
            assert_eq!(
                anchored
                    .open(&root.join("link/f"), OFlags::RDONLY)
                    .unwrap_err(),
                Errno::LOOP
            );
        });
    }
}
