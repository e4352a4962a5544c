//! The pipeline with this crate's real in-process adapters instead of mocks: read tracker,
//! artifact store and ledger together.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_ports::{ArtifactStore, ToolCall, ToolHost, ToolKind};
use kun_registry::artifacts::InMemoryArtifactStore;
use kun_registry::read_tracker::InMemoryReadTracker;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use support::{Behaviour, TestTool, ctx, host_with};

#[tokio::test]
async fn read_then_edit_with_the_in_memory_tracker() {
    let read = TestTool::new("read")
        .read_like()
        .behaviour(Behaviour::Output(json!({"content": "fn main() {}\n"})));
    let edit = TestTool::new("edit").kind(ToolKind::FileChange).edit_like();
    let edits = edit.counter();
    let host = host_with(vec![read.arc(), edit.arc()])
        .read_tracker(Arc::new(InMemoryReadTracker::new()))
        .build();
    let ctx = ctx().build();
    let edit_call = |id: &str, old: &str| {
        ToolCall::new(id, "edit", json!({"path": "src/main.rs", "oldText": old}))
    };

    let before = host
        .execute(edit_call("e1", "fn main() {}"), &ctx)
        .await
        .unwrap();
    assert_eq!(before.error_code(), Some("read_before_edit_required"));

    let r = host
        .execute(
            ToolCall::new("r1", "read", json!({"path": "src/main.rs"})),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!r.is_error);

    let stale = host
        .execute(edit_call("e2", "fn other() {}"), &ctx)
        .await
        .unwrap();
    assert_eq!(stale.error_code(), Some("read_before_edit_required"));
    let ok = host
        .execute(edit_call("e3", "fn main() {}"), &ctx)
        .await
        .unwrap();
    assert!(!ok.is_error, "{ok:?}");
    assert_eq!(edits.load(Ordering::SeqCst), 1);

    // Reads from earlier turns of the thread count.
    let later = ctx.for_turn("turn-2");
    let ok = host
        .execute(edit_call("e4", "fn main() {}"), &later)
        .await
        .unwrap();
    assert!(!ok.is_error, "{ok:?}");
}

#[tokio::test]
async fn large_outputs_land_in_the_in_memory_store() {
    let text = "0123456789\n".repeat(20_000);
    let tool = TestTool::new("dump").behaviour(Behaviour::Output(json!(text.clone())));
    let store = Arc::new(InMemoryArtifactStore::new());
    let host = host_with(vec![tool.arc()])
        .artifact_store(Arc::clone(&store) as Arc<dyn ArtifactStore>)
        .build();
    let result = host
        .execute(ToolCall::new("c1", "dump", json!({})), &ctx().build())
        .await
        .unwrap();
    assert_eq!(result.output["truncated"], true);
    assert_eq!(result.output["line_count"], 20_000);
    assert_eq!(result.output["byte_size"], text.len());
    let id = result.output["artifact_id"].as_str().unwrap();
    assert_eq!(store.get(id).unwrap(), text.as_bytes());
}
