//! Session grants: what `allow_for_session` answers remember.
//!
//! A grant is stored as atoms: a whole tool, one action of a tool, or one command key of a
//! tool. A request is covered when it is grantable and every atom it needs is granted:
//!
//! | request's [`GrantScope`] | covered when |
//! |---|---|
//! | `Tool` | the tool was granted |
//! | `Action { a }` | action `a` of the tool was granted |
//! | `Commands { keys }` | **each** key was granted for the tool (a pipeline of `cargo test` and `tail` needs both) |
//! | `OneCall` | never, and nothing is recorded for it |
//!
//! Atoms never widen: a `Tool` grant is not a wildcard for command keys (a command tool never
//! asks with `Tool`), and a command key is exact (`cargo test` does not cover `cargo build`).
//! Grants are never revoked within a session.

use kun_ports::{CommandKey, GrantKey, GrantScope};
use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// One granted thing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Atom {
    Tool(String),
    Action(String, String),
    Command(String, CommandKey),
}

impl Atom {
    /// The atoms a key needs; `None` for a key no grant may cover.
    fn of(key: &GrantKey) -> Option<Vec<Self>> {
        let tool = &key.tool_name;
        match &key.scope {
            GrantScope::Tool => Some(vec![Self::Tool(tool.clone())]),
            GrantScope::Action { action } => Some(vec![Self::Action(tool.clone(), action.clone())]),
            GrantScope::Commands { keys } if !keys.is_empty() => Some(
                keys.iter()
                    .map(|k| Self::Command(tool.clone(), k.clone()))
                    .collect(),
            ),
            GrantScope::Commands { .. } | GrantScope::OneCall { .. } => None,
        }
    }

    /// The atom as a key of its own, for listing.
    fn key(&self) -> GrantKey {
        match self {
            Self::Tool(tool) => GrantKey::tool(tool),
            Self::Action(tool, action) => GrantKey::action(tool, action),
            Self::Command(tool, key) => GrantKey::commands(tool, [key.clone()]),
        }
    }
}

/// The grants allowed for the rest of a session.
#[derive(Debug, Default)]
pub(crate) struct SessionGrants {
    atoms: Mutex<BTreeSet<Atom>>,
}

impl SessionGrants {
    fn atoms(&self) -> MutexGuard<'_, BTreeSet<Atom>> {
        // Inserting into or reading a set leaves it valid even if a panic interrupted a
        // previous holder.
        self.atoms.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether every atom `key` needs was granted (never for a one-call key).
    pub(crate) fn covers(&self, key: &GrantKey) -> bool {
        let Some(needed) = Atom::of(key) else {
            return false;
        };
        let atoms = self.atoms();
        needed.iter().all(|atom| atoms.contains(atom))
    }

    /// Records every atom of `key`; a one-call key records nothing.
    pub(crate) fn grant(&self, key: &GrantKey) {
        if let Some(atoms) = Atom::of(key) {
            self.atoms().extend(atoms);
        }
    }

    /// One key per granted atom: whole tools, then actions, then command keys, each sorted
    /// by tool and name.
    pub(crate) fn sorted(&self) -> Vec<GrantKey> {
        self.atoms().iter().map(Atom::key).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(tool: &str, keys: &[&str]) -> GrantKey {
        GrantKey::commands(tool, keys.iter().map(|k| CommandKey::parse(k)))
    }

    #[test]
    fn coverage_table() {
        let grants = SessionGrants::default();
        grants.grant(&commands("bash", &["cargo test"]));
        grants.grant(&commands("bash", &["ls", "grep"]));
        grants.grant(&GrantKey::tool("write"));
        grants.grant(&GrantKey::action("background_shell", "kill"));
        grants.grant(&GrantKey::one_call("bash", "it runs code"));
        let table = [
            (commands("bash", &["cargo test"]), true),
            (commands("bash", &["ls"]), true),
            (commands("bash", &["grep", "ls", "cargo test"]), true),
            (commands("bash", &["cargo"]), false),
            (commands("bash", &["cargo build"]), false),
            (commands("bash", &["cargo test", "tail"]), false),
            (commands("background_shell", &["cargo test"]), false),
            (GrantKey::tool("bash"), false),
            (GrantKey::one_call("bash", "it runs code"), false),
            (commands("bash", &[]), false),
            (GrantKey::tool("write"), true),
            (commands("write", &["x"]), false),
            (GrantKey::action("background_shell", "kill"), true),
            (GrantKey::action("background_shell", "start"), false),
            (GrantKey::tool("background_shell"), false),
        ];
        for (probe, covered) in table {
            assert_eq!(grants.covers(&probe), covered, "{probe:?}");
        }
    }

    #[test]
    fn one_call_keys_record_nothing() {
        let grants = SessionGrants::default();
        grants.grant(&GrantKey::one_call("bash", "it runs code"));
        grants.grant(&commands("bash", &[]));
        assert!(grants.sorted().is_empty());
    }

    #[test]
    fn sorted_lists_one_key_per_atom() {
        let grants = SessionGrants::default();
        grants.grant(&GrantKey::tool("write"));
        grants.grant(&commands("bash", &["make", "cargo test"]));
        grants.grant(&commands("bash", &["make"]));
        assert_eq!(
            grants.sorted(),
            vec![
                GrantKey::tool("write"),
                GrantKey::command("bash", "cargo test"),
                GrantKey::command("bash", "make"),
            ]
        );
    }
}
