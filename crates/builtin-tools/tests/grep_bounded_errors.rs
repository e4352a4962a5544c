//! A huge bad pattern is not echoed back whole: the error quotes a bounded head of it and says
//! how long it was (issue 9: a 10 MB pattern came back in full, far over the 50 KB limit).

#![allow(clippy::expect_used, reason = "test helpers fail loudly")]

use kun_builtin_tools::search::GrepTool;
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::Tool;
use serde_json::json;

#[tokio::test]
async fn a_ten_megabyte_pattern_is_quoted_in_a_bounded_error() {
    let ws = TestWorkspace::new();
    ws.write("a.txt", "needle\n");
    // An error at the very start, so the parser stops at once; its message still quotes the
    // whole pattern.
    let pattern = format!("(?z){}", "n".repeat(10 * 1024 * 1024));
    let total = pattern.chars().count();
    let result = GrepTool::default()
        .execute(json!({"pattern": pattern}), ws.tool_context("c"))
        .await
        .expect("a result");
    assert_eq!(result.error_code(), Some("invalid_arguments"));
    let text = result.model_text();
    assert!(
        text.len() < 8 * 1024,
        "the error is {} bytes long: {}",
        text.len(),
        &text[..200]
    );
    assert!(
        text.contains(&format!("{total} characters in all")),
        "{text}"
    );
    let quoted = result.output["pattern"]
        .as_str()
        .expect("the pattern detail");
    assert!(
        quoted.starts_with(&format!("(?z){}", "n".repeat(196))),
        "{quoted}"
    );
    assert!(quoted.chars().count() < 300, "{quoted}");
}
