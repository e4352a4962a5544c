//! The file mutation queue: read-modify-write cycles on one file never interleave, within a
//! process or across processes.
//!
//! A mutation takes two locks, in this order, and holds both until its [`MutationGuard`]
//! drops (on success, error or cancellation alike):
//!
//! 1. **In process**: a FIFO async mutex per key. The key is the file's real path, or its
//!    lexical path while it (or a parent) does not exist. The entry is removed when its last
//!    user is done.
//! 2. **Across processes**: a lock directory `<root>/<blake3(key)>.lock`, created with a single
//!    non-recursive `mkdir` (atomic: exactly one creator wins), holding `owner.json` with the
//!    owner's pid, creation time and key. A contender that finds the directory:
//!    * whose owner pid is dead: removes it and retries at once;
//!    * without a readable owner: removes it only when the directory is older than
//!      [`LockSettings::ownerless_stale_after`] (a fresh one is being set up right now);
//!    * otherwise polls every [`LockSettings::poll`], giving up after
//!      [`LockSettings::timeout`] with [`LockError::Timeout`].
//!
//! Known limit: the liveness check trusts the pid, so a lock left by a crashed process whose
//! pid was reused is held until that process exits (or, if it never does, the wait times out
//! and the error names the lock directory to remove).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// The owner file inside a lock directory.
const OWNER_FILE: &str = "owner.json";

/// Where the cross-process locks live and how long to wait for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockSettings {
    /// The directory holding the lock directories (created on first use).
    pub root: PathBuf,
    /// How often a held lock is checked again.
    pub poll: Duration,
    /// How long to wait for a lock before giving up.
    pub timeout: Duration,
    /// When a lock directory without a readable owner counts as abandoned.
    pub ownerless_stale_after: Duration,
}

impl Default for LockSettings {
    /// `<temp dir>/kun-file-locks`, poll 25 ms, timeout 60 s, ownerless locks stale after 10 min.
    fn default() -> Self {
        Self {
            root: std::env::temp_dir().join("kun-file-locks"),
            poll: Duration::from_millis(25),
            timeout: Duration::from_secs(60),
            ownerless_stale_after: Duration::from_secs(600),
        }
    }
}

/// A lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another holder kept the lock for the whole timeout.
    #[error(
        "timed out after {} s waiting for another process to finish changing {}; try again later, \
         or remove {} if no kun process is running",
        .waited.as_secs(), .key.display(), .lock_dir.display()
    )]
    Timeout {
        /// The file.
        key: PathBuf,
        /// The lock directory.
        lock_dir: PathBuf,
        /// How long it waited.
        waited: Duration,
    },
    /// The lock directory could not be created or claimed.
    #[error("cannot take the file lock {}: {source}", .lock_dir.display())]
    Io {
        /// The lock directory.
        lock_dir: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl From<LockError> for crate::Failure {
    fn from(err: LockError) -> Self {
        let lock_dir = match &err {
            LockError::Timeout { lock_dir, .. } | LockError::Io { lock_dir, .. } => {
                lock_dir.display().to_string()
            }
        };
        Self::new(err.to_string())
            .with("reason", "file_lock_unavailable")
            .with("lock_dir", lock_dir)
    }
}

/// What the owner file records.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Owner {
    pid: u32,
    created_at_ms: u64,
    key: String,
}

type LocalLocks = Arc<Mutex<FxHashMap<PathBuf, Arc<AsyncMutex<()>>>>>;

/// Serialises mutations of the same file; see the module docs. Share one queue (in an `Arc`)
/// between every tool that writes files.
#[derive(Debug)]
pub struct MutationQueue {
    settings: LockSettings,
    local: LocalLocks,
}

impl Default for MutationQueue {
    fn default() -> Self {
        Self::new(LockSettings::default())
    }
}

impl MutationQueue {
    /// A queue with these settings.
    #[must_use]
    pub fn new(settings: LockSettings) -> Self {
        Self {
            settings,
            local: Arc::default(),
        }
    }

    /// The process-wide queue with the default settings.
    #[must_use]
    pub fn global() -> Arc<Self> {
        static GLOBAL: OnceLock<Arc<MutationQueue>> = OnceLock::new();
        Arc::clone(GLOBAL.get_or_init(|| Arc::new(Self::default())))
    }

    /// The settings in force.
    #[must_use]
    pub fn settings(&self) -> &LockSettings {
        &self.settings
    }

    /// The key a path locks under: its real path, or the path itself while it is missing.
    #[must_use]
    pub fn key_for(path: &Path) -> PathBuf {
        path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
    }

    /// The lock directory for a key.
    #[must_use]
    pub fn lock_dir_for(&self, key: &Path) -> PathBuf {
        let hash = blake3::hash(key.as_os_str().as_encoded_bytes());
        self.settings.root.join(format!("{}.lock", hash.to_hex()))
    }

    /// Waits for both locks on `path`; they are held until the guard drops.
    ///
    /// # Errors
    /// [`LockError::Timeout`] when another process holds the lock for the whole timeout;
    /// [`LockError::Io`] when the lock directory cannot be created.
    pub async fn lock(&self, path: &Path) -> Result<MutationGuard, LockError> {
        let entry = LocalEntry::join(Self::key_for(path), &self.local);
        let local = Arc::clone(&entry.mutex).lock_owned().await;
        let mut guard = MutationGuard {
            lock_dir: None,
            local: Some(local),
            entry,
        };
        let lock_dir = self.lock_dir_for(&guard.entry.key);
        acquire_dir(&lock_dir, &guard.entry.key, &self.settings).await?;
        guard.lock_dir = Some(lock_dir);
        Ok(guard)
    }
}

/// A use of an in-process lock entry; the last use removes the entry from the map.
#[derive(Debug)]
struct LocalEntry {
    key: PathBuf,
    mutex: Arc<AsyncMutex<()>>,
    locks: LocalLocks,
}

impl LocalEntry {
    fn join(key: PathBuf, locks: &LocalLocks) -> Self {
        let mutex = {
            let mut map = locks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            Arc::clone(map.entry(key.clone()).or_default())
        };
        Self {
            key,
            mutex,
            locks: Arc::clone(locks),
        }
    }
}

impl Drop for LocalEntry {
    fn drop(&mut self) {
        let mut map = self
            .locks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The map's reference and ours: nobody else uses or waits for this entry.
        if map
            .get(&self.key)
            .is_some_and(|entry| Arc::strong_count(entry) == 2)
        {
            map.remove(&self.key);
        }
    }
}

/// Holds a file's locks; dropping it releases them (the lock directory first).
#[derive(Debug)]
#[must_use = "the file is unlocked when the guard drops"]
pub struct MutationGuard {
    lock_dir: Option<PathBuf>,
    local: Option<OwnedMutexGuard<()>>,
    entry: LocalEntry,
}

impl MutationGuard {
    /// The key the file is locked under.
    #[must_use]
    pub fn key(&self) -> &Path {
        &self.entry.key
    }
}

impl Drop for MutationGuard {
    fn drop(&mut self) {
        if let Some(dir) = self.lock_dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
        // Release the mutex before `entry` drops, so the entry sees only its own reference.
        drop(self.local.take());
    }
}

/// What a contender found in an existing lock directory.
enum Holder {
    /// The owner is running (or cannot be judged): wait.
    Alive,
    /// The owner is gone, or the ownerless lock is old: take it over.
    Abandoned,
    /// The directory disappeared meanwhile: retry.
    Vanished,
}

async fn acquire_dir(
    lock_dir: &Path,
    key: &Path,
    settings: &LockSettings,
) -> Result<(), LockError> {
    let io_error = |source| LockError::Io {
        lock_dir: lock_dir.to_path_buf(),
        source,
    };
    let started = Instant::now();
    loop {
        match std::fs::create_dir(lock_dir) {
            Ok(()) => return claim(lock_dir, key).map_err(io_error),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                let retry_now = match inspect(lock_dir, settings.ownerless_stale_after) {
                    Holder::Vanished => true,
                    Holder::Abandoned => {
                        tracing::debug!(lock_dir = %lock_dir.display(), "taking over an abandoned file lock");
                        std::fs::remove_dir_all(lock_dir).is_ok()
                    }
                    Holder::Alive => false,
                };
                if retry_now {
                    continue;
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(&settings.root).map_err(io_error)?;
                if std::fs::create_dir(lock_dir).is_ok() {
                    return claim(lock_dir, key).map_err(io_error);
                }
            }
            Err(err) => return Err(io_error(err)),
        }
        let waited = started.elapsed();
        if waited >= settings.timeout {
            return Err(LockError::Timeout {
                key: key.to_path_buf(),
                lock_dir: lock_dir.to_path_buf(),
                waited,
            });
        }
        tokio::time::sleep(settings.poll.min(settings.timeout - waited)).await;
    }
}

/// Writes the owner file into a directory this process just created; removes it on failure.
fn claim(lock_dir: &Path, key: &Path) -> std::io::Result<()> {
    let created_at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let owner = Owner {
        pid: std::process::id(),
        created_at_ms,
        key: key.display().to_string(),
    };
    let written = serde_json::to_vec(&owner)
        .map_err(std::io::Error::other)
        .and_then(|bytes| std::fs::write(lock_dir.join(OWNER_FILE), bytes));
    if written.is_err() {
        let _ = std::fs::remove_dir_all(lock_dir);
    }
    written
}

fn inspect(lock_dir: &Path, ownerless_stale_after: Duration) -> Holder {
    let owner = std::fs::read(lock_dir.join(OWNER_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Owner>(&bytes).ok());
    if let Some(owner) = owner {
        return if process_is_alive(owner.pid) {
            Holder::Alive
        } else {
            Holder::Abandoned
        };
    }
    match std::fs::metadata(lock_dir).and_then(|meta| meta.modified()) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Holder::Vanished,
        Err(_) => Holder::Alive,
        Ok(modified) => {
            let age = SystemTime::now()
                .duration_since(modified)
                .unwrap_or(Duration::ZERO);
            if age >= ownerless_stale_after {
                Holder::Abandoned
            } else {
                Holder::Alive
            }
        }
    }
}

/// Whether `pid` names a running process (`kill(pid, 0)`; a permission error means it runs).
fn process_is_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(root: &Path) -> LockSettings {
        LockSettings {
            root: root.to_path_buf(),
            poll: Duration::from_millis(5),
            timeout: Duration::from_millis(300),
            ownerless_stale_after: Duration::from_secs(600),
        }
    }

    #[tokio::test]
    async fn lock_dir_exists_while_held_and_goes_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let queue = MutationQueue::new(settings(dir.path()));
        let file = dir.path().join("f.txt");
        let guard = queue.lock(&file).await.unwrap();
        let lock_dir = queue.lock_dir_for(guard.key());
        let owner: Owner =
            serde_json::from_slice(&std::fs::read(lock_dir.join(OWNER_FILE)).unwrap()).unwrap();
        assert_eq!(owner.pid, std::process::id());
        drop(guard);
        assert!(!lock_dir.exists());
        assert!(
            queue.local.lock().unwrap().is_empty(),
            "in-process entries are cleaned up"
        );
    }

    #[tokio::test]
    async fn a_second_queue_waits_then_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let first = MutationQueue::new(settings(dir.path()));
        let second = MutationQueue::new(settings(dir.path()));
        let file = dir.path().join("f.txt");
        let _held = first.lock(&file).await.unwrap();
        let err = second.lock(&file).await.unwrap_err();
        assert!(matches!(err, LockError::Timeout { .. }), "{err}");
        assert!(
            second.local.lock().unwrap().is_empty(),
            "a failed lock releases its in-process entry"
        );
    }

    #[test]
    fn own_pid_is_alive_and_pid_zero_is_not() {
        assert!(process_is_alive(std::process::id()));
        assert!(!process_is_alive(0));
    }
}
