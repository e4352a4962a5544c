//! The `edit` tool around the engine: output shape, diff, guard hooks, file-level failures.
//! (The engine's cases are data-driven in `edit_fixtures.rs`.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::fs::{EditTool, LockSettings, MutationQueue};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{EditGuard, Tool, ToolKind, ToolPolicy, ToolResult};
use serde_json::{Value, json};
use std::sync::Arc;

fn tool(locks: &tempfile::TempDir) -> EditTool {
    EditTool::new(Arc::new(MutationQueue::new(LockSettings {
        root: locks.path().to_path_buf(),
        ..LockSettings::default()
    })))
}

async fn edit(tool: &EditTool, ws: &TestWorkspace, args: Value) -> ToolResult {
    tool.execute(args, ws.tool_context("call-edit"))
        .await
        .unwrap()
}

#[tokio::test]
async fn success_output_has_the_diff_and_first_changed_line() {
    let (ws, locks) = (TestWorkspace::new(), tempfile::tempdir().unwrap());
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    ws.write("src/notes.txt", &text);
    let out = edit(
        &tool(&locks),
        &ws,
        json!({"path": "src/notes.txt", "oldText": "line 10\n", "newText": "line ten\n"}),
    )
    .await;
    assert!(!out.is_error, "{}", out.output);
    let o = &out.output;
    assert_eq!(o["path"], "src/notes.txt");
    assert_eq!(o["replacements"], 1);
    assert_eq!(o["first_changed_line"], 10);
    let on_disk = std::fs::metadata(ws.path("src/notes.txt")).unwrap();
    assert_eq!(on_disk.len(), text.len() as u64 + 1);
    assert_eq!(
        o["revision"],
        kun_ports::FileRevision::of(&on_disk).to_string()
    );
    assert_eq!(o.get("fuzzy_matched_edits"), None, "no empty list: {o}");
    let expected_diff = "--- a/src/notes.txt\n+++ b/src/notes.txt\n@@ -6,9 +6,9 @@\n line 6\n line 7\n line 8\n line 9\n\
                         -line 10\n+line ten\n line 11\n line 12\n line 13\n line 14\n";
    assert_eq!(o["diff"], expected_diff);
    assert_eq!(out.model_text(), expected_diff.trim_end());
    assert!(
        std::fs::read_dir(locks.path()).unwrap().next().is_none(),
        "the lock is released"
    );
}

#[tokio::test]
async fn file_level_failures_are_clear_and_release_the_lock() {
    let (ws, locks) = (TestWorkspace::new(), tempfile::tempdir().unwrap());
    let tool = tool(&locks);
    let missing = edit(
        &tool,
        &ws,
        json!({"path": "nope.rs", "oldText": "a", "newText": "b"}),
    )
    .await;
    assert_eq!(missing.output["reason"], "file_not_found");
    assert!(
        missing.error_message().unwrap().contains("does not exist"),
        "{}",
        missing.output
    );
    ws.write("d/x", "x");
    let dir = edit(
        &tool,
        &ws,
        json!({"path": "d", "oldText": "a", "newText": "b"}),
    )
    .await;
    assert!(
        dir.error_message().unwrap().contains("directory"),
        "{}",
        dir.output
    );
    let outside = edit(
        &tool,
        &ws,
        json!({"path": "../x", "oldText": "a", "newText": "b"}),
    )
    .await;
    assert_eq!(outside.output["code"], "sandbox_write_blocked");
    let nothing = edit(&tool, &ws, json!({"path": "d/x"})).await;
    assert_eq!(nothing.output["code"], "invalid_arguments");
    let half = edit(&tool, &ws, json!({"path": "d/x", "oldText": "x"})).await;
    assert!(
        half.error_message().unwrap().contains("newText"),
        "{}",
        half.output
    );
    let empty_list = edit(&tool, &ws, json!({"path": "d/x", "edits": []})).await;
    assert_eq!(empty_list.output["code"], "invalid_arguments");
    assert!(
        std::fs::read_dir(locks.path()).unwrap().next().is_none(),
        "no lock is left behind"
    );
    assert_eq!(ws.read("d/x"), "x");
}

#[test]
fn spec_schema_and_guard_hooks() {
    let locks = tempfile::tempdir().unwrap();
    let tool = tool(&locks);
    let spec = tool.spec();
    assert_eq!(
        (spec.kind, spec.policy),
        (ToolKind::FileChange, ToolPolicy::OnRequest)
    );
    let props = &spec.input_schema["properties"];
    for key in ["path", "oldText", "newText", "edits"] {
        assert!(
            props[key]["description"].is_string(),
            "{key}: {}",
            spec.input_schema
        );
    }
    assert_eq!(
        props["edits"]["items"]["required"],
        json!(["oldText", "newText"])
    );
    assert_eq!(spec.input_schema["required"], json!(["path"]));
    let args = json!({"path": "a.rs", "edits": [{"oldText": "x", "newText": "y"}, {"oldText": "  \n", "newText": ""}], "oldText": "top"});
    assert_eq!(
        tool.edit_guard(&args),
        Some(EditGuard {
            path: "a.rs".into(),
            old_texts: vec!["top".into(), "x".into()]
        })
    );
    assert_eq!(tool.edit_guard(&json!({"oldText": "x"})), None);
    assert_eq!(
        tool.write_paths(&json!({"path": "a.rs"})),
        vec!["a.rs".to_owned()]
    );
}

#[test]
fn the_fuzzy_normaliser_is_exported_for_the_read_tracker() {
    let read_content = "let s = \u{201c}hi\u{201d};   \n";
    let old_text = "let s = \"hi\";";
    let normalise = kun_builtin_tools::fs::normalize_for_fuzzy_match;
    assert!(normalise(read_content).contains(&normalise(old_text)));
}
