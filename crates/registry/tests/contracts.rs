//! The kun-ports contract suites, run on this crate's host and on test providers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_ports::testkit::{tool_host_contract, tool_provider_contract};
use kun_ports::{ProviderKind, ProviderPolicy, ToolHost, ToolKind, ToolProvider};
use kun_registry::Host;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use support::{TestProvider, TestTool};

#[tokio::test]
async fn host_honours_the_tool_host_contract() {
    tool_host_contract(|providers| -> Arc<dyn ToolHost> {
        Arc::new(Host::builder(support::registry(providers)).build())
    })
    .await;
}

#[test]
fn test_providers_honour_the_provider_contract() {
    tool_provider_contract(&TestProvider::builtin(vec![
        TestTool::new("read").arc(),
        TestTool::new("edit").kind(ToolKind::FileChange).arc(),
    ]));
    tool_provider_contract(
        &TestProvider::new("web", ProviderKind::Web, vec![])
            .with_policy(ProviderPolicy::unavailable("no search backend configured")),
    );
}

/// The provider suite can fail: each broken rule is caught.
#[test]
fn the_provider_contract_catches_broken_providers() {
    let broken: Vec<(&str, Box<dyn ToolProvider>)> = vec![
        (
            "empty id",
            Box::new(TestProvider::new("", ProviderKind::Mcp, vec![])),
        ),
        (
            "duplicate names",
            Box::new(TestProvider::builtin(vec![
                TestTool::new("x").arc(),
                TestTool::new("x").arc(),
            ])),
        ),
        (
            "bad name",
            Box::new(TestProvider::builtin(vec![TestTool::new("mcp:x").arc()])),
        ),
        (
            "schema without type object",
            Box::new(TestProvider::builtin(vec![
                TestTool::new("x")
                    .schema(serde_json::json!({"properties": {}}))
                    .arc(),
            ])),
        ),
        (
            "unavailable without a reason",
            Box::new(TestProvider::builtin(vec![]).with_policy(ProviderPolicy {
                enabled: true,
                available: false,
                reason: None,
            })),
        ),
    ];
    for (label, provider) in broken {
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            tool_provider_contract(provider.as_ref());
        }));
        assert!(outcome.is_err(), "{label} must break the contract");
    }
}
