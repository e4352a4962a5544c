//! Skills loaded with `load_skill`, per (thread, turn), so the runtime's next activation in
//! the same turn injects them (score 1100).

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

/// (thread, turn) pairs remembered at most; the oldest are forgotten first.
pub const MAX_LOADED_TURNS: usize = 512;

/// One turn's loads: (thread, turn) and the ids in load order.
type TurnLoads = ((String, String), Vec<String>);

/// The record of `load_skill` calls.
#[derive(Debug, Default)]
pub struct LoadedSkills {
    turns: Mutex<VecDeque<TurnLoads>>,
}

impl LoadedSkills {
    /// An empty record.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `skill_id` was loaded in (thread, turn).
    pub fn record(&self, thread_id: &str, turn_id: &str, skill_id: &str) {
        let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (thread_id.to_owned(), turn_id.to_owned());
        if let Some((_, ids)) = turns.iter_mut().find(|(k, _)| *k == key) {
            if !ids.iter().any(|id| id == skill_id) {
                ids.push(skill_id.to_owned());
            }
            return;
        }
        if turns.len() >= MAX_LOADED_TURNS {
            turns.pop_front();
        }
        turns.push_back((key, vec![skill_id.to_owned()]));
    }

    /// The skills loaded in (thread, turn), in load order.
    #[must_use]
    pub fn loaded(&self, thread_id: &str, turn_id: &str) -> Vec<String> {
        let turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        turns
            .iter()
            .find(|((t, u), _)| t == thread_id && u == turn_id)
            .map(|(_, ids)| ids.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_turn_and_bounded() {
        let loaded = LoadedSkills::new();
        loaded.record("t", "1", "pdf");
        loaded.record("t", "1", "pdf");
        loaded.record("t", "1", "review");
        assert_eq!(loaded.loaded("t", "1"), ["pdf", "review"]);
        assert!(loaded.loaded("t", "2").is_empty());
        for n in 0..MAX_LOADED_TURNS {
            loaded.record("t", &format!("x{n}"), "pdf");
        }
        assert!(
            loaded.loaded("t", "1").is_empty(),
            "the oldest turn is forgotten"
        );
    }
}
