//! Registration: one flat namespace, typed errors, all-or-nothing changes, diagnostics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_ports::{ProviderKind, ProviderPolicy, ToolHostContext, ToolProvider};
use kun_registry::{CapabilityRegistry, ProviderDiagnostic, RegistryError};
use std::sync::Arc;
use support::{TestProvider, TestTool, filters, names};

fn provider(id: &str, tools: &[&str]) -> Arc<dyn ToolProvider> {
    TestProvider::new(
        id,
        ProviderKind::Extension,
        tools.iter().map(|t| TestTool::new(t).arc()).collect(),
    )
    .arc()
}

fn all_names(registry: &CapabilityRegistry) -> Vec<String> {
    registry
        .snapshot()
        .tools()
        .map(|t| t.name().to_owned())
        .collect()
}

fn ctx() -> ToolHostContext {
    ToolHostContext::builder("t", "u").build()
}

#[test]
fn duplicate_provider_id_is_a_typed_error() {
    let registry = CapabilityRegistry::new(filters());
    registry.register(provider("a", &["one"])).unwrap();
    let err = registry.register(provider("a", &["two"])).unwrap_err();
    assert_eq!(err, RegistryError::DuplicateProvider { id: "a".into() });
    assert_eq!(all_names(&registry), ["one"]);
}

#[test]
fn duplicate_tool_name_names_both_providers_and_changes_nothing() {
    let registry = CapabilityRegistry::new(filters());
    registry
        .register(provider("a", &["one", "shared"]))
        .unwrap();
    let err = registry
        .register(provider("b", &["alpha", "shared", "zeta"]))
        .unwrap_err();
    assert_eq!(
        err,
        RegistryError::DuplicateTool {
            name: "shared".into(),
            first_provider: "a".into(),
            second_provider: "b".into(),
        }
    );
    // Nothing of provider b stayed behind (upstream kept "alpha").
    assert_eq!(all_names(&registry), ["one", "shared"]);
    assert_eq!(registry.diagnostics().len(), 1);
    assert!(err.to_string().contains("unique"), "{err}");
}

#[test]
fn duplicate_within_one_provider_is_refused() {
    let registry = CapabilityRegistry::new(filters());
    let err = registry.register(provider("a", &["x", "x"])).unwrap_err();
    assert!(
        matches!(err, RegistryError::DuplicateTool { .. }),
        "{err:?}"
    );
    assert!(registry.snapshot().is_empty());
}

#[test]
fn invalid_names_and_ids_are_refused() {
    let registry = CapabilityRegistry::new(filters());
    let err = registry.register(provider("a", &["bad name"])).unwrap_err();
    assert_eq!(
        err,
        RegistryError::InvalidToolName {
            name: "bad name".into(),
            provider: "a".into()
        }
    );
    let err = registry.register(provider("", &["ok"])).unwrap_err();
    assert_eq!(err, RegistryError::EmptyProviderId);
    assert!(registry.snapshot().is_empty());
}

#[test]
fn replace_providers_is_all_or_nothing() {
    let registry = CapabilityRegistry::new(filters());
    registry
        .replace_providers(vec![provider("a", &["one"]), provider("b", &["two"])])
        .unwrap();
    let before = registry.snapshot();

    let err = registry
        .replace_providers(vec![
            provider("c", &["three"]),
            provider("d", &["four", "three"]),
        ])
        .unwrap_err();
    assert!(matches!(err, RegistryError::DuplicateTool { .. }));
    assert!(
        Arc::ptr_eq(&before, &registry.snapshot()),
        "old snapshot kept"
    );
    assert_eq!(all_names(&registry), ["one", "two"]);

    let err = registry
        .replace_providers(vec![provider("c", &["x"]), provider("c", &["y"])])
        .unwrap_err();
    assert_eq!(err, RegistryError::DuplicateProvider { id: "c".into() });
    assert_eq!(all_names(&registry), ["one", "two"]);

    registry
        .replace_providers(vec![provider("c", &["three"])])
        .unwrap();
    assert_eq!(all_names(&registry), ["three"]);
}

#[test]
fn register_unregister_and_replace_provider() {
    let registry = CapabilityRegistry::new(filters());
    registry.register(provider("a", &["one"])).unwrap();
    registry.register(provider("b", &["two"])).unwrap();
    registry.register(provider("c", &["three"])).unwrap();

    // Replacing keeps the position; a reconnected provider is never registered twice.
    registry
        .replace_provider(provider("b", &["two_v2"]))
        .unwrap();
    let ids: Vec<String> = registry.diagnostics().into_iter().map(|d| d.id).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(all_names(&registry), ["one", "three", "two_v2"]);

    // Replacing with a name another provider owns fails and changes nothing.
    let err = registry
        .replace_provider(provider("b", &["one"]))
        .unwrap_err();
    assert!(matches!(err, RegistryError::DuplicateTool { .. }));
    assert_eq!(all_names(&registry), ["one", "three", "two_v2"]);

    // An unknown id is added at the end.
    registry.replace_provider(provider("d", &["four"])).unwrap();
    assert_eq!(registry.diagnostics().last().unwrap().id, "d");

    let removed = registry.unregister("a").unwrap();
    assert_eq!(removed.id(), "a");
    assert!(registry.unregister("a").is_none());
    assert_eq!(all_names(&registry), ["four", "three", "two_v2"]);
    // After removal the name is free again.
    registry.register(provider("e", &["one"])).unwrap();
}

#[test]
fn diagnostics_in_registration_order_with_policies() {
    let registry = CapabilityRegistry::new(filters());
    registry
        .register(
            TestProvider::new(
                "web",
                ProviderKind::Web,
                vec![TestTool::new("web_fetch").arc()],
            )
            .with_policy(ProviderPolicy::unavailable("no search backend configured"))
            .arc(),
        )
        .unwrap();
    registry
        .register(
            TestProvider::new("mem", ProviderKind::Memory, vec![])
                .with_policy(ProviderPolicy::disabled("memory is off"))
                .arc(),
        )
        .unwrap();
    registry.register(provider("ext", &["x", "y"])).unwrap();
    assert_eq!(
        registry.diagnostics(),
        vec![
            ProviderDiagnostic {
                id: "web".into(),
                kind: ProviderKind::Web,
                policy: ProviderPolicy::unavailable("no search backend configured"),
                tool_count: 1,
            },
            ProviderDiagnostic {
                id: "mem".into(),
                kind: ProviderKind::Memory,
                policy: ProviderPolicy::disabled("memory is off"),
                tool_count: 0,
            },
            ProviderDiagnostic {
                id: "ext".into(),
                kind: ProviderKind::Extension,
                policy: ProviderPolicy::ready(),
                tool_count: 2,
            },
        ]
    );
    let json = serde_json::to_value(&registry.diagnostics()[0]).unwrap();
    assert_eq!(json["policy"]["available"], false);
    assert_eq!(json["policy"]["reason"], "no search backend configured");
}

#[test]
fn listing_is_sorted_whatever_the_registration_order() {
    let registry = CapabilityRegistry::new(filters());
    registry
        .register(provider("z", &["b_tool", "a_tool"]))
        .unwrap();
    registry.register(provider("a", &["C_tool", "_x"])).unwrap();
    assert_eq!(
        names(&registry.list_tools(&ctx())),
        ["C_tool", "_x", "a_tool", "b_tool"]
    );
}

#[test]
fn provider_kind_is_looked_up() {
    let registry = CapabilityRegistry::new(filters());
    registry
        .register(
            TestProvider::new("m", ProviderKind::Mcp, vec![TestTool::new("read").arc()]).arc(),
        )
        .unwrap();
    assert_eq!(registry.provider_kind_of("read"), Some(ProviderKind::Mcp));
    assert_eq!(registry.provider_kind_of("nope"), None);
}
