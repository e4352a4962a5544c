//! File I/O that never follows a final symbolic link.
//!
//! Paths reach these functions after the sandbox resolved them: the physical path has no
//! symlinks left. If the final component *is* a symlink now, it was swapped in after the
//! check, and following it could read or write outside the workspace. So reads open with
//! `O_NOFOLLOW`, and writes go through a handle on the parent directory:
//!
//! 1. the parent is created if missing, then opened (`O_DIRECTORY | O_NOFOLLOW`);
//! 2. the target is inspected with `fstatat(AT_SYMLINK_NOFOLLOW)`: a symlink, a directory or
//!    anything but a regular file is refused;
//! 3. the content goes to a new temporary file in that directory (`O_CREAT | O_EXCL |
//!    O_NOFOLLOW`), which takes the old file's permission bits;
//! 4. `renameat` moves it over the target. A rename replaces a directory entry and never
//!    follows it, so a link swapped in at the last moment is replaced, not written through.
//!
//! When no temporary file can be created (a directory the user may not write to), the target
//! itself is opened with `O_NOFOLLOW | O_TRUNC` and written in place: not atomic, still never
//! through a link.

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io::{self, Write as _};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a file could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    /// The final component is a symbolic link (swapped in after the sandbox check).
    #[error(
        "{} became a symbolic link after the path was checked; refusing to follow it. Check the path and try again",
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
    /// The failure the model reads, naming the file as `shown` (the workspace-relative path
    /// the model knows) instead of the physical path.
    pub(crate) fn named(self, shown: &str) -> crate::Failure {
        let message = match &self {
            Self::Symlink(_) => format!(
                "{shown} became a symbolic link after the path was checked; refusing to follow it. \
                 Check the path and try again"
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

/// Opens a regular file for reading without following a final symlink.
pub(crate) fn open_file(path: &Path) -> Result<File, FileError> {
    // O_NONBLOCK keeps a FIFO from blocking the open; it is refused just below.
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|errno| match errno {
        Errno::LOOP => FileError::Symlink(path.to_path_buf()),
        other => FileError::io(path, other),
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(|errno| FileError::io(path, errno))?;
    check_type(path, FileType::from_raw_mode(stat.st_mode))?;
    Ok(File::from(fd))
}

/// Reads a whole regular file without following a final symlink.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, FileError> {
    let mut file = open_file(path)?;
    let size = file.metadata().map_or(0, |meta| meta.len());
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    io::Read::read_to_end(&mut file, &mut bytes).map_err(|err| FileError::io(path, err))?;
    Ok(bytes)
}

/// Writes `bytes` as the whole content of `path` (creating parent directories), atomically
/// where possible, never through a final symlink. See the module docs.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<WriteKind, FileError> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(FileError::Directory(path.to_path_buf()));
    };
    std::fs::create_dir_all(parent).map_err(|err| FileError::io(parent, err))?;
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let dir = rustix::fs::open(parent, dir_flags, Mode::empty()).map_err(|errno| {
        let is_link =
            std::fs::symlink_metadata(parent).is_ok_and(|meta| meta.file_type().is_symlink());
        if is_link {
            FileError::Symlink(parent.to_path_buf())
        } else {
            FileError::io(parent, errno)
        }
    })?;
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
            let written = fill(fd, bytes, existing).and_then(|()| {
                rustix::fs::renameat(&dir, &temp_name, &dir, name).map_err(io::Error::from)
            });
            if let Err(err) = written {
                let _ = rustix::fs::unlinkat(&dir, &temp_name, AtFlags::empty());
                return Err(
                    match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                        Ok(stat)
                            if FileType::from_raw_mode(stat.st_mode) == FileType::Directory =>
                        {
                            FileError::Directory(path.to_path_buf())
                        }
                        _ => FileError::io(path, err),
                    },
                );
            }
            Ok(kind)
        }
        Err(Errno::ACCESS | Errno::PERM | Errno::ROFS) if existing.is_some() => {
            let flags = OFlags::WRONLY | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd =
                rustix::fs::openat(&dir, name, flags, Mode::empty()).map_err(
                    |errno| match errno {
                        Errno::LOOP => FileError::Symlink(path.to_path_buf()),
                        other => FileError::io(path, other),
                    },
                )?;
            fill(fd, bytes, None).map_err(|err| FileError::io(path, err))?;
            Ok(kind)
        }
        Err(errno) => Err(FileError::io(path, errno)),
    }
}

fn fill(fd: OwnedFd, bytes: &[u8], mode: Option<Mode>) -> io::Result<()> {
    if let Some(mode) = mode {
        rustix::fs::fchmod(&fd, mode)?;
    }
    let mut file = File::from(fd);
    file.write_all(bytes)?;
    file.flush()
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

    #[test]
    fn writes_create_then_replace_keeping_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/dir/file.txt");
        assert_eq!(write_file(&path, b"one").unwrap(), WriteKind::Created);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert_eq!(write_file(&path, b"two").unwrap(), WriteKind::Replaced);
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
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "secret").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert!(matches!(
            write_file(&link, b"x"),
            Err(FileError::Symlink(_))
        ));
        assert!(matches!(read_file(&link), Err(FileError::Symlink(_))));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret");
        assert!(matches!(
            write_file(dir.path(), b"x"),
            Err(FileError::Directory(_))
        ));
        assert!(matches!(
            read_file(dir.path()),
            Err(FileError::Directory(_))
        ));
        assert!(matches!(
            read_file(&dir.path().join("missing")),
            Err(FileError::NotFound(_))
        ));
    }
}
