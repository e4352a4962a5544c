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
//! The lock directories live in a **private per-user directory** ([`default_lock_root`]:
//! `$XDG_STATE_HOME/kun/locks`, else `~/.local/state/kun/locks`), never in the shared temp
//! directory: another user could plant a lock there with a live pid and stall every write for
//! the whole timeout. Before each lock the root is checked (created `0700` when missing): it
//! must be a real directory owned by this user and closed to group and others; one that is
//! merely too open is tightened, one that belongs to someone else or is a symbolic link is
//! refused with [`LockError::Io`]. Processes of the same user share the root, so they still
//! serialise; different users writing one file do not (their own file permissions decide).
//!
//! Known limit: the liveness check trusts the pid, so a lock left by a crashed process whose
//! pid was reused is held until that process exits (or, if it never does, the wait times out
//! and the error names the lock directory to remove).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
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
    /// [`default_lock_root`], poll 25 ms, timeout 60 s, ownerless locks stale after 10 min.
    fn default() -> Self {
        Self {
            root: default_lock_root(),
            poll: Duration::from_millis(25),
            timeout: Duration::from_secs(60),
            ownerless_stale_after: Duration::from_secs(600),
        }
    }
}

/// The private per-user directory for lock directories: `$XDG_STATE_HOME/kun/locks` (an
/// absolute `XDG_STATE_HOME` only, as the XDG spec says), else `$HOME/.local/state/kun/locks`,
/// else — no usable home — `<temp dir>/kun-locks-<uid>`, which gets the same ownership
/// check as the others before use.
#[must_use]
pub fn default_lock_root() -> PathBuf {
    lock_root_from(
        std::env::var_os("XDG_STATE_HOME"),
        std::env::var_os("HOME"),
        rustix::process::geteuid().as_raw(),
    )
}

/// [`default_lock_root`] for these environment values.
fn lock_root_from(xdg_state_home: Option<OsString>, home: Option<OsString>, uid: u32) -> PathBuf {
    let absolute = |value: Option<OsString>| {
        value
            .map(PathBuf::from)
            .filter(|path| path.is_absolute() && path.parent().is_some())
    };
    if let Some(state) = absolute(xdg_state_home) {
        return state.join("kun").join("locks");
    }
    if let Some(home) = absolute(home) {
        return home.join(".local/state/kun/locks");
    }
    std::env::temp_dir().join(format!("kun-locks-{uid}"))
}

/// Makes sure `root` is a private directory of this user: created `0700` (with its missing
/// parents) when absent, tightened to `0700` when it is ours but open to others, refused when
/// it is a symbolic link, not a directory, or owned by another user.
fn ensure_private_root(root: &Path) -> std::io::Result<()> {
    match std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(root)
    {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(err),
    }
    let meta = std::fs::symlink_metadata(root)?;
    let refuse = |why: String| {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "the lock directory {} {why}, so locks there cannot be trusted; remove it, or \
                 set XDG_STATE_HOME to a directory of your own",
                root.display()
            ),
        ))
    };
    if meta.file_type().is_symlink() || !meta.is_dir() {
        return refuse("is not a plain directory (a symbolic link or a file)".to_owned());
    }
    let uid = rustix::process::geteuid().as_raw();
    if meta.uid() != uid {
        return refuse(format!(
            "belongs to user {} rather than to you (user {uid})",
            meta.uid()
        ));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
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
    ensure_private_root(&settings.root).map_err(io_error)?;
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
                ensure_private_root(&settings.root).map_err(io_error)?;
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
    fn the_lock_root_is_per_user_and_never_the_shared_temp_dir_when_a_home_exists() {
        let os = |s: &str| Some(OsString::from(s));
        let fallback = std::env::temp_dir().join("kun-locks-1000");
        let table: &[(Option<OsString>, Option<OsString>, PathBuf)] = &[
            (os("/state"), os("/home/u"), "/state/kun/locks".into()),
            (None, os("/home/u"), "/home/u/.local/state/kun/locks".into()),
            (
                os("relative"),
                os("/home/u"),
                "/home/u/.local/state/kun/locks".into(),
            ),
            (
                os(""),
                os("/home/u"),
                "/home/u/.local/state/kun/locks".into(),
            ),
            (None, os("/"), fallback.clone()),
            (None, os("home"), fallback.clone()),
            (None, None, fallback),
        ];
        for (xdg, home, expected) in table {
            assert_eq!(
                &lock_root_from(xdg.clone(), home.clone(), 1000),
                expected,
                "{xdg:?} {home:?}"
            );
        }
        let root = default_lock_root();
        assert_ne!(root, std::env::temp_dir().join("kun-file-locks"));
    }

    #[tokio::test]
    async fn the_root_is_created_private_and_an_open_one_is_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("state/kun/locks");
        let queue = MutationQueue::new(settings(&root));
        drop(queue.lock(&dir.path().join("f.txt")).await.unwrap());
        let mode = std::fs::metadata(&root).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700, "{mode:o}");

        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
        drop(queue.lock(&dir.path().join("f.txt")).await.unwrap());
        let mode = std::fs::metadata(&root).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700, "tightened: {mode:o}");
    }

    #[tokio::test]
    async fn a_symlinked_or_foreign_root_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let link = dir.path().join("locks");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let err = MutationQueue::new(settings(&link))
            .lock(&dir.path().join("f.txt"))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("not a plain directory"), "{err}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);

        if rustix::process::geteuid().is_root() {
            // Root can hand a directory to another user, as a planted one would be.
            let foreign = dir.path().join("foreign");
            std::fs::create_dir(&foreign).unwrap();
            std::fs::set_permissions(&foreign, std::fs::Permissions::from_mode(0o700)).unwrap();
            rustix::fs::chown(
                &foreign,
                Some(rustix::fs::Uid::from_raw(65_534)),
                Some(rustix::fs::Gid::from_raw(65_534)),
            )
            .unwrap();
            let err = MutationQueue::new(settings(&foreign))
                .lock(&dir.path().join("f.txt"))
                .await
                .unwrap_err();
            assert!(err.to_string().contains("belongs to user 65534"), "{err}");
        }
    }

    /// Issue 9: a lock planted in the shared temp dir with a live owner pid (here pid 1, which
    /// always runs) stalled writes for the whole timeout. The default queue no longer looks
    /// there.
    #[tokio::test]
    async fn a_lock_planted_in_the_shared_temp_dir_no_longer_matters() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("victim.txt");
        let key = MutationQueue::key_for(&file);
        let old_root = std::env::temp_dir().join("kun-file-locks");
        let planted = MutationQueue::new(LockSettings {
            root: old_root.clone(),
            ..settings(&old_root)
        })
        .lock_dir_for(&key);
        std::fs::create_dir_all(&planted).unwrap();
        let owner = Owner {
            pid: 1,
            created_at_ms: 0,
            key: key.display().to_string(),
        };
        std::fs::write(
            planted.join(OWNER_FILE),
            serde_json::to_vec(&owner).unwrap(),
        )
        .unwrap();

        let queue = MutationQueue::new(LockSettings {
            timeout: Duration::from_millis(300),
            ..LockSettings::default()
        });
        let guard = queue.lock(&file).await.unwrap();
        assert!(!queue.lock_dir_for(guard.key()).starts_with(&old_root));
        drop(guard);
        let _ = std::fs::remove_dir_all(&planted);
    }

    #[test]
    fn own_pid_is_alive_and_pid_zero_is_not() {
        assert!(process_is_alive(std::process::id()));
        assert!(!process_is_alive(0));
    }
}
