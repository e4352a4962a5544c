//! The catalog fingerprint, drift, and the per-turn frozen catalog.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_ports::{ProviderKind, ToolHostContext, ToolProvider};
use kun_registry::{
    CapabilityRegistry, CatalogChange, CatalogDrift, TurnCatalogTracker, fingerprint_catalog,
};
use serde_json::Value;
use std::sync::Arc;
use support::{TestProvider, TestTool, filters, names};

const SCHEMA_A: &str = r#"{"type":"object","properties":{"path":{"type":"string","description":"Where."},"limit":{"type":"integer","minimum":1}},"required":["path"]}"#;
const SCHEMA_A_REORDERED: &str = r#"{"required":["path"],"properties":{"limit":{"minimum":1,"type":"integer"},"path":{"description":"Where.","type":"string"}},"type":"object"}"#;

fn schema(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn tool(name: &str, schema_text: &str) -> Arc<dyn kun_ports::Tool> {
    TestTool::new(name).schema(schema(schema_text)).arc()
}

fn registry(providers: Vec<Arc<dyn ToolProvider>>) -> CapabilityRegistry {
    CapabilityRegistry::with_providers(filters(), providers).unwrap()
}

fn ctx() -> ToolHostContext {
    ToolHostContext::builder("t", "u").build()
}

#[test]
fn same_catalog_in_two_registration_orders_and_key_orders_has_one_fingerprint() {
    let first = registry(vec![
        TestProvider::new(
            "p1",
            ProviderKind::Extension,
            vec![tool("alpha", SCHEMA_A), tool("beta", SCHEMA_A)],
        )
        .arc(),
        TestProvider::new("p2", ProviderKind::Mcp, vec![tool("gamma", SCHEMA_A)]).arc(),
    ]);
    let second = registry(vec![
        TestProvider::new(
            "q",
            ProviderKind::Web,
            vec![tool("gamma", SCHEMA_A_REORDERED)],
        )
        .arc(),
        TestProvider::new(
            "r",
            ProviderKind::BuiltIn,
            vec![
                tool("beta", SCHEMA_A_REORDERED),
                tool("alpha", SCHEMA_A_REORDERED),
            ],
        )
        .arc(),
    ]);
    let a = fingerprint_catalog(&first.list_tools(&ctx()));
    let b = fingerprint_catalog(&second.list_tools(&ctx()));
    assert_eq!(a, b);
    // The registry's cached hashes give the same answer.
    assert_eq!(first.snapshot().fingerprint(&first.list_tools(&ctx())), a);
    assert_eq!(second.snapshot().fingerprint(&second.list_tools(&ctx())), a);
    assert_eq!(a.tool_count, 3);
    assert_eq!(a.names().collect::<Vec<_>>(), ["alpha", "beta", "gamma"]);
    assert_eq!(a.fingerprint.len(), 64);
}

#[test]
fn a_description_change_changes_the_fingerprint_and_that_tool_hash_only() {
    let before = registry(vec![
        TestProvider::new(
            "p",
            ProviderKind::Extension,
            vec![tool("alpha", SCHEMA_A), tool("beta", SCHEMA_A)],
        )
        .arc(),
    ]);
    let after = registry(vec![
        TestProvider::new(
            "p",
            ProviderKind::Extension,
            vec![
                TestTool::new("alpha")
                    .schema(schema(SCHEMA_A))
                    .description("Reworded.")
                    .arc(),
                tool("beta", SCHEMA_A),
            ],
        )
        .arc(),
    ]);
    let a = fingerprint_catalog(&before.list_tools(&ctx()));
    let b = fingerprint_catalog(&after.list_tools(&ctx()));
    assert_ne!(a.fingerprint, b.fingerprint);
    assert_ne!(a.hash_of("alpha"), b.hash_of("alpha"));
    assert_eq!(a.hash_of("beta"), b.hash_of("beta"));
    assert_eq!(
        CatalogDrift::between(&a, &b),
        CatalogDrift::Breaking {
            added: vec![],
            removed: vec![],
            changed: vec!["alpha".into()]
        }
    );
}

#[test]
fn required_order_is_part_of_the_fingerprint() {
    let one = registry(vec![
        TestProvider::new(
            "p",
            ProviderKind::Extension,
            vec![tool("t", r#"{"type":"object","required":["a","b"]}"#)],
        )
        .arc(),
    ]);
    let two = registry(vec![
        TestProvider::new(
            "p",
            ProviderKind::Extension,
            vec![tool("t", r#"{"type":"object","required":["b","a"]}"#)],
        )
        .arc(),
    ]);
    assert_ne!(
        fingerprint_catalog(&one.list_tools(&ctx())).fingerprint,
        fingerprint_catalog(&two.list_tools(&ctx())).fingerprint
    );
}

#[test]
fn drift_additive_vs_breaking_through_a_registry() {
    let registry = registry(vec![
        TestProvider::new("p", ProviderKind::Extension, vec![tool("alpha", SCHEMA_A)]).arc(),
    ]);
    let v1 = fingerprint_catalog(&registry.list_tools(&ctx()));
    registry
        .register(TestProvider::new("q", ProviderKind::Mcp, vec![tool("beta", SCHEMA_A)]).arc())
        .unwrap();
    let v2 = fingerprint_catalog(&registry.list_tools(&ctx()));
    assert_eq!(
        CatalogDrift::between(&v1, &v2),
        CatalogDrift::Additive {
            added: vec!["beta".into()]
        }
    );
    registry.unregister("p");
    let v3 = fingerprint_catalog(&registry.list_tools(&ctx()));
    assert_eq!(
        CatalogDrift::between(&v2, &v3),
        CatalogDrift::Breaking {
            added: vec![],
            removed: vec!["alpha".into()],
            changed: vec![]
        }
    );
    assert_eq!(CatalogDrift::between(&v3, &v3), CatalogDrift::Unchanged);
}

#[test]
fn the_first_catalog_of_a_turn_is_frozen_and_drift_is_deferred() {
    let registry = registry(vec![
        TestProvider::new("p", ProviderKind::Extension, vec![tool("alpha", SCHEMA_A)]).arc(),
    ]);
    let tracker = TurnCatalogTracker::default();
    let list = || registry.list_tools(&ctx());
    let observe = |turn: &str| tracker.observe("thread", turn, &registry.snapshot(), list());

    let first = observe("turn-1");
    assert_eq!(first.change, CatalogChange::FirstTurn);
    assert_eq!(names(&first.catalog.tools), ["alpha"]);

    // Same turn, nothing changed: same frozen catalog.
    let again = observe("turn-1");
    assert_eq!(
        again.change,
        CatalogChange::Deferred(CatalogDrift::Unchanged)
    );
    assert!(Arc::ptr_eq(&first.catalog, &again.catalog));

    // A provider changes mid-turn (breaking): the turn keeps its catalog, drift is deferred.
    registry
        .replace_provider(
            TestProvider::new(
                "p",
                ProviderKind::Extension,
                vec![tool("alpha_v2", SCHEMA_A)],
            )
            .arc(),
        )
        .unwrap();
    let mid = observe("turn-1");
    assert_eq!(names(&mid.catalog.tools), ["alpha"], "frozen");
    assert!(
        matches!(mid.change, CatalogChange::Deferred(ref d) if d.is_breaking()),
        "{:?}",
        mid.change
    );

    // The next turn sees the change.
    let next = observe("turn-2");
    assert_eq!(names(&next.catalog.tools), ["alpha_v2"]);
    assert_eq!(
        next.change,
        CatalogChange::NewTurn(CatalogDrift::Breaking {
            added: vec!["alpha_v2".into()],
            removed: vec!["alpha".into()],
            changed: vec![]
        })
    );

    // Additive change between turns.
    registry
        .register(TestProvider::new("q", ProviderKind::Mcp, vec![tool("beta", SCHEMA_A)]).arc())
        .unwrap();
    let third = observe("turn-3");
    assert_eq!(
        third.change,
        CatalogChange::NewTurn(CatalogDrift::Additive {
            added: vec!["beta".into()]
        })
    );

    // Threads are independent.
    let other = tracker.observe("other", "turn-1", &registry.snapshot(), list());
    assert_eq!(other.change, CatalogChange::FirstTurn);
    assert_eq!(tracker.len(), 2);
    tracker.forget_thread("other");
    assert_eq!(tracker.len(), 1);
}

#[test]
fn the_tracker_is_bounded() {
    let tracker = TurnCatalogTracker::new(4);
    for i in 0..10 {
        let _ = tracker.observe(
            &format!("thread-{i}"),
            "turn",
            &kun_registry::RegistrySnapshot::empty(),
            Vec::new(),
        );
    }
    assert!(tracker.len() <= 4, "{}", tracker.len());
}

#[test]
fn cached_hashes_are_only_used_for_the_very_same_tools() {
    let a = registry(vec![
        TestProvider::new("p", ProviderKind::Extension, vec![tool("alpha", SCHEMA_A)]).arc(),
    ]);
    let b = registry(vec![
        TestProvider::new(
            "p",
            ProviderKind::Extension,
            vec![
                TestTool::new("alpha")
                    .schema(schema(SCHEMA_A))
                    .description("Other.")
                    .arc(),
            ],
        )
        .arc(),
    ]);
    let listing_a = a.list_tools(&ctx());
    // Same name in b's snapshot, but another tool: its hash is computed, not borrowed.
    assert_eq!(
        b.snapshot().fingerprint(&listing_a),
        fingerprint_catalog(&listing_a)
    );
    assert_ne!(
        b.snapshot().fingerprint(&listing_a),
        b.snapshot().fingerprint(&b.list_tools(&ctx()))
    );
}

#[test]
fn a_large_catalogs_first_fingerprint_hashes_in_one_batch_and_matches_the_cold_one() {
    // 300 tools: the first fingerprint of the snapshot hashes them as one batch (split across
    // threads); later ones reuse the hashes. Every way gives the cold answer, including a
    // listing with a tool the snapshot does not hold.
    let tools: Vec<Arc<dyn kun_ports::Tool>> = (0..300)
        .map(|i| {
            TestTool::new(&format!("tool_{i:03}"))
                .description(&format!("Tool number {i}."))
                .schema(schema(SCHEMA_A))
                .arc()
        })
        .collect();
    let registry = registry(vec![
        TestProvider::new("many", ProviderKind::Mcp, tools).arc(),
    ]);
    let snapshot = registry.snapshot();
    let listing = registry.list_tools(&ctx());
    assert_eq!(listing.len(), 300);
    let cold = fingerprint_catalog(&listing);
    assert_eq!(snapshot.fingerprint(&listing), cold, "first use");
    assert_eq!(snapshot.fingerprint(&listing), cold, "cached");
    assert_eq!(
        snapshot.fingerprint(&listing[..7]),
        fingerprint_catalog(&listing[..7])
    );
    let stranger = registry_with_one("tool_999");
    let mut mixed = listing[..3].to_vec();
    mixed.extend(stranger.list_tools(&ctx()));
    assert_eq!(snapshot.fingerprint(&mixed), fingerprint_catalog(&mixed));
    assert_ne!(cold.tools[0].hash, cold.tools[1].hash);
}

fn registry_with_one(name: &str) -> CapabilityRegistry {
    registry(vec![
        TestProvider::new("other", ProviderKind::Extension, vec![tool(name, SCHEMA_A)]).arc(),
    ])
}
