//! The built-in design-quality hook on fixture files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{call, call_as};
use kun_hooks::{BuiltinHook, HookEngine, HooksConfig};
use kun_ports::{HookRunner, ToolResult, ToolRole};
use serde_json::{Value, json};
use std::path::Path;

fn engine() -> HookEngine {
    HookEngine::builder()
        .builtin(BuiltinHook::DesignQuality)
        .build()
        .unwrap()
}

/// Copies a fixture into a scratch workspace (as if the tool had just written it).
fn workspace_with(fixture: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/design")
        .join(fixture);
    std::fs::create_dir_all(ws.path().join("src")).unwrap();
    std::fs::copy(source, ws.path().join("src").join(fixture)).unwrap();
    ws
}

async fn review(tool: &str, fixture: &str) -> ToolResult {
    let ws = workspace_with(fixture);
    let path = format!("src/{fixture}");
    engine()
        .post_tool_use(
            &call_as(ws.path(), tool, ToolRole::FileEditor, json!({"path": path})),
            ToolResult::ok(json!({"path": path, "bytes_written": 10})),
        )
        .await
        .unwrap()
        .result
}

fn findings(result: &ToolResult) -> Vec<(String, u64)> {
    result.output["design_quality_review"]
        .as_array()
        .unwrap_or_else(|| panic!("no design_quality_review in {}", result.output))
        .iter()
        .map(|f| {
            assert!(f["message"].as_str().is_some_and(|m| !m.is_empty()));
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn pairs(expected: &[(&str, u64)]) -> Vec<(String, u64)> {
    expected
        .iter()
        .map(|(r, l)| ((*r).to_owned(), *l))
        .collect()
}

#[tokio::test]
async fn html_findings_carry_rules_and_line_numbers() {
    let result = review("write", "landing.html").await;
    assert!(!result.is_error);
    assert_eq!(result.output["bytes_written"], 10);
    assert_eq!(
        findings(&result),
        pairs(&[
            ("fixed_width", 5),
            ("focus_outline_removed", 6),
            ("inline_style", 10),
            ("img_missing_alt", 11),
        ])
    );
}

#[tokio::test]
async fn css_findings_skip_max_width_and_small_widths() {
    let result = review("edit", "theme.css").await;
    assert_eq!(
        findings(&result),
        pairs(&[("fixed_width", 5), ("important", 6)])
    );
}

#[tokio::test]
async fn tsx_style_objects_and_multiline_images() {
    let result = review("write", "Profile.tsx").await;
    assert_eq!(
        findings(&result),
        pairs(&[
            ("inline_style", 3),
            ("fixed_width", 3),
            ("img_missing_alt", 4)
        ])
    );
}

#[tokio::test]
async fn any_file_editor_is_reviewed_whatever_its_name() {
    let result = review("save_file", "theme.css").await;
    assert_eq!(
        findings(&result),
        pairs(&[("fixed_width", 5), ("important", 6)])
    );
}

#[tokio::test]
async fn a_clean_file_is_left_alone() {
    let result = review("write", "clean.vue").await;
    assert_eq!(
        result.output,
        json!({"path": "src/clean.vue", "bytes_written": 10})
    );
}

#[tokio::test]
async fn other_tools_files_errors_and_missing_files_are_skipped_quietly() {
    let ws = workspace_with("landing.html");
    let engine = engine();
    let untouched = ToolResult::ok(json!({"ok": true}));
    let editor = |args| call_as(ws.path(), "write", ToolRole::FileEditor, args);
    let cases = [
        call(ws.path(), "read", json!({"path": "src/landing.html"})),
        // The name alone does not make a file editor: the role is the tool's declaration.
        call(ws.path(), "write", json!({"path": "src/landing.html"})),
        call_as(
            ws.path(),
            "create_plan",
            ToolRole::PlanWriter,
            json!({"path": "src/landing.html"}),
        ),
        editor(json!({"path": "src/missing.html"})),
        editor(json!({"path": "README.md"})),
        editor(json!({"content": "no path"})),
        editor(json!({"path": "src"})),
    ];
    for case in cases {
        let outcome = engine
            .post_tool_use(&case, untouched.clone())
            .await
            .unwrap();
        assert_eq!(outcome.result, untouched, "{:?}", case.arguments);
        assert!(outcome.warnings.is_empty());
        assert!(outcome.additional_context.is_empty());
    }
    let failed = ToolResult::tool_error("disk full");
    let outcome = engine
        .post_tool_use(&editor(json!({"path": "src/landing.html"})), failed.clone())
        .await
        .unwrap();
    assert_eq!(outcome.result, failed);
}

#[tokio::test]
async fn absolute_paths_and_non_object_outputs_become_context() {
    let ws = workspace_with("theme.css");
    let absolute = ws.path().join("src/theme.css");
    let outcome = engine()
        .post_tool_use(
            &call_as(
                ws.path(),
                "edit",
                ToolRole::FileEditor,
                json!({"path": absolute.to_str().unwrap()}),
            ),
            ToolResult::ok(Value::String("edited".into())),
        )
        .await
        .unwrap();
    assert_eq!(outcome.result.output, "edited");
    assert_eq!(outcome.additional_context.len(), 1);
    assert!(outcome.additional_context[0].contains("line 6 [important]"));
}

#[tokio::test]
async fn the_built_in_is_opt_in_and_runs_before_configured_hooks() {
    let off = HookEngine::builder().build().unwrap();
    assert!(off.is_empty());
    let result = off
        .post_tool_use(
            &call_as(
                workspace_with("theme.css").path(),
                "write",
                ToolRole::FileEditor,
                json!({"path": "src/theme.css"}),
            ),
            ToolResult::ok(json!({})),
        )
        .await
        .unwrap();
    assert_eq!(result.result.output, json!({}));
    assert!(!engine().is_empty());

    let ws = workspace_with("theme.css");
    let config = HooksConfig::from_json_str(
        r#"{"PostToolUse": [{"matcher": "write", "hooks": [{"type": "command",
            "command": "grep -q design_quality_review && echo '{\"additionalContext\": \"hook saw the review\"}'"}]}]}"#,
    )
    .unwrap();
    let both = HookEngine::builder()
        .config(config)
        .builtin(BuiltinHook::DesignQuality)
        .build()
        .unwrap();
    let outcome = both
        .post_tool_use(
            &call_as(
                ws.path(),
                "write",
                ToolRole::FileEditor,
                json!({"path": "src/theme.css"}),
            ),
            ToolResult::ok(json!({})),
        )
        .await
        .unwrap();
    assert_eq!(outcome.additional_context, ["hook saw the review"]);
}
