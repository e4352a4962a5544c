//! The host exactly as `kun-composition` assembles it — `assemble()` with its real sandbox,
//! hook engine (with the built-in design hook), journal ledger and read tracker, and the
//! built-in tools registered beside the suite's — honours the tool-host contract.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_composition::{AssembleOptions, ConfigPaths, LedgerChoice, Overrides, Settings, assemble};
use kun_ports::testkit::tool_host_contract;
use kun_ports::{ToolHost, ToolProvider};
use std::sync::Arc;

#[tokio::test]
async fn the_assembled_host_honours_the_contract() {
    let state = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let journal = state.path().join("ledger.jsonl");
    tool_host_contract(|providers: Vec<Arc<dyn ToolProvider>>| {
        let paths = ConfigPaths {
            workspace: workspace.path().to_path_buf(),
            user: None,
            explicit: None,
        };
        let settings = Settings::load(&paths, &Overrides::default()).unwrap();
        let options = AssembleOptions {
            ledger: LedgerChoice::Journal(journal.clone()),
            ..AssembleOptions::default()
        };
        let assembly = assemble(settings, options).unwrap();
        for provider in providers {
            assembly.registry.register(provider).unwrap();
        }
        Arc::clone(&assembly.host) as Arc<dyn ToolHost>
    })
    .await;
}
