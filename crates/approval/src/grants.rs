//! Session grants: what `allow_for_session` answers remember.

use kun_ports::GrantKey;
use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The grant keys allowed for the rest of a session.
///
/// A key covers a request only when it is equal: same tool, same scope (`None` is a scope of
/// its own, not a wildcard). Grants are never revoked within a session.
#[derive(Debug, Default)]
pub(crate) struct SessionGrants {
    keys: Mutex<HashSet<GrantKey>>,
}

impl SessionGrants {
    fn keys(&self) -> MutexGuard<'_, HashSet<GrantKey>> {
        // Inserting into or reading a HashSet leaves it valid even if a panic interrupted a
        // previous holder.
        self.keys.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn covers(&self, key: &GrantKey) -> bool {
        self.keys().contains(key)
    }

    pub(crate) fn grant(&self, key: GrantKey) {
        self.keys().insert(key);
    }

    pub(crate) fn sorted(&self) -> Vec<GrantKey> {
        let mut keys: Vec<GrantKey> = self.keys().iter().cloned().collect();
        keys.sort_by(|a, b| (&a.tool_name, &a.scope).cmp(&(&b.tool_name, &b.scope)));
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tool: &str, scope: Option<&str>) -> GrantKey {
        match scope {
            Some(scope) => GrantKey::scoped(tool, scope),
            None => GrantKey::tool(tool),
        }
    }

    #[test]
    fn only_equal_keys_are_covered() {
        let grants = SessionGrants::default();
        grants.grant(key("bash", Some("cargo test")));
        grants.grant(key("write", None));
        let table = [
            (key("bash", Some("cargo test")), true),
            (key("bash", Some("cargo")), false),
            (key("bash", Some("cargo test --release")), false),
            (key("bash", None), false),
            (key("background_shell", Some("cargo test")), false),
            (key("write", None), true),
            (key("write", Some("x")), false),
        ];
        for (probe, covered) in table {
            assert_eq!(grants.covers(&probe), covered, "{probe:?}");
        }
    }

    #[test]
    fn sorted_lists_by_tool_then_scope() {
        let grants = SessionGrants::default();
        grants.grant(key("write", None));
        grants.grant(key("bash", Some("make")));
        grants.grant(key("bash", Some("cargo test")));
        grants.grant(key("bash", Some("make")));
        assert_eq!(
            grants.sorted(),
            vec![
                key("bash", Some("cargo test")),
                key("bash", Some("make")),
                key("write", None)
            ]
        );
    }
}
