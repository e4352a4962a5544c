//! Artifact stores (pipeline step 18): where large outputs go instead of the model's context.
//!
//! An artifact id is `<hash>-<name>`: `hash` is the first 32 hex digits of the content's
//! blake3, `name` the caller's hint reduced to `[A-Za-z0-9._-]` (at most 64 characters, never
//! starting with `.`, `-` or `_`; `artifact` when nothing is left). So an id is always one
//! plain file name: a hint like `../../etc/passwd` becomes `etc_passwd`, and `get` refuses any
//! id that does not have this exact shape before touching a file. Equal content under an
//! equal hint gets the same id.

use kun_ports::{ArtifactError, ArtifactRef, ArtifactStore};
use rustc_hash::FxHashMap;
use std::fmt::Display;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Hex digits of the content hash kept in an id.
const HASH_DIGITS: usize = 32;
/// Longest name part of an id.
const MAX_NAME: usize = 64;

/// The id for `bytes` stored under `name_hint`.
///
/// ```
/// let id = kun_registry::artifacts::artifact_id("../../etc/passwd", b"x");
/// assert!(id.ends_with("-etc_passwd"));
/// assert!(!id.contains('/'));
/// ```
#[must_use]
pub fn artifact_id(name_hint: &str, bytes: &[u8]) -> String {
    let hash = blake3::hash(bytes).to_hex();
    format!("{}-{}", &hash[..HASH_DIGITS], sanitise_name(name_hint))
}

fn sanitise_name(hint: &str) -> String {
    let mapped: String = hint
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = mapped.trim_start_matches(['.', '-', '_']);
    let name: String = trimmed.chars().take(MAX_NAME).collect();
    if name.is_empty() {
        "artifact".to_owned()
    } else {
        name
    }
}

/// Checks that `id` has the shape [`artifact_id`] produces; returns its hash part.
fn parse_id(id: &str) -> Result<&str, ArtifactError> {
    let shaped = id.split_once('-').filter(|(hash, name)| {
        hash.len() == HASH_DIGITS
            && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            && !name.is_empty()
            && name.len() <= MAX_NAME
            && !name.starts_with(['.', '-', '_'])
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    });
    match shaped {
        Some((hash, _)) => Ok(hash),
        None => Err(error(format!(
            "`{}` is not an artifact id (expected <32 hex digits>-<name>, as returned by put)",
            id.escape_debug()
        ))),
    }
}

fn error(message: impl Into<String>) -> ArtifactError {
    ArtifactError {
        message: message.into(),
    }
}

fn unknown(id: &str) -> ArtifactError {
    error(format!(
        "no artifact with id `{id}`; use an id returned by an earlier put"
    ))
}

/// Artifacts held in memory, for tests and short-lived hosts. [`ArtifactRef::path`] is `None`.
#[derive(Debug, Default)]
pub struct InMemoryArtifactStore {
    blobs: Mutex<FxHashMap<String, Arc<[u8]>>>,
}

impl InMemoryArtifactStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

impl ArtifactStore for InMemoryArtifactStore {
    fn put(&self, name_hint: &str, bytes: &[u8]) -> Result<ArtifactRef, ArtifactError> {
        let id = artifact_id(name_hint, bytes);
        self.blobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(id.clone())
            .or_insert_with(|| Arc::from(bytes));
        Ok(ArtifactRef {
            id,
            path: None,
            byte_size: bytes.len() as u64,
        })
    }

    fn get(&self, id: &str) -> Result<Vec<u8>, ArtifactError> {
        parse_id(id)?;
        let blobs = self.blobs.lock().unwrap_or_else(PoisonError::into_inner);
        blobs.get(id).map(|b| b.to_vec()).ok_or_else(|| unknown(id))
    }
}

/// Artifacts stored as files named by their id in one directory.
///
/// Writes go to a hidden temporary file that is renamed into place, so a reader never sees a
/// partial artifact; `get` checks the content against the hash in the id, so a file changed
/// behind the store's back is reported, not returned.
#[derive(Debug)]
pub struct DirArtifactStore {
    dir: PathBuf,
}

/// Makes temporary file names unique within the process (the pid covers other processes).
static TEMP_SERIAL: AtomicU64 = AtomicU64::new(0);

impl DirArtifactStore {
    /// A store in `dir`, created (with its parents) when missing.
    ///
    /// # Errors
    /// When the directory cannot be created or is not a directory.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, ArtifactError> {
        let dir = dir.into();
        fs::create_dir_all(&dir)
            .map_err(|e| io_error("cannot create the artifact directory", &dir, e))?;
        if !dir.is_dir() {
            return Err(error(format!(
                "artifact directory {} is not a directory; configure another path",
                dir.display()
            )));
        }
        Ok(Self { dir })
    }

    /// The directory holding the artifacts.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn write_new(&self, target: &Path, bytes: &[u8]) -> io::Result<()> {
        let serial = TEMP_SERIAL.fetch_add(1, Ordering::Relaxed);
        let temp = self
            .dir
            .join(format!(".put-{}-{serial}", std::process::id()));
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .and_then(|mut file| file.write_all(bytes))
            .and_then(|()| fs::rename(&temp, target));
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written
    }
}

impl ArtifactStore for DirArtifactStore {
    fn put(&self, name_hint: &str, bytes: &[u8]) -> Result<ArtifactRef, ArtifactError> {
        let id = artifact_id(name_hint, bytes);
        let path = self.dir.join(&id);
        // Always (re)write: the rename is atomic, and a file changed behind our back is healed.
        self.write_new(&path, bytes)
            .map_err(|e| io_error("cannot store the artifact at", &path, e))?;
        Ok(ArtifactRef {
            id,
            path: Some(path),
            byte_size: bytes.len() as u64,
        })
    }

    fn get(&self, id: &str) -> Result<Vec<u8>, ArtifactError> {
        let hash = parse_id(id)?;
        let path = self.dir.join(id);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(unknown(id)),
            Err(e) => return Err(io_error("cannot read the artifact at", &path, e)),
        };
        if !blake3::hash(&bytes).to_hex().starts_with(hash) {
            return Err(error(format!(
                "artifact {} changed after it was stored (its content no longer matches its id); \
                 produce the output again",
                path.display()
            )));
        }
        Ok(bytes)
    }
}

fn io_error(what: &str, path: &Path, e: impl Display) -> ArtifactError {
    error(format!("{what} {}: {e}", path.display()))
}
