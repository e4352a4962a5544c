//! Turn pinning: a turn keeps the components it started with.

use rustc_hash::FxHashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

/// The default number of pinned turns.
pub const DEFAULT_PINNED_TURNS: usize = 4096;

struct Pin<T> {
    value: T,
    last_used: u64,
}

struct Table<T> {
    /// thread → turn → pin; two levels so a lookup borrows both ids without building a key.
    threads: FxHashMap<Box<str>, FxHashMap<Box<str>, Pin<T>>>,
    len: usize,
    tick: u64,
}

/// A bounded table of per-turn pinned values.
///
/// The first time a `(thread, turn)` reaches the host, the host captures the current registry
/// snapshot and hooks; every later listing and call of that turn uses the captured ones. So
/// replacing providers or hooks affects new turns only, and a turn never sees half of a
/// change.
///
/// The table is bounded: above `capacity` pins the least recently used half is dropped (a
/// dropped turn that comes back simply pins the current components again). Lookups do not
/// allocate.
pub struct TurnPins<T> {
    table: Mutex<Table<T>>,
    capacity: usize,
}

impl<T> fmt::Debug for TurnPins<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TurnPins")
            .field("len", &self.len())
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl<T: Clone> TurnPins<T> {
    /// A table holding at most `capacity` pins (at least one).
    #[must_use]
    pub fn new(capacity: usize) -> Self {
        Self {
            table: Mutex::new(Table {
                threads: FxHashMap::default(),
                len: 0,
                tick: 0,
            }),
            capacity: capacity.max(1),
        }
    }

    /// The value pinned for the turn, pinning `current()` first if the turn is new.
    pub fn pin(&self, thread_id: &str, turn_id: &str, current: impl FnOnce() -> T) -> T {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        table.tick += 1;
        let tick = table.tick;
        if let Some(pin) = table
            .threads
            .get_mut(thread_id)
            .and_then(|turns| turns.get_mut(turn_id))
        {
            pin.last_used = tick;
            return pin.value.clone();
        }
        let value = current();
        table
            .threads
            .entry(Box::from(thread_id))
            .or_default()
            .insert(
                Box::from(turn_id),
                Pin {
                    value: value.clone(),
                    last_used: tick,
                },
            );
        table.len += 1;
        if table.len > self.capacity {
            self.trim(&mut table);
        }
        value
    }

    /// Unpins a finished turn; returns whether it was pinned.
    pub fn release(&self, thread_id: &str, turn_id: &str) -> bool {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(turns) = table.threads.get_mut(thread_id) else {
            return false;
        };
        let removed = turns.remove(turn_id).is_some();
        if turns.is_empty() {
            table.threads.remove(thread_id);
        }
        if removed {
            table.len -= 1;
        }
        removed
    }

    /// Keeps the most recently used half.
    fn trim(&self, table: &mut Table<T>) {
        let keep = (self.capacity / 2).max(1);
        let mut ticks: Vec<u64> = table
            .threads
            .values()
            .flat_map(|turns| turns.values().map(|p| p.last_used))
            .collect();
        ticks.sort_unstable_by(|a, b| b.cmp(a));
        let cutoff = ticks[keep - 1];
        let mut len = 0;
        table.threads.retain(|_, turns| {
            turns.retain(|_, pin| pin.last_used >= cutoff);
            len += turns.len();
            !turns.is_empty()
        });
        table.len = len;
    }
}

impl<T> TurnPins<T> {
    /// How many turns are pinned.
    #[must_use]
    pub fn len(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len
    }

    /// Whether no turn is pinned.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_keeps_its_first_value() {
        let pins = TurnPins::new(16);
        assert_eq!(pins.pin("t", "1", || 1), 1);
        assert_eq!(pins.pin("t", "1", || 2), 1);
        assert_eq!(pins.pin("t", "2", || 2), 2);
        assert_eq!(pins.pin("u", "1", || 3), 3);
        assert_eq!(pins.len(), 3);
        assert!(pins.release("t", "1"));
        assert!(!pins.release("t", "1"));
        assert_eq!(pins.pin("t", "1", || 4), 4);
    }

    #[test]
    fn the_table_is_bounded_and_keeps_recent_turns() {
        let pins = TurnPins::new(8);
        for i in 0..8 {
            pins.pin("t", &i.to_string(), || i);
        }
        // Touch turn 0 so it is recent.
        assert_eq!(pins.pin("t", "0", || 99), 0);
        pins.pin("t", "8", || 8);
        assert!(pins.len() <= 8, "len {}", pins.len());
        assert_eq!(pins.pin("t", "0", || 99), 0, "recently used pin survived");
        assert_eq!(pins.pin("t", "1", || 99), 99, "oldest pin was dropped");
    }
}
