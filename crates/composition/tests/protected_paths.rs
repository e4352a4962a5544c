//! The user's `[sandbox] protected_path_exceptions` reach gate one through `assemble()`: the
//! listed guard becomes writable, every other guard stays protected, and a bad entry is a
//! configuration error naming the key.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_composition::config::Settings;
use kun_composition::{AssembleError, AssembleOptions, Assembly, assemble};
use kun_ports::{ApprovalPolicy, ToolCall, ToolHost, ToolResult};
use serde_json::json;
use std::path::PathBuf;

fn settings(dir: &tempfile::TempDir, exceptions: &[&str]) -> Settings {
    let mut settings = Settings::defaults(dir.path());
    settings.approval = ApprovalPolicy::Auto;
    settings.sandbox_options.protected_path_exceptions =
        exceptions.iter().map(PathBuf::from).collect();
    settings
}

async fn write(assembly: &Assembly, path: &str) -> ToolResult {
    let ctx = assembly.context("thread", path).build();
    let call = ToolCall::new(
        format!("w-{path}"),
        "write",
        json!({"path": path, "content": "x"}),
    );
    assembly.host.execute(call, &ctx).await.unwrap()
}

#[tokio::test]
async fn an_exception_opens_only_the_listed_guard() {
    let dir = tempfile::tempdir().unwrap();
    let assembly = assemble(
        settings(&dir, &[".claude/commands"]),
        AssembleOptions::default(),
    )
    .unwrap();

    let allowed = write(&assembly, ".claude/commands/review.md").await;
    assert!(!allowed.is_error, "{:?}", allowed.output);
    assert!(dir.path().join(".claude/commands/review.md").exists());

    for guarded in [".claude/settings.json", ".kun/config.toml", ".git/config"] {
        let refused = write(&assembly, guarded).await;
        assert_eq!(
            refused.error_code(),
            Some("sandbox_protected_path"),
            "{guarded}: {:?}",
            refused.output
        );
        assert!(!dir.path().join(guarded).exists(), "{guarded} was written");
    }
}

#[tokio::test]
async fn without_exceptions_every_guard_is_protected() {
    let dir = tempfile::tempdir().unwrap();
    let assembly = assemble(settings(&dir, &[]), AssembleOptions::default()).unwrap();
    let refused = write(&assembly, ".claude/commands/review.md").await;
    assert_eq!(refused.error_code(), Some("sandbox_protected_path"));
}

#[test]
fn an_absolute_exception_is_a_configuration_error() {
    let dir = tempfile::tempdir().unwrap();
    let Err(AssembleError::Config(error)) =
        assemble(settings(&dir, &["/etc"]), AssembleOptions::default())
    else {
        panic!("an absolute exception must be refused");
    };
    assert_eq!(
        error.key.as_deref(),
        Some("sandbox.protected_path_exceptions")
    );
    assert!(error.message.contains("/etc"), "{}", error.message);
}
