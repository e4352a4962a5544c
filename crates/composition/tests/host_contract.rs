//! The host as `kun-composition` wires it — real sandbox, hook engine, journal ledger and
//! read tracker — honours the tool-host contract.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_hooks::HookEngine;
use kun_ports::testkit::tool_host_contract;
use kun_ports::{ToolHost, ToolProvider};
use kun_registry::ledger::JournalLedger;
use kun_registry::read_tracker::InMemoryReadTracker;
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::{NoConfinement, WorkspaceSandbox};
use std::sync::Arc;

#[tokio::test]
async fn the_composed_host_honours_the_contract() {
    let state = tempfile::tempdir().unwrap();
    let journal = state.path().join("ledger.jsonl");
    tool_host_contract(|providers: Vec<Arc<dyn ToolProvider>>| {
        let sandbox = Arc::new(WorkspaceSandbox::for_confinement(&NoConfinement));
        let registry = Arc::new(
            CapabilityRegistry::with_providers(CatalogFilters::new(sandbox), providers).unwrap(),
        );
        let host = Host::builder(registry)
            .hooks(Arc::new(HookEngine::builder().build().unwrap()))
            .ledger(Arc::new(JournalLedger::open(journal.clone()).unwrap()))
            .read_tracker(Arc::new(InMemoryReadTracker::new()))
            .build();
        Arc::new(host) as Arc<dyn ToolHost>
    })
    .await;
}
