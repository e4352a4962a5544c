//! File I/O beneath the workspace root's handle, never through a symbolic link.
//!
//! Paths reach these functions after the sandbox resolved and checked them: the physical
//! path has no symlinks left. Every open goes through [`Beneath`]: from the root's directory
//! handle, refusing any link on the way (one swapped in after the check). Reads open the
//! file itself that way; writes go through a handle on the parent directory:
//!
//! 1. the parent is opened beneath the root (missing directories made one `mkdirat` at a
//!    time, each beneath the previous handle);
//! 2. the target is inspected with `fstatat(AT_SYMLINK_NOFOLLOW)`: a symlink, a directory or
//!    anything but a regular file is refused;
//! 3. the content goes to a new temporary file in that directory (`O_CREAT | O_EXCL |
//!    O_NOFOLLOW`), which takes the old file's permission bits;
//! 4. `renameat` moves it over the target within the same directory handle. A rename
//!    replaces a directory entry and never follows it, so a link swapped in at the last
//!    moment is replaced, not written through; and a directory swapped away after step 1
//!    does not matter: the handle still names the checked directory.
//!
//! When no temporary file can be created (a directory the user may not write to), the target
//! itself is opened with `O_NOFOLLOW | O_TRUNC` and written in place: not atomic, still never
//! through a link.

use super::beneath::Beneath;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::fs::Metadata;
use std::io::{self, Write as _};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a file could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    /// A component of the path is a symbolic link or leads out of the root (swapped in
    /// after the sandbox check).
    #[error(
        "{} (or a directory above it) became a symbolic link after the path was checked; refusing to follow it. Check the path and try again",
        .0.display()
    )]
    Symlink(PathBuf),
    /// The path is a directory.
    #[error("{} is a directory, not a file; list it with ls or pick a file inside it", .0.display())]
    Directory(PathBuf),
    /// The path is a device, socket or pipe.
    #[error("{} is not a regular file", .0.display())]
    NotRegular(PathBuf),
    /// Nothing is there.
    #[error("{} does not exist; check the path with ls or glob", .0.display())]
    NotFound(PathBuf),
    /// Any other I/O error.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl FileError {
    fn io(path: &Path, source: impl Into<io::Error>) -> Self {
        let source = source.into();
        match source.kind() {
            io::ErrorKind::NotFound => Self::NotFound(path.to_path_buf()),
            _ => Self::Io {
                path: path.to_path_buf(),
                source,
            },
        }
    }
}

impl FileError {
    /// An open's error: a link met on the way (`ELOOP`) or a `..` escape (`EXDEV`) is
    /// [`FileError::Symlink`].
    fn open(path: &Path, errno: Errno) -> Self {
        match errno {
            Errno::LOOP | Errno::XDEV => Self::Symlink(path.to_path_buf()),
            other => Self::io(path, other),
        }
    }
}

impl FileError {
    /// The failure the model reads, naming the file as `shown` (the workspace-relative path
    /// the model knows) instead of the physical path.
    pub(crate) fn named(self, shown: &str) -> crate::Failure {
        let message = match &self {
            Self::Symlink(_) => format!(
                "{shown} (or a directory above it) became a symbolic link after the path was \
                 checked; refusing to follow it. Check the path and try again"
            ),
            Self::Directory(_) => {
                format!(
                    "{shown} is a directory, not a file; list it with ls or pick a file inside it"
                )
            }
            Self::NotRegular(_) => format!("{shown} is not a regular file"),
            Self::NotFound(_) => format!("{shown} does not exist; check the path with ls or glob"),
            Self::Io { source, .. } => format!("{shown}: {source}"),
        };
        self.with_message(message)
    }

    fn with_message(self, message: String) -> crate::Failure {
        match self {
            Self::Symlink(_) => {
                crate::Failure::coded(kun_ports::ErrorCode::SandboxWriteBlocked, message)
            }
            Self::NotFound(_) => crate::Failure::new(message).with("reason", "file_not_found"),
            _ => crate::Failure::new(message),
        }
    }
}

impl From<FileError> for crate::Failure {
    fn from(err: FileError) -> Self {
        let message = err.to_string();
        err.with_message(message)
    }
}

/// Whether a write created the file or replaced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// There was no file.
    Created,
    /// An existing file was replaced.
    Replaced,
}

/// A finished write: whether it created the file, and the file's metadata as written.
#[derive(Debug)]
pub(crate) struct Written {
    /// Created or replaced.
    pub(crate) kind: WriteKind,
    /// The new file's metadata (taken from its handle, not by path).
    pub(crate) metadata: Metadata,
}

/// Opens a regular file for reading, beneath its root, through no symlink.
pub(crate) fn open_file(at: &Beneath) -> Result<File, FileError> {
    let path = at.physical();
    // O_NONBLOCK keeps a FIFO from blocking the open; it is refused just below.
    let fd = at
        .open(OFlags::RDONLY | OFlags::NONBLOCK)
        .map_err(|errno| FileError::open(&path, errno))?;
    let stat = rustix::fs::fstat(&fd).map_err(|errno| FileError::io(&path, errno))?;
    check_type(&path, FileType::from_raw_mode(stat.st_mode))?;
    Ok(File::from(fd))
}

/// Reads a whole regular file, beneath its root, through no symlink.
pub(crate) fn read_file(at: &Beneath) -> Result<Vec<u8>, FileError> {
    let mut file = open_file(at)?;
    let size = file.metadata().map_or(0, |meta| meta.len());
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    io::Read::read_to_end(&mut file, &mut bytes)
        .map_err(|err| FileError::io(&at.physical(), err))?;
    Ok(bytes)
}

/// Writes `bytes` as the whole content of the file (creating parent directories), atomically
/// where possible, beneath its root and through no symlink. See the module docs.
pub(crate) fn write_file(at: &Beneath, bytes: &[u8]) -> Result<Written, FileError> {
    let path = at.physical();
    let path = path.as_path();
    let (dir, name) = match at.open_parent(true) {
        Ok(Some(found)) => found,
        Ok(None) => return Err(FileError::Directory(path.to_path_buf())),
        Err(errno) => return Err(FileError::open(path, errno)),
    };
    let existing = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => {
            check_type(path, FileType::from_raw_mode(stat.st_mode))?;
            Some(Mode::from_raw_mode(stat.st_mode) & Mode::from_bits_truncate(0o7777))
        }
        Err(Errno::NOENT) => None,
        Err(errno) => return Err(FileError::io(path, errno)),
    };
    let kind = if existing.is_some() {
        WriteKind::Replaced
    } else {
        WriteKind::Created
    };
    let temp_name = temp_name(name);
    let temp_flags =
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(
        &dir,
        &temp_name,
        temp_flags,
        Mode::from_bits_truncate(0o666),
    ) {
        Ok(fd) => {
            let written = fill(fd, bytes, existing).and_then(|metadata| {
                rustix::fs::renameat(&dir, &temp_name, &dir, name)
                    .map(|()| metadata)
                    .map_err(io::Error::from)
            });
            match written {
                Ok(metadata) => Ok(Written { kind, metadata }),
                Err(err) => {
                    let _ = rustix::fs::unlinkat(&dir, &temp_name, AtFlags::empty());
                    Err(
                        match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                            Ok(stat)
                                if FileType::from_raw_mode(stat.st_mode) == FileType::Directory =>
                            {
                                FileError::Directory(path.to_path_buf())
                            }
                            _ => FileError::io(path, err),
                        },
                    )
                }
            }
        }
        Err(Errno::ACCESS | Errno::PERM | Errno::ROFS) if existing.is_some() => {
            let flags = OFlags::WRONLY | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&dir, name, flags, Mode::empty())
                .map_err(|errno| FileError::open(path, errno))?;
            let metadata = fill(fd, bytes, None).map_err(|err| FileError::io(path, err))?;
            Ok(Written { kind, metadata })
        }
        Err(errno) => Err(FileError::io(path, errno)),
    }
}

fn fill(fd: OwnedFd, bytes: &[u8], mode: Option<Mode>) -> io::Result<Metadata> {
    if let Some(mode) = mode {
        rustix::fs::fchmod(&fd, mode)?;
    }
    let mut file = File::from(fd);
    file.write_all(bytes)?;
    file.flush()?;
    file.metadata()
}

fn check_type(path: &Path, kind: FileType) -> Result<(), FileError> {
    match kind {
        FileType::RegularFile => Ok(()),
        FileType::Symlink => Err(FileError::Symlink(path.to_path_buf())),
        FileType::Directory => Err(FileError::Directory(path.to_path_buf())),
        _ => Err(FileError::NotRegular(path.to_path_buf())),
    }
}

/// A fresh hidden name beside the target: `.<name>.kun-<pid>-<n>.tmp`.
fn temp_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut temp = std::ffi::OsString::from(".");
    temp.push(name);
    temp.push(format!(".kun-{}-{n}.tmp", std::process::id()));
    temp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(root: &Path, path: &Path) -> Beneath {
        Beneath::locate(path, [&root.canonicalize().unwrap()])
    }

    #[test]
    fn writes_create_then_replace_keeping_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("sub/dir/file.txt");
        let target = at(dir.path(), &path);
        assert_eq!(
            write_file(&target, b"one").unwrap().kind,
            WriteKind::Created
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(
            write_file(&target, b"two").unwrap().kind,
            WriteKind::Replaced
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary files are left behind");
    }

    #[test]
    fn symlinks_and_directories_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let outside = root.join("outside.txt");
        std::fs::write(&outside, "secret").unwrap();
        let link = root.join("link.txt");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert!(matches!(
            write_file(&at(&root, &link), b"x"),
            Err(FileError::Symlink(_))
        ));
        assert!(matches!(
            read_file(&at(&root, &link)),
            Err(FileError::Symlink(_))
        ));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
        assert!(matches!(
            write_file(&at(&root, &root), b"x"),
            Err(FileError::Directory(_))
        ));
        assert!(matches!(
            read_file(&at(&root, &root)),
            Err(FileError::Directory(_))
        ));
        assert!(matches!(
            read_file(&at(&root, &root.join("missing"))),
            Err(FileError::NotFound(_))
        ));
    }
}
