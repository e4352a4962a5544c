//! Catalog drift: how a catalog changed between two fingerprints.

use crate::fingerprint::CatalogFingerprint;
use serde::Serialize;
use std::cmp::Ordering;

/// How a catalog changed.
///
/// | drift | when |
/// |---|---|
/// | `Unchanged` | same fingerprint |
/// | `Additive` | at least one new tool, and every earlier tool is still there with the same hash |
/// | `Breaking` | anything else: a tool removed, or a description or schema changed |
///
/// Additive drift only appends to what the model already knows (a prompt cache survives it);
/// breaking drift invalidates it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "drift", rename_all = "snake_case")]
pub enum CatalogDrift {
    /// Nothing the model reads changed.
    Unchanged,
    /// Only new tools.
    Additive {
        /// The new tools, sorted.
        added: Vec<String>,
    },
    /// Tools removed or changed (and maybe some added).
    Breaking {
        /// New tools, sorted.
        added: Vec<String>,
        /// Tools gone, sorted.
        removed: Vec<String>,
        /// Tools whose description or schema changed, sorted.
        changed: Vec<String>,
    },
}

impl CatalogDrift {
    /// Compares `next` with `previous`.
    ///
    /// ```
    /// use kun_ports::ToolSpec;
    /// use kun_registry::{fingerprint_specs, CatalogDrift};
    /// let a = ToolSpec::new("a", "A.", serde_json::json!({}));
    /// let b = ToolSpec::new("b", "B.", serde_json::json!({}));
    /// let before = fingerprint_specs([&a]);
    /// let after = fingerprint_specs([&a, &b]);
    /// assert_eq!(CatalogDrift::between(&before, &after), CatalogDrift::Additive { added: vec!["b".into()] });
    /// assert!(CatalogDrift::between(&after, &before).is_breaking());
    /// ```
    #[must_use]
    pub fn between(previous: &CatalogFingerprint, next: &CatalogFingerprint) -> Self {
        if previous.fingerprint == next.fingerprint {
            return Self::Unchanged;
        }
        let (mut added, mut removed, mut changed) = (Vec::new(), Vec::new(), Vec::new());
        let mut old = previous.tools.iter().peekable();
        let mut new = next.tools.iter().peekable();
        loop {
            match (old.peek(), new.peek()) {
                (None, None) => break,
                (Some(o), None) => {
                    removed.push(o.name.clone());
                    old.next();
                }
                (None, Some(n)) => {
                    added.push(n.name.clone());
                    new.next();
                }
                (Some(o), Some(n)) => match o.name.cmp(&n.name) {
                    Ordering::Less => {
                        removed.push(o.name.clone());
                        old.next();
                    }
                    Ordering::Greater => {
                        added.push(n.name.clone());
                        new.next();
                    }
                    Ordering::Equal => {
                        if o.hash != n.hash {
                            changed.push(o.name.clone());
                        }
                        old.next();
                        new.next();
                    }
                },
            }
        }
        if removed.is_empty() && changed.is_empty() {
            if added.is_empty() {
                // Same tools and hashes but another fingerprint cannot happen for one
                // canonical form; treat it as unchanged content.
                Self::Unchanged
            } else {
                Self::Additive { added }
            }
        } else {
            Self::Breaking {
                added,
                removed,
                changed,
            }
        }
    }

    /// Whether anything changed.
    #[must_use]
    pub const fn is_unchanged(&self) -> bool {
        matches!(self, Self::Unchanged)
    }

    /// Whether earlier tools were removed or changed.
    #[must_use]
    pub const fn is_breaking(&self) -> bool {
        matches!(self, Self::Breaking { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::fingerprint_specs;
    use kun_ports::ToolSpec;
    use serde_json::json;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec::new(name, description, json!({"type": "object"}))
    }

    #[test]
    fn drift_table() {
        let a = spec("a", "A.");
        let a2 = spec("a", "A, reworded.");
        let b = spec("b", "B.");
        let c = spec("c", "C.");
        let fp = |specs: &[&ToolSpec]| fingerprint_specs(specs.iter().copied());
        let cases: Vec<(&str, CatalogFingerprint, CatalogFingerprint, CatalogDrift)> = vec![
            (
                "same",
                fp(&[&a, &b]),
                fp(&[&b, &a]),
                CatalogDrift::Unchanged,
            ),
            (
                "one new",
                fp(&[&a]),
                fp(&[&a, &c]),
                CatalogDrift::Additive {
                    added: vec!["c".into()],
                },
            ),
            (
                "removed",
                fp(&[&a, &b]),
                fp(&[&a]),
                CatalogDrift::Breaking {
                    added: vec![],
                    removed: vec!["b".into()],
                    changed: vec![],
                },
            ),
            (
                "reworded",
                fp(&[&a, &b]),
                fp(&[&a2, &b]),
                CatalogDrift::Breaking {
                    added: vec![],
                    removed: vec![],
                    changed: vec!["a".into()],
                },
            ),
            (
                "added and reworded",
                fp(&[&a]),
                fp(&[&a2, &c]),
                CatalogDrift::Breaking {
                    added: vec!["c".into()],
                    removed: vec![],
                    changed: vec!["a".into()],
                },
            ),
            (
                "from empty",
                fp(&[]),
                fp(&[&a]),
                CatalogDrift::Additive {
                    added: vec!["a".into()],
                },
            ),
        ];
        for (label, before, after, expected) in cases {
            assert_eq!(CatalogDrift::between(&before, &after), expected, "{label}");
        }
    }
}
