//! The read-before-edit tracker (pipeline steps 9 and 18): an edit needs an earlier
//! observation of the same file in the same thread — a read, or an edit or write that left
//! it as it is — and the file must not have changed on disk since.
//!
//! | latest observation of the file in this thread | file on disk now | `check_edit` |
//! |---|---|---|
//! | none (or evicted, or thread cleared) | — | `NotRead` |
//! | with a revision | another revision | `Changed` |
//! | with a revision | the same revision | `Ok`: the edit tool reports an `oldText` that is not in the file (`edit_not_found`) |
//! | no revision, partial (a window, truncated) | — | `Ok`: there is nothing whole to compare with |
//! | no revision, complete, without text (an image) | — | `Ok` |
//! | no revision, complete, every non-blank fragment in it | — | `Ok` |
//! | no revision, complete, some non-blank fragment missing | — | `StaleOldText` |
//!
//! "No revision" means the observation carried none or the file cannot be stat'ed now.
//! Containment is checked after normalising both sides with the same [`Normaliser`].
//! Observations from earlier turns of the thread count; a new one replaces the record. A
//! successful `edit` or `write` is an observation of the file it left, so a chained edit of
//! text it just inserted needs no re-read.

use kun_ports::{FileRevision, ReadCheck, ReadObservation, ReadTracker};
use rustc_hash::FxHashMap;
use std::borrow::{Borrow, Cow};
use std::collections::hash_map::Entry;
use std::fmt;
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Turns text into the form compared by the tracker; applied to the read content and to each
/// fragment alike.
pub type Normaliser = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The default [`Normaliser`]: line endings unified to `\n` (CRLF and lone CR), and trailing
/// whitespace removed from every line.
///
/// ```
/// use kun_registry::read_tracker::normalise_line_ends;
/// assert_eq!(normalise_line_ends("a  \r\nb\t\rc"), "a\nb\nc");
/// ```
#[must_use]
pub fn normalise_line_ends(text: &str) -> String {
    let unified: Cow<'_, str> = if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    };
    let mut out = String::with_capacity(unified.len());
    for (index, line) in unified.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(line.trim_end());
    }
    out
}

/// How much an [`InMemoryReadTracker`] remembers; the least recently used entry goes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadTrackerBounds {
    /// Files remembered per thread. Default 128.
    pub files_per_thread: usize,
    /// Threads remembered. Default 128.
    pub threads: usize,
}

impl Default for ReadTrackerBounds {
    fn default() -> Self {
        Self {
            files_per_thread: 128,
            threads: 128,
        }
    }
}

/// The latest read of one file.
#[derive(Debug)]
struct ReadRecord {
    /// The normalised text, when the read returned text and the file had no revision.
    content: Option<String>,
    /// Only part of the file was returned.
    partial: bool,
    /// The file's revision when it was seen.
    revision: Option<FileRevision>,
}

/// A [`ReadTracker`] held in memory, keyed by thread and then by absolute path.
///
/// ```
/// use kun_ports::{FileRevision, ReadCheck, ReadObservation, ReadTracker};
/// use kun_registry::read_tracker::InMemoryReadTracker;
/// use std::path::Path;
///
/// let tracker = InMemoryReadTracker::default();
/// let path = Path::new("/ws/src/main.rs");
/// let seen = FileRevision { size: 14, modified_ns: 7 };
/// let later = FileRevision { size: 20, modified_ns: 9 };
/// let check = |texts: &[&str], now| {
///     let texts: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
///     tracker.check_edit("thread", path, &texts, now)
/// };
/// assert_eq!(check(&["fn main"], Some(seen)), ReadCheck::NotRead);
/// tracker.record_read("thread", ReadObservation {
///     path: path.to_owned(),
///     content: Some("fn main() {}\r\n".into()),
///     partial: false,
///     revision: Some(seen),
/// });
/// assert_eq!(check(&["fn main"], Some(seen)), ReadCheck::Ok);
/// // Not in the file, but the file is as read: the edit tool answers `edit_not_found`.
/// assert_eq!(check(&["fn other"], Some(seen)), ReadCheck::Ok);
/// assert_eq!(check(&["fn main"], Some(later)), ReadCheck::Changed);
/// // A file read without a revision: the fragments are compared with the text read.
/// let bare = Path::new("/ws/notes.txt");
/// tracker.record_read("thread", ReadObservation {
///     path: bare.to_owned(),
///     content: Some("alpha\nbeta\n".into()),
///     partial: false,
///     revision: None,
/// });
/// let texts = |t: &str| vec![t.to_owned()];
/// assert_eq!(tracker.check_edit("thread", bare, &texts("beta"), None), ReadCheck::Ok);
/// assert_eq!(tracker.check_edit("thread", bare, &texts("gamma"), None), ReadCheck::StaleOldText);
/// ```
pub struct InMemoryReadTracker {
    normaliser: Normaliser,
    bounds: ReadTrackerBounds,
    threads: Mutex<Lru<String, Lru<PathBuf, ReadRecord>>>,
}

impl InMemoryReadTracker {
    /// A tracker with the default bounds and [`normalise_line_ends`].
    #[must_use]
    pub fn new() -> Self {
        Self::with_normaliser(normalise_line_ends)
    }

    /// A tracker comparing text through `normaliser` (the composition root passes the edit
    /// engine's fuzzy normaliser, so the guard accepts what the edit would match).
    #[must_use]
    pub fn with_normaliser(normaliser: impl Fn(&str) -> String + Send + Sync + 'static) -> Self {
        Self::with_bounds(Arc::new(normaliser), ReadTrackerBounds::default())
    }

    /// A tracker with explicit bounds.
    #[must_use]
    pub fn with_bounds(normaliser: Normaliser, bounds: ReadTrackerBounds) -> Self {
        Self {
            normaliser,
            bounds,
            threads: Mutex::new(Lru::new(bounds.threads)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Lru<String, Lru<PathBuf, ReadRecord>>> {
        // No code path panics while holding the lock, so a poisoned map is still consistent.
        self.threads.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for InMemoryReadTracker {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for InMemoryReadTracker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryReadTracker")
            .field("bounds", &self.bounds)
            .finish_non_exhaustive()
    }
}

impl ReadTracker for InMemoryReadTracker {
    fn record_read(&self, thread_id: &str, observation: ReadObservation) {
        // The text matters only for a file without a revision (see `check_edit`): a revision
        // decides alone. Keeping it otherwise would hold up to every file a thread read.
        let content = if observation.revision.is_none() {
            observation.content.as_deref().map(|c| (self.normaliser)(c))
        } else {
            None
        };
        let record = ReadRecord {
            content,
            partial: observation.partial,
            revision: observation.revision,
        };
        let files_per_thread = self.bounds.files_per_thread;
        let mut threads = self.lock();
        let files = match threads.get_mut(thread_id) {
            Some(files) => files,
            None => threads.insert(thread_id.to_owned(), Lru::new(files_per_thread)),
        };
        files.insert(observation.path, record);
    }

    fn check_edit(
        &self,
        thread_id: &str,
        path: &Path,
        old_texts: &[String],
        current: Option<FileRevision>,
    ) -> ReadCheck {
        let mut threads = self.lock();
        let Some(record) = threads
            .get_mut(thread_id)
            .and_then(|files| files.get_mut(path))
        else {
            return ReadCheck::NotRead;
        };
        if let (Some(seen), Some(now)) = (record.revision, current) {
            return if seen == now {
                ReadCheck::Ok
            } else {
                ReadCheck::Changed
            };
        }
        let fragments: Vec<String> = old_texts
            .iter()
            .filter(|t| !t.trim().is_empty())
            .map(|t| (self.normaliser)(t))
            .filter(|t| !t.is_empty())
            .collect();
        let content = match (&record.content, record.partial) {
            (Some(content), false) => content,
            _ => return ReadCheck::Ok,
        };
        if fragments.iter().all(|f| content.contains(f.as_str())) {
            ReadCheck::Ok
        } else {
            ReadCheck::StaleOldText
        }
    }

    fn clear_thread(&self, thread_id: &str) {
        self.lock().remove(thread_id);
    }
}

/// A small least-recently-used map: lookups and inserts touch an entry; inserting a new key
/// at capacity evicts the entry touched longest ago (a scan of at most `capacity` entries,
/// only then).
#[derive(Debug)]
struct Lru<K, V> {
    entries: FxHashMap<K, (V, u64)>,
    clock: u64,
    capacity: usize,
}

impl<K: Hash + Eq, V> Lru<K, V> {
    fn new(capacity: usize) -> Self {
        Self {
            entries: FxHashMap::default(),
            clock: 0,
            capacity: capacity.max(1),
        }
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn get_mut<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let now = self.tick();
        let (value, used) = self.entries.get_mut(key)?;
        *used = now;
        Some(value)
    }

    /// Inserts or replaces the entry for `key` as the most recently used one.
    fn insert(&mut self, key: K, value: V) -> &mut V {
        let now = self.tick();
        if self.entries.len() >= self.capacity && !self.entries.contains_key(&key) {
            self.evict_oldest();
        }
        match self.entries.entry(key) {
            Entry::Occupied(entry) => {
                let slot = entry.into_mut();
                *slot = (value, now);
                &mut slot.0
            }
            Entry::Vacant(entry) => &mut entry.insert((value, now)).0,
        }
    }

    fn evict_oldest(&mut self) {
        let oldest = self.entries.values().map(|(_, used)| *used).min();
        if let Some(oldest) = oldest {
            // Ticks are unique, so this removes exactly one entry.
            self.entries.retain(|_, (_, used)| *used != oldest);
        }
    }

    fn remove<Q: Hash + Eq + ?Sized>(&mut self, key: &Q)
    where
        K: Borrow<Q>,
    {
        self.entries.remove(key);
    }
}
