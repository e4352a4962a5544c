//! `[shell] env` and `[sandbox] network` reach the commands the model runs: a variable of
//! kun-tools' own environment is hidden from `bash` unless the user's config names it, and a
//! reload that changes the list rebuilds the built-in tools with it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

use kun_composition::{AssembleOptions, Assembly, ConfigPaths, Overrides, Settings, assemble};
use kun_ports::{ApprovalPolicy, ToolCall, ToolHost as _};
use std::path::Path;

/// Set by cargo (and nextest) for every test process: a variable we have but did not choose.
const VARIABLE: &str = "CARGO_MANIFEST_DIR";

fn settings(root: &Path, user_config: &str) -> Settings {
    let user = root.join("user.toml");
    std::fs::write(&user, user_config).unwrap();
    let workspace = root.join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let paths = ConfigPaths {
        workspace,
        user: Some(user),
        explicit: None,
    };
    Settings::load(&paths, &Overrides::default()).unwrap()
}

/// One call per turn: the ledger (kept across a reload) replays a call id it has seen.
async fn echo(assembly: &Assembly, turn: &str) -> String {
    let ctx = assembly
        .context("thread", turn)
        .approval(ApprovalPolicy::Auto)
        .build();
    let command = format!("echo \"[${VARIABLE}]\"");
    let call = ToolCall::new("c", "bash", serde_json::json!({ "command": command }));
    let result = assembly.host.execute(call, &ctx).await.unwrap();
    assert!(!result.is_error, "{result:?}");
    let text = result.model_text();
    text.lines()
        .find(|line| line.starts_with('['))
        .unwrap_or_else(|| panic!("no echo in {text}"))
        .to_owned()
}

#[tokio::test]
async fn commands_see_only_the_variables_the_user_named() {
    let value = std::env::var(VARIABLE).unwrap();
    let dir = tempfile::tempdir().unwrap();

    let hidden = assemble(settings(dir.path(), ""), AssembleOptions::default()).unwrap();
    assert_eq!(echo(&hidden, "t1").await, "[]");

    let named = format!("[shell]\nenv = [\"{VARIABLE}\"]\n");
    let fresh = assemble(settings(dir.path(), &named), AssembleOptions::default()).unwrap();
    assert_eq!(echo(&fresh, "t2").await, format!("[{value}]"));

    let reloaded = hidden.reassemble(settings(dir.path(), &named)).unwrap();
    assert_eq!(echo(&reloaded, "t3").await, format!("[{value}]"));
}

async fn connects(assembly: &Assembly, port: u16, turn: &str) -> bool {
    let ctx = assembly
        .context("thread", turn)
        .approval(ApprovalPolicy::Auto)
        .build();
    let command = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let call = ToolCall::new("c", "bash", serde_json::json!({ "command": command }));
    let result = assembly.host.execute(call, &ctx).await.unwrap();
    !result.is_error && result.model_text().contains("connected")
}

#[tokio::test]
async fn confined_commands_reach_the_network_only_when_the_user_allows_it() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();

    let closed = assemble(settings(dir.path(), ""), AssembleOptions::default()).unwrap();
    if closed.capabilities.tier().is_confined() {
        assert!(
            !connects(&closed, port, "t1").await,
            "the network is off by default"
        );
    }
    let open = closed
        .reassemble(settings(dir.path(), "[sandbox]\nnetwork = true\n"))
        .unwrap();
    assert!(connects(&open, port, "t2").await);
}
