//! Per-thread turn catalogs: the first catalog of a turn is frozen for the rest of the turn.

use crate::drift::CatalogDrift;
use crate::fingerprint::CatalogFingerprint;
use crate::snapshot::RegistrySnapshot;
use kun_ports::ToolDescriptor;
use rustc_hash::FxHashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

/// The default number of threads remembered.
pub const DEFAULT_TRACKED_THREADS: usize = 1024;

/// A catalog as frozen for one turn.
pub struct FrozenCatalog {
    /// The tools, sorted by name.
    pub tools: Vec<ToolDescriptor>,
    /// Their fingerprint.
    pub fingerprint: CatalogFingerprint,
}

impl fmt::Debug for FrozenCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrozenCatalog")
            .field("tools", &self.tools.len())
            .field("fingerprint", &self.fingerprint.fingerprint)
            .finish()
    }
}

/// What [`TurnCatalogTracker::observe`] noticed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogChange {
    /// The thread's first turn: nothing to compare with.
    FirstTurn,
    /// The first listing of a new turn, compared with the previous turn's frozen catalog.
    NewTurn(CatalogDrift),
    /// A later listing of the same turn, compared with the frozen catalog. Anything but
    /// `Unchanged` is deferred: the model sees it next turn.
    Deferred(CatalogDrift),
}

/// The catalog a turn shows, and what changed.
#[derive(Debug, Clone)]
pub struct TurnCatalog {
    /// The frozen catalog of the turn.
    pub catalog: Arc<FrozenCatalog>,
    /// How it relates to earlier listings.
    pub change: CatalogChange,
}

struct ThreadState {
    turn_id: Box<str>,
    frozen: Arc<FrozenCatalog>,
    last_used: u64,
}

#[derive(Default)]
struct Table {
    threads: FxHashMap<Box<str>, ThreadState>,
    tick: u64,
}

/// Freezes the first catalog of each turn, per thread.
///
/// A runtime lists tools at each model step. Providers may change mid-turn (an MCP server
/// reconnects with new tools); showing the model a different catalog between two steps of one
/// turn would break its prompt cache and confuse it. So [`TurnCatalogTracker::observe`]:
///
/// * on the **first** listing of a turn freezes it and reports how it drifted from the
///   previous turn's frozen catalog ([`CatalogChange::NewTurn`]);
/// * on **later** listings of the same turn keeps answering the frozen catalog and reports
///   any difference as deferred drift ([`CatalogChange::Deferred`]), which becomes visible
///   on the next turn.
///
/// The table is bounded: above `capacity` threads the least recently used half is dropped.
pub struct TurnCatalogTracker {
    table: Mutex<Table>,
    capacity: usize,
}

impl Default for TurnCatalogTracker {
    fn default() -> Self {
        Self::new(DEFAULT_TRACKED_THREADS)
    }
}

impl fmt::Debug for TurnCatalogTracker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TurnCatalogTracker")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl TurnCatalogTracker {
    /// A tracker remembering at most `capacity` threads (at least one).
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            table: Mutex::new(Table::default()),
            capacity: capacity.max(1),
        }
    }

    /// Records a listing for `(thread_id, turn_id)`, taken from `snapshot`, and answers the
    /// catalog the turn shows. The snapshot only supplies cached tool hashes.
    #[must_use]
    pub fn observe(
        &self,
        thread_id: &str,
        turn_id: &str,
        snapshot: &RegistrySnapshot,
        listing: Vec<ToolDescriptor>,
    ) -> TurnCatalog {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        table.tick += 1;
        let tick = table.tick;

        if let Some(state) = table.threads.get_mut(thread_id) {
            state.last_used = tick;
            if &*state.turn_id == turn_id {
                let drift = drift_from_frozen(&state.frozen, snapshot, &listing);
                return TurnCatalog {
                    catalog: Arc::clone(&state.frozen),
                    change: CatalogChange::Deferred(drift),
                };
            }
            let frozen = freeze(snapshot, listing);
            let drift = CatalogDrift::between(&state.frozen.fingerprint, &frozen.fingerprint);
            state.turn_id = Box::from(turn_id);
            state.frozen = Arc::clone(&frozen);
            return TurnCatalog {
                catalog: frozen,
                change: CatalogChange::NewTurn(drift),
            };
        }

        let frozen = freeze(snapshot, listing);
        table.threads.insert(
            Box::from(thread_id),
            ThreadState {
                turn_id: Box::from(turn_id),
                frozen: Arc::clone(&frozen),
                last_used: tick,
            },
        );
        self.trim(&mut table);
        TurnCatalog {
            catalog: frozen,
            change: CatalogChange::FirstTurn,
        }
    }

    /// Forgets a thread.
    pub fn forget_thread(&self, thread_id: &str) {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        table.threads.remove(thread_id);
    }

    /// How many threads are remembered.
    #[must_use]
    pub fn len(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .threads
            .len()
    }

    /// Whether no thread is remembered.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the least recently used half when over capacity.
    fn trim(&self, table: &mut Table) {
        if table.threads.len() <= self.capacity {
            return;
        }
        let keep = (self.capacity / 2).max(1);
        let mut ticks: Vec<u64> = table.threads.values().map(|s| s.last_used).collect();
        ticks.sort_unstable_by(|a, b| b.cmp(a));
        let cutoff = ticks[keep - 1];
        table.threads.retain(|_, s| s.last_used >= cutoff);
    }
}

fn freeze(snapshot: &RegistrySnapshot, tools: Vec<ToolDescriptor>) -> Arc<FrozenCatalog> {
    let fingerprint = snapshot.fingerprint(&tools);
    Arc::new(FrozenCatalog { tools, fingerprint })
}

/// Drift of a later listing from the frozen one. When both hold the very same tools (the
/// usual case: nothing was re-registered) no hashing is needed.
fn drift_from_frozen(
    frozen: &FrozenCatalog,
    snapshot: &RegistrySnapshot,
    listing: &[ToolDescriptor],
) -> CatalogDrift {
    let same_tools = frozen.tools.len() == listing.len()
        && frozen
            .tools
            .iter()
            .zip(listing)
            .all(|(a, b)| Arc::ptr_eq(a.tool(), b.tool()));
    if same_tools {
        return CatalogDrift::Unchanged;
    }
    CatalogDrift::between(&frozen.fingerprint, &snapshot.fingerprint(listing))
}
