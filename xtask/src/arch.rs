//! The architecture rule (SPEC §1): a concern crate depends on `kun-ports` and external crates
//! only, never on a sibling. `kun-ports` itself depends on no workspace crate.
//!
//! Checked from `cargo metadata`: normal and build dependencies count; dev-dependencies do not
//! (tests may assemble real adapters). The assembly crates may depend on anything.

use crate::step::Failure;
use crate::workspace::{self, name};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt;

/// The crates that wire concerns together; the rule does not apply to them.
pub const ASSEMBLY: [&str; 3] = ["kun-composition", "kun-cli", "xtask"];

/// The one workspace crate a concern crate may depend on.
pub const PORTS: &str = "kun-ports";

/// A dependency the rule forbids.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// The concern crate.
    pub from: String,
    /// The workspace crate it must not depend on.
    pub to: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}", self.from, self.to)
    }
}

/// Reads `cargo metadata` and checks the rule, printing each violation.
pub fn run() -> Result<(), Failure> {
    let metadata = workspace::metadata()?;
    let found = violations(&metadata)?;
    if found.is_empty() {
        println!(
            "architecture: every concern crate depends only on {PORTS} among workspace crates"
        );
        return Ok(());
    }
    println!("architecture violations (concern crate -> workspace crate it must not depend on):");
    for violation in &found {
        println!("{violation}");
    }
    Err(Failure::new(format!(
        "{} forbidden workspace dependenc{} (SPEC §1); move the shared piece into {PORTS}, make it \
         a dev-dependency, or wire the crates together in kun-composition",
        found.len(),
        if found.len() == 1 { "y" } else { "ies" }
    )))
}

/// Every forbidden dependency, sorted and without duplicates.
pub fn violations(metadata: &Value) -> Result<Vec<Violation>, Failure> {
    let members = workspace::members(metadata)?;
    let names: BTreeSet<&str> = members.iter().map(|package| name(package)).collect();
    let mut found = BTreeSet::new();
    for package in members {
        let from = name(package);
        if ASSEMBLY.contains(&from) {
            continue;
        }
        let dependencies = package["dependencies"].as_array().ok_or_else(|| {
            Failure::new(format!(
                "cargo metadata lists no dependencies array for {from}"
            ))
        })?;
        for dependency in dependencies {
            let to = dependency["name"].as_str().unwrap_or_default();
            let counted = !matches!(dependency["kind"].as_str(), Some("dev"));
            if counted && names.contains(to) && !allowed(from, to) {
                found.insert(Violation {
                    from: from.to_owned(),
                    to: to.to_owned(),
                });
            }
        }
    }
    Ok(found.into_iter().collect())
}

/// Whether concern crate `from` may depend on workspace crate `to`.
fn allowed(from: &str, to: &str) -> bool {
    to == PORTS && from != PORTS
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dep(name: &str, kind: Option<&str>) -> Value {
        json!({"name": name, "kind": kind, "source": null, "req": "*", "path": format!("/ws/{name}")})
    }

    fn package(name: &str, dependencies: Vec<Value>) -> Value {
        json!({"name": name, "id": format!("path+file:///ws/{name}#0.1.0"), "dependencies": dependencies})
    }

    fn metadata(packages: Vec<Value>) -> Value {
        let ids: Vec<Value> = packages.iter().map(|p| p["id"].clone()).collect();
        json!({"packages": packages, "workspace_members": ids, "version": 1})
    }

    fn shown(metadata: &Value) -> Vec<String> {
        violations(metadata)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_clean_workspace_has_no_violations() {
        let sample = metadata(vec![
            package(
                "kun-ports",
                vec![dep("serde", None), dep("mockall", Some("dev"))],
            ),
            package(
                "kun-sandbox",
                vec![dep("kun-ports", None), dep("libc", None)],
            ),
            package(
                "kun-builtin-tools",
                vec![
                    dep("kun-ports", None),
                    // Tests may assemble real adapters.
                    dep("kun-sandbox", Some("dev")),
                    dep("kun-ports", Some("dev")),
                ],
            ),
            package(
                "kun-composition",
                vec![
                    dep("kun-ports", None),
                    dep("kun-sandbox", None),
                    dep("kun-builtin-tools", None),
                ],
            ),
            package(
                "kun-cli",
                vec![dep("kun-composition", None), dep("kun-registry", None)],
            ),
            package("xtask", vec![dep("serde_json", None)]),
        ]);
        assert_eq!(shown(&sample), Vec::<String>::new());
    }

    #[test]
    fn sibling_dependencies_are_violations() {
        let sample = metadata(vec![
            package("kun-ports", vec![dep("kun-registry", None)]),
            package("kun-registry", vec![dep("kun-ports", None)]),
            package(
                "kun-builtin-tools",
                vec![
                    dep("kun-ports", None),
                    dep("kun-sandbox", None),
                    // Counted twice by cargo (another target); reported once.
                    dep("kun-sandbox", None),
                    dep("kun-hooks", Some("build")),
                ],
            ),
            package("kun-sandbox", vec![dep("kun-ports", None)]),
            package("kun-hooks", vec![dep("kun-composition", None)]),
            package("kun-composition", vec![dep("kun-hooks", None)]),
        ]);
        assert_eq!(
            shown(&sample),
            [
                "kun-builtin-tools -> kun-hooks",
                "kun-builtin-tools -> kun-sandbox",
                "kun-hooks -> kun-composition",
                "kun-ports -> kun-registry",
            ]
        );
    }

    #[test]
    fn packages_outside_the_workspace_are_not_judged() {
        let mut sample = metadata(vec![package("kun-sandbox", vec![dep("kun-ports", None)])]);
        // A non-member with a sibling-looking dependency (e.g. a vendored crate).
        sample["packages"]
            .as_array_mut()
            .unwrap()
            .push(package("vendored", vec![dep("kun-sandbox", None)]));
        assert!(violations(&sample).unwrap().is_empty());
    }

    #[test]
    fn malformed_metadata_is_an_error_not_a_pass() {
        assert!(violations(&json!({"packages": []})).is_err());
        let sample =
            json!({"packages": [{"name": "kun-x", "id": "x"}], "workspace_members": ["x"]});
        assert!(violations(&sample).is_err());
    }
}
