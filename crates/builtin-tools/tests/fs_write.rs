//! The `write` tool: exact content, parents, atomic replacement, path checks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::fs::{LockSettings, MutationQueue, WriteTool};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{Tool, ToolKind, ToolPolicy, ToolResult};
use serde_json::{Value, json};
use std::sync::Arc;

fn tool(locks: &tempfile::TempDir) -> WriteTool {
    WriteTool::new(Arc::new(MutationQueue::new(LockSettings {
        root: locks.path().to_path_buf(),
        ..LockSettings::default()
    })))
}

async fn write(tool: &WriteTool, ws: &TestWorkspace, args: Value) -> ToolResult {
    tool.execute(args, ws.tool_context("call-write"))
        .await
        .unwrap()
}

#[tokio::test]
async fn creates_parents_and_writes_exactly_the_content() {
    let (ws, locks) = (TestWorkspace::new(), tempfile::tempdir().unwrap());
    let tool = tool(&locks);
    let content = "\u{feff}no newline added\r\nkept as is";
    let out = write(&tool, &ws, json!({"path": "a/b/c.txt", "content": content})).await;
    assert!(!out.is_error, "{}", out.output);
    assert_eq!(
        std::fs::read(ws.path("a/b/c.txt")).unwrap(),
        content.as_bytes()
    );
    assert_eq!(out.output["bytes_written"], content.len());
    assert_eq!(out.output["change"], "created");
    assert_eq!(out.output["path"], "a/b/c.txt");
    assert_eq!(out.model_text(), "created a/b/c.txt (2 lines, 31B)");
    let again = write(&tool, &ws, json!({"path": "a/b/c.txt", "content": ""})).await;
    assert_eq!(again.output["change"], "replaced");
    assert_eq!(std::fs::read(ws.path("a/b/c.txt")).unwrap(), b"");
    let same = write(&tool, &ws, json!({"path": "a/b/c.txt", "content": ""})).await;
    assert_eq!(same.output["change"], "unchanged");
    assert_eq!(
        same.model_text(),
        "a/b/c.txt is unchanged (the content was already there)"
    );
    assert!(
        std::fs::read_dir(locks.path()).unwrap().next().is_none(),
        "every lock is released"
    );
}

#[tokio::test]
async fn a_truncated_payload_gets_the_diagnostic_and_writes_nothing() {
    let (ws, locks) = (TestWorkspace::new(), tempfile::tempdir().unwrap());
    let out = write(
        &tool(&locks),
        &ws,
        json!({"__raw": "{\"path\": \"x.txt\", \"content\": \"fn main() {"}),
    )
    .await;
    assert!(out.is_error);
    assert_eq!(out.output["code"], "invalid_arguments");
    assert!(
        out.error_message().unwrap().contains("cut off"),
        "{}",
        out.output
    );
    assert!(!ws.path("x.txt").exists());
}

#[tokio::test]
async fn writes_outside_the_workspace_are_refused() {
    let (ws, locks) = (TestWorkspace::new(), tempfile::tempdir().unwrap());
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("victim.txt");
    std::fs::write(&target, "original").unwrap();
    std::os::unix::fs::symlink(&target, ws.path("evil.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("nothing/here"), ws.path("dangling.txt"))
        .unwrap();
    let tool = tool(&locks);
    for path in [
        "evil.txt",
        "dangling.txt",
        "../victim.txt",
        target.to_str().unwrap(),
    ] {
        let out = write(&tool, &ws, json!({"path": path, "content": "pwned"})).await;
        assert_eq!(
            out.output["code"], "sandbox_write_blocked",
            "{path}: {}",
            out.output
        );
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "original");
    assert!(!outside.path().join("nothing").exists());
}

#[tokio::test]
async fn directories_and_bad_arguments_are_refused() {
    let (ws, locks) = (TestWorkspace::new(), tempfile::tempdir().unwrap());
    ws.write("dir/x.txt", "x");
    let tool = tool(&locks);
    let dir = write(&tool, &ws, json!({"path": "dir", "content": "x"})).await;
    assert!(
        dir.error_message().unwrap().contains("directory"),
        "{}",
        dir.output
    );
    assert!(ws.path("dir").is_dir());
    let missing = write(&tool, &ws, json!({"path": "y.txt"})).await;
    assert_eq!(missing.output["code"], "invalid_arguments");
    assert!(missing.error_message().unwrap().contains("content"));
    let blank = write(&tool, &ws, json!({"path": "", "content": "x"})).await;
    assert_eq!(blank.output["code"], "invalid_arguments");
}

#[test]
fn spec_and_hooks() {
    let locks = tempfile::tempdir().unwrap();
    let tool = tool(&locks);
    assert_eq!(
        (tool.spec().kind, tool.spec().policy),
        (ToolKind::FileChange, ToolPolicy::OnRequest)
    );
    assert_eq!(
        tool.spec().input_schema["required"],
        json!(["path", "content"])
    );
    assert_eq!(
        tool.write_paths(&json!({"path": "src/x.rs", "content": ""})),
        vec!["src/x.rs".to_owned()]
    );
    assert!(tool.write_paths(&json!({"__raw": "{"})).is_empty());
    assert_eq!(
        tool.edit_guard(&json!({"path": "a"})),
        None,
        "write is not read-before-edit gated"
    );
}
