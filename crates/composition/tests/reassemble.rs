//! Reloading: `Assembly::reassemble` applies new settings and keeps the state that must
//! survive a reload.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_composition::config::{ConfigPaths, Overrides, Settings};
use kun_composition::{AssembleOptions, Assembly, assemble};
use kun_ports::{ApprovalPolicy, ThreadMode, ToolCall, ToolHost};
use serde_json::{Value, json};

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    dir
}

fn settings(dir: &tempfile::TempDir) -> Settings {
    let mut settings = Settings::defaults(dir.path());
    settings.approval = ApprovalPolicy::Auto;
    settings
}

async fn run(assembly: &Assembly, turn: &str, tool: &str, args: Value) -> Value {
    let ctx = assembly.context("thread", turn).build();
    let result = assembly
        .host
        .execute(ToolCall::new(format!("{turn}-call"), tool, args), &ctx)
        .await
        .unwrap();
    json!({"is_error": result.is_error, "output": result.output})
}

fn names(assembly: &Assembly, mode: ThreadMode) -> Vec<String> {
    let ctx = assembly.context("thread", "list").mode(mode).build();
    assembly
        .registry
        .list_tools(&ctx)
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}

#[tokio::test]
async fn reads_before_a_reload_still_count_for_edits_after_it() {
    let dir = workspace();
    let first = assemble(settings(&dir), AssembleOptions::default()).unwrap();
    let read = run(&first, "t1", "read", json!({"path": "notes.txt"})).await;
    assert_eq!(read["is_error"], false, "{read}");

    let mut next = settings(&dir);
    next.tools.deny = Some(vec!["bash".to_owned()]);
    let second = first.reassemble(next).unwrap();
    assert!(!names(&second, ThreadMode::Agent).contains(&"bash".to_owned()));
    assert!(names(&first, ThreadMode::Agent).contains(&"bash".to_owned()));
    let edit = run(
        &second,
        "t2",
        "edit",
        json!({"path": "notes.txt", "oldText": "beta", "newText": "BETA"}),
    )
    .await;
    assert_eq!(edit["is_error"], false, "{edit}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "alpha\nBETA\n"
    );
}

#[test]
fn the_plan_whitelist_follows_the_new_settings() {
    let dir = workspace();
    let first = assemble(settings(&dir), AssembleOptions::default()).unwrap();
    let before = names(&first, ThreadMode::Plan);
    assert!(!before.contains(&"write".to_owned()), "{before:?}");

    let mut next = settings(&dir);
    next.tools.plan_allow = Some(vec!["read".to_owned(), "write".to_owned()]);
    let second = first.reassemble(next).unwrap();
    let plan = names(&second, ThreadMode::Plan);
    // The configured whitelist admits `write`; read-only tools stay admitted regardless.
    assert!(plan.contains(&"write".to_owned()), "{plan:?}");
    assert!(plan.contains(&"grep".to_owned()), "{plan:?}");
    assert!(!plan.contains(&"bash".to_owned()), "{plan:?}");
    assert!(!names(&first, ThreadMode::Plan).contains(&"write".to_owned()));
}

/// Background jobs live in the built-in provider: kept while `[limits]` is unchanged.
#[tokio::test]
async fn background_jobs_survive_a_reload_with_the_same_limits() {
    let dir = workspace();
    let mut base = settings(&dir);
    base.sandbox = kun_ports::SandboxMode::DangerFullAccess;
    let first = assemble(base.clone(), AssembleOptions::default()).unwrap();
    let started = run(
        &first,
        "t1",
        "background_shell",
        json!({"action": "start", "command": "sleep 60"}),
    )
    .await;
    assert_eq!(started["is_error"], false, "{started}");
    let id = started["output"]["id"].clone();
    let jobs = |listing: &Value| listing["output"]["jobs"].as_array().map_or(0, Vec::len);

    let mut next = base.clone();
    next.tools.deny = Some(vec!["lsp".to_owned()]);
    let same_limits = first.reassemble(next.clone()).unwrap();
    let listed = run(
        &same_limits,
        "t2",
        "background_shell",
        json!({"action": "list"}),
    )
    .await;
    assert_eq!(jobs(&listed), 1, "{listed}");

    next.limits.max_output_lines = Some(10);
    let new_limits = same_limits.reassemble(next).unwrap();
    let listed = run(
        &new_limits,
        "t3",
        "background_shell",
        json!({"action": "list"}),
    )
    .await;
    assert_eq!(jobs(&listed), 0, "{listed}");

    let killed = run(
        &same_limits,
        "t4",
        "background_shell",
        json!({"action": "kill", "id": id}),
    )
    .await;
    assert_eq!(killed["is_error"], false, "{killed}");
}

#[tokio::test]
async fn new_limits_apply_to_the_next_call() {
    let dir = workspace();
    let first = assemble(settings(&dir), AssembleOptions::default()).unwrap();
    let whole = run(&first, "t1", "read", json!({"path": "notes.txt"})).await;
    assert_eq!(whole["output"].get("truncated_by"), None, "{whole}");
    let mut next = settings(&dir);
    next.limits.max_output_lines = Some(1);
    let second = first.reassemble(next).unwrap();
    let cut = run(&second, "t2", "read", json!({"path": "notes.txt"})).await;
    assert_eq!(cut["output"]["truncated_by"], "max_lines", "{cut}");
    assert_eq!(cut["output"]["content"], "alpha\n", "{cut}");
}

#[test]
fn settings_loaded_from_files_reassemble_like_the_first_time() {
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join(".kun")).unwrap();
    let paths = ConfigPaths {
        workspace: dir.path().to_path_buf(),
        user: None,
        explicit: None,
    };
    let first = assemble(
        Settings::load(&paths, &Overrides::default()).unwrap(),
        AssembleOptions::default(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join(".kun/config.toml"),
        "sandbox = \"read-only\"\n",
    )
    .unwrap();
    let reloaded = Settings::load(&paths, &Overrides::default()).unwrap();
    let second = first.reassemble(reloaded.clone()).unwrap();
    let fresh = assemble(reloaded, AssembleOptions::default()).unwrap();
    let ctx = |a: &Assembly| a.catalog(&a.context("t", "u").build())["fingerprint"].clone();
    assert_eq!(ctx(&second), ctx(&fresh));
    assert_ne!(ctx(&second), ctx(&first));
}
