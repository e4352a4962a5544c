//! The journal's file handle.
//!
//! Several processes may share one journal. Each opens it with `O_APPEND`, so every record,
//! written with one `write`, lands whole at the end. Appends hold a shared `flock`; reading the
//! whole file (on open) and replacing it (compaction) hold an exclusive one. After taking a
//! lock, a process checks that its handle is still the file at the path: if another process's
//! compaction renamed a new file into place, it reopens and tries again, so no record is
//! written into a file that no longer has a name.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// How a lock is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockKind {
    /// Appending: other appenders may run at the same time.
    Shared,
    /// Reading or replacing the whole file: nobody else touches it.
    Exclusive,
}

/// Which file a handle or path refers to (device and inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

/// An append handle on the journal, reopened when the file at the path changes.
#[derive(Debug)]
pub(crate) struct JournalFile {
    path: PathBuf,
    file: File,
    identity: Option<Identity>,
}

/// Attempts before giving up on a path whose file keeps being replaced.
const MAX_REOPENS: usize = 16;

impl JournalFile {
    /// Opens (creating, mode 0600 on Unix) the journal at `path` for reading and appending.
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        let file = open_append(path)?;
        let identity = identity(&file.metadata()?);
        Ok(Self {
            path: path.to_owned(),
            file,
            identity,
        })
    }

    /// Reopens the file now at the path (after a compaction replaced it).
    pub(crate) fn reopen(&mut self) -> io::Result<()> {
        *self = Self::open(&self.path)?;
        Ok(())
    }

    /// Runs `work` on the file currently at the path while holding a lock of `kind`; `work`
    /// also receives the file's length.
    pub(crate) fn with_lock<T>(
        &mut self,
        kind: LockKind,
        work: impl FnOnce(&File, u64) -> io::Result<T>,
    ) -> io::Result<T> {
        let len = self.lock_current(kind)?;
        let result = work(&self.file, len);
        unlock(&self.file);
        result
    }

    /// Locks the file at the path, reopening when the handle no longer names it; returns its
    /// length with the lock held.
    fn lock_current(&mut self, kind: LockKind) -> io::Result<u64> {
        for _ in 0..MAX_REOPENS {
            lock(&self.file, kind)?;
            match self.current_len() {
                Ok(Some(len)) => return Ok(len),
                Ok(None) => {
                    unlock(&self.file);
                    self.reopen()?;
                }
                Err(error) => {
                    unlock(&self.file);
                    return Err(error);
                }
            }
        }
        Err(io::Error::other(
            "the journal file kept being replaced by other processes while this one tried to use it",
        ))
    }

    /// The file's length when the handle is still the file at the path, `None` when the path
    /// now names another file (or none).
    fn current_len(&self) -> io::Result<Option<u64>> {
        let Some(ours) = self.identity else {
            return self.file.metadata().map(|m| Some(m.len()));
        };
        match fs::metadata(&self.path) {
            Ok(meta) if identity(&meta) == Some(ours) => Ok(Some(meta.len())),
            Ok(_) => Ok(None),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }
}

/// Opens `path` for reading and appending, creating it private to the user.
pub(crate) fn open_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

#[cfg(unix)]
fn identity(meta: &fs::Metadata) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    Some(Identity {
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

#[cfg(not(unix))]
fn identity(_meta: &fs::Metadata) -> Option<Identity> {
    None
}

#[cfg(unix)]
fn lock(file: &File, kind: LockKind) -> io::Result<()> {
    use rustix::fs::{FlockOperation, flock};
    let operation = match kind {
        LockKind::Shared => FlockOperation::LockShared,
        LockKind::Exclusive => FlockOperation::LockExclusive,
    };
    loop {
        match flock(file, operation) {
            Err(rustix::io::Errno::INTR) => {}
            other => return other.map_err(io::Error::from),
        }
    }
}

#[cfg(unix)]
fn unlock(file: &File) {
    // Unlocking an fd we hold cannot fail in a way we could act on; closing it would also
    // release the lock.
    let _ = rustix::fs::flock(file, rustix::fs::FlockOperation::Unlock);
}

/// Without `flock`, only one process may use a journal.
#[cfg(not(unix))]
fn lock(_file: &File, _kind: LockKind) -> io::Result<()> {
    Ok(())
}

#[cfg(not(unix))]
fn unlock(_file: &File) {}
