//! `git_inspect` on a real temporary repository with fixed authors and dates.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::git_inspect::{GitInspectConfig, GitInspectTool};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{
    CommandConfinement, ConfinedCommand, FileSystemScope, MockCommandConfinement, NetworkAccess,
    Tool, ToolResult,
};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

fn unconfined() -> Arc<dyn CommandConfinement> {
    let mut mock = MockCommandConfinement::new();
    mock.expect_command().returning(|spec| {
        assert!(
            matches!(spec.scope.files, FileSystemScope::ReadOnly(_)),
            "git_inspect writes nowhere"
        );
        assert_eq!(spec.scope.network, NetworkAccess::Disabled);
        Ok(ConfinedCommand::bare(spec.unconfined_command()))
    });
    Arc::new(mock)
}

fn git(root: &Path, args: &[&str], date: &str) {
    let status = Command::new("git")
        .args(args)
        .current_dir(root)
        .env("GIT_AUTHOR_NAME", "Ada Lovelace")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada Lovelace")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", root)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A repository with two commits on `main`, then an unstaged change to `notes.txt`.
fn repository() -> TestWorkspace {
    let ws = TestWorkspace::new();
    let root = ws.root().to_path_buf();
    git(&root, &["init", "-q", "-b", "main"], "2024-01-01T10:00:00Z");
    ws.write("notes.txt", "first line\nsecond line\n");
    ws.write("src/lib.rs", "pub fn answer() -> u32 { 41 }\n");
    git(&root, &["add", "."], "2024-01-01T10:00:00Z");
    git(
        &root,
        &["commit", "-q", "-m", "Add notes and lib"],
        "2024-01-01T10:00:00Z",
    );
    ws.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    git(
        &root,
        &["commit", "-q", "-am", "Fix the answer"],
        "2024-02-03T12:00:00Z",
    );
    ws.write("notes.txt", "first line\nchanged line\n");
    ws
}

async fn inspect(tool: &GitInspectTool, ws: &TestWorkspace, args: Value) -> ToolResult {
    tool.execute(args, ws.tool_context("call-1")).await.unwrap()
}

async fn output(tool: &GitInspectTool, ws: &TestWorkspace, args: Value) -> String {
    let result = inspect(tool, ws, args.clone()).await;
    assert!(!result.is_error, "{args}: {}", result.output);
    result.output["output"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn status_shows_the_branch_and_changed_files() {
    let ws = repository();
    ws.write("new file.txt", "untracked\n");
    let tool = GitInspectTool::new(unconfined());
    let result = inspect(&tool, &ws, json!({"action": "status"})).await;
    assert_eq!(
        result.output["command"],
        "git status --short --branch --ignore-submodules=all"
    );
    let text = result.output["output"].as_str().unwrap();
    // git quotes names with spaces in the short format.
    assert_eq!(text, "## main\n M notes.txt\n?? \"new file.txt\"\n");
}

#[tokio::test]
async fn diff_shows_unstaged_then_staged_changes() {
    let ws = repository();
    let tool = GitInspectTool::new(unconfined());
    let diff = output(&tool, &ws, json!({"action": "diff"})).await;
    assert!(diff.contains("-second line\n+changed line"), "{diff}");
    assert_eq!(
        output(&tool, &ws, json!({"action": "diff", "staged": true})).await,
        ""
    );
    git(ws.root(), &["add", "notes.txt"], "2024-02-03T12:00:00Z");
    let staged = output(&tool, &ws, json!({"action": "diff", "staged": true})).await;
    assert!(staged.contains("+changed line"), "{staged}");
    let against_first = output(
        &tool,
        &ws,
        json!({"action": "diff", "rev": "HEAD~1", "path": "src"}),
    )
    .await;
    assert!(
        against_first.contains("-pub fn answer() -> u32 { 41 }"),
        "{against_first}"
    );
    assert!(
        !against_first.contains("notes.txt"),
        "the path limits the diff"
    );
}

#[tokio::test]
async fn log_lists_commits_newest_first() {
    let ws = repository();
    let tool = GitInspectTool::new(unconfined());
    let log = output(&tool, &ws, json!({"action": "log"})).await;
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(
        lines[0].ends_with(" 2024-02-03 Ada Lovelace: Fix the answer"),
        "{log}"
    );
    assert!(
        lines[1].ends_with(" 2024-01-01 Ada Lovelace: Add notes and lib"),
        "{log}"
    );
    let one = output(&tool, &ws, json!({"action": "log", "limit": 1})).await;
    assert_eq!(one.lines().count(), 1);
    let notes = output(&tool, &ws, json!({"action": "log", "path": "notes.txt"})).await;
    assert!(
        notes.contains("Add notes and lib") && !notes.contains("Fix the answer"),
        "{notes}"
    );
}

#[tokio::test]
async fn show_defaults_to_head_with_stat_and_patch() {
    let ws = repository();
    let tool = GitInspectTool::new(unconfined());
    let show = output(&tool, &ws, json!({"action": "show"})).await;
    assert!(show.contains("Fix the answer"), "{show}");
    assert!(show.contains("src/lib.rs | 2 +-"), "{show}");
    assert!(show.contains("+pub fn answer() -> u32 { 42 }"), "{show}");
    let first = output(&tool, &ws, json!({"action": "show", "rev": "HEAD~1"})).await;
    assert!(first.contains("Add notes and lib"), "{first}");
}

#[tokio::test]
async fn blame_attributes_each_line() {
    let ws = repository();
    let tool = GitInspectTool::new(unconfined());
    let blame = output(&tool, &ws, json!({"action": "blame", "path": "src/lib.rs"})).await;
    assert!(
        blame.contains("(Ada Lovelace 2024-02-03 1) pub fn answer() -> u32 { 42 }"),
        "{blame}"
    );
    let notes = output(
        &tool,
        &ws,
        json!({"action": "blame", "path": "notes.txt", "rev": "HEAD", "limit": 1}),
    )
    .await;
    assert_eq!(notes.lines().count(), 1, "{notes}");
    assert!(notes.contains("2024-01-01 1) first line"), "{notes}");
}

#[tokio::test]
async fn option_injection_through_rev_is_refused() {
    let ws = repository();
    let tool = GitInspectTool::new(unconfined());
    for rev in ["--output=pwned.txt", "-p", "HEAD --output=x"] {
        for action in ["diff", "log", "show"] {
            let result = inspect(&tool, &ws, json!({"action": action, "rev": rev})).await;
            assert_eq!(
                result.error_code(),
                Some("invalid_arguments"),
                "{action} {rev}: {}",
                result.output
            );
        }
        let blame = inspect(
            &tool,
            &ws,
            json!({"action": "blame", "path": "notes.txt", "rev": rev}),
        )
        .await;
        assert_eq!(
            blame.error_code(),
            Some("invalid_arguments"),
            "blame {rev}: {}",
            blame.output
        );
    }
    assert!(!ws.path("pwned.txt").exists());
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let ws = repository();
    let tool = GitInspectTool::new(unconfined());
    let result = inspect(&tool, &ws, json!({"action": "log", "path": "../.."})).await;
    assert!(result.is_error, "{}", result.output);
}

#[tokio::test]
async fn long_output_keeps_its_head_with_a_notice() {
    let ws = repository();
    let config = GitInspectConfig {
        limits: OutputLimits::new(5, 10_000),
        ..GitInspectConfig::default()
    };
    let tool = GitInspectTool::with_config(unconfined(), config);
    let result = inspect(&tool, &ws, json!({"action": "show"})).await;
    assert!(!result.is_error);
    assert_eq!(result.output["truncated"], true);
    let text = result.output["output"].as_str().unwrap();
    assert_eq!(text.lines().count(), 5);
    assert!(text.starts_with("commit "), "the head is kept: {text}");
    let notice = result.output["notice"].as_str().unwrap();
    assert!(notice.starts_with("[showing the first 5 of "), "{notice}");
}

#[tokio::test]
async fn outside_a_repository_the_error_says_so() {
    let ws = TestWorkspace::new();
    let probe = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(ws.root())
        .output()
        .unwrap();
    assert!(
        !probe.status.success(),
        "the temporary directory is unexpectedly inside a repository"
    );
    let result = inspect(
        &GitInspectTool::new(unconfined()),
        &ws,
        json!({"action": "status"}),
    )
    .await;
    assert!(result.is_error);
    assert!(
        result
            .error_message()
            .unwrap()
            .contains("not inside a git repository"),
        "{}",
        result.output
    );
}

#[tokio::test]
async fn blame_needs_a_path_and_status_no_rev() {
    let ws = repository();
    let tool = GitInspectTool::new(unconfined());
    let blame = inspect(&tool, &ws, json!({"action": "blame"})).await;
    assert_eq!(blame.error_code(), Some("invalid_arguments"));
    let status = inspect(&tool, &ws, json!({"action": "status", "rev": "HEAD"})).await;
    assert_eq!(status.error_code(), Some("invalid_arguments"));
    let missing = inspect(&tool, &ws, json!({"action": "blame", "path": "nope.txt"})).await;
    assert!(missing.is_error);
    assert!(
        missing.error_message().unwrap().contains("exit code"),
        "{}",
        missing.output
    );
}

#[test]
fn the_spec_is_an_auto_read_only_tool_call() {
    let tool = GitInspectTool::new(unconfined());
    let spec = tool.spec();
    assert_eq!(spec.name, "git_inspect");
    assert_eq!(spec.kind, kun_ports::ToolKind::ToolCall);
    assert_eq!(spec.policy, kun_ports::ToolPolicy::Auto);
    assert_eq!(spec.side_effect, kun_ports::SideEffect::ReadOnly);
    assert_eq!(
        spec.input_schema["properties"]["action"]["enum"],
        json!(["status", "diff", "log", "show", "blame"])
    );
}

/// A workspace that is a subfolder of its repository works, limited to its own paths, and
/// names them relative to itself.
#[tokio::test]
async fn a_subfolder_workspace_sees_its_own_paths_relative_to_itself() {
    let repo = repository();
    let ws_root = repo.root().join("pkg");
    std::fs::create_dir_all(ws_root.join("src")).unwrap();
    std::fs::write(ws_root.join("src/mod.rs"), "pub mod x;\n").unwrap();
    git(repo.root(), &["add", "-A"], "2024-03-01T09:00:00Z");
    git(
        repo.root(),
        &["commit", "-q", "-m", "Add pkg"],
        "2024-03-01T09:00:00Z",
    );
    std::fs::write(ws_root.join("src/mod.rs"), "pub mod y;\n").unwrap();
    let ctx = kun_ports::ToolHostContext::builder("t", "u")
        .workspace(&ws_root)
        .build();
    let tool = GitInspectTool::new(unconfined());
    let run = |args: Value| {
        let ctx = &ctx;
        let tool = &tool;
        async move {
            let tool_ctx = kun_ports::ToolContext {
                turn: kun_ports::ToolTurn::of(ctx, &kun_ports::OpenCatalog),
                call_id: "c",
                sandbox: &kun_builtin_tools::testing::SimpleSandbox,
                progress: &kun_ports::NoProgress,
            };
            let result = tool.execute(args.clone(), tool_ctx).await.unwrap();
            assert!(!result.is_error, "{args}: {}", result.output);
            result.output["output"].as_str().unwrap().to_owned()
        }
    };
    let status = run(json!({"action": "status"})).await;
    assert_eq!(status, "## main\n M src/mod.rs\n", "notes.txt lies outside");
    let diff = run(json!({"action": "diff"})).await;
    assert!(diff.contains("--- a/src/mod.rs"), "{diff}");
    assert!(!diff.contains("notes.txt"), "{diff}");
    let log = run(json!({"action": "log"})).await;
    assert_eq!(
        log.lines().count(),
        1,
        "only the commit touching pkg: {log}"
    );
    assert!(log.contains("Add pkg"), "{log}");
    let file = run(json!({"action": "show", "rev": "HEAD:src/mod.rs"})).await;
    assert_eq!(file, "pub mod x;\n");
    let blame = run(json!({"action": "blame", "path": "src/mod.rs", "rev": "HEAD"})).await;
    assert!(
        blame.contains("(Ada Lovelace 2024-03-01 1) pub mod x;"),
        "{blame}"
    );
}
