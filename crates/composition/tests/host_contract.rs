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

/// The design-quality hook the assembly turns on reviews what a file editor wrote: `write`
/// declares `ToolRole::FileEditor` on its spec, and the hook reads that marker.
#[tokio::test]
async fn the_assembled_design_hook_reviews_what_write_wrote() {
    use kun_ports::{ApprovalPolicy, ToolCall, ToolRole};
    let workspace = tempfile::tempdir().unwrap();
    let paths = ConfigPaths {
        workspace: workspace.path().to_path_buf(),
        user: None,
        explicit: None,
    };
    let settings = Settings::load(&paths, &Overrides::default()).unwrap();
    let assembly = assemble(settings, AssembleOptions::default()).unwrap();
    for editor in ["write", "edit"] {
        let tool = assembly.registry.snapshot().get(editor).cloned().unwrap();
        assert_eq!(tool.spec().role, ToolRole::FileEditor, "{editor}");
    }
    let ctx = assembly
        .context("thread", "turn-1")
        .approval(ApprovalPolicy::Auto)
        .build();
    let css = ".banner { width: 960px; color: red !important; }\n";
    let call = ToolCall::new(
        "c1",
        "write",
        serde_json::json!({"path": "theme.css", "content": css}),
    );
    let result = assembly.host.execute(call, &ctx).await.unwrap();
    assert!(!result.is_error, "{result:?}");
    let review = result.output["design_quality_review"]
        .as_array()
        .unwrap_or_else(|| panic!("no review in {}", result.output));
    let rules: Vec<&str> = review.iter().filter_map(|f| f["rule"].as_str()).collect();
    assert!(rules.contains(&"important"), "{rules:?}");
    assert!(
        result.model_text().contains("important"),
        "{}",
        result.model_text()
    );
}
