//! `kun-tools serve` driven by a real MCP client: the official Python SDK (the `mcp` package
//! pinned in .ci/requirements-python.txt, installed by .ci/run into target/ci-venv).
//!
//! The scenarios live in tests/python/serve_client.py; each test here prepares a workspace,
//! runs one scenario and checks the files from the outside too. Without the venv or the
//! package the tests are skipped with a message, except under `CI=true`, where they fail.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use std::path::PathBuf;
use std::process::{Command, Output};
use support::Env;

fn python() -> Option<PathBuf> {
    support::sdk_python()
}

fn script() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/serve_client.py"
    ))
}

/// Runs one scenario against `env`'s workspace; panics with the script's output on failure.
fn scenario(python: &PathBuf, env: &Env, name: &str, extra: &[&str]) -> Output {
    let ws = env.ws_arg();
    let out = Command::new(python)
        .arg(script())
        .args([name, "--kun", support::kun_tools(), "--workspace", &ws])
        .args(extra)
        .env("XDG_CONFIG_HOME", env.dir.path().join("config"))
        .env("XDG_STATE_HOME", env.dir.path().join("state"))
        .env("XDG_DATA_HOME", env.dir.path().join("data"))
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scenario {name} failed\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("ok {name}")));
    out
}

#[test]
fn lists_reads_and_asks_before_write_through_elicitation() {
    let Some(python) = python() else { return };
    let env = Env::new();
    scenario(&python, &env, "approvals", &[]);
    // Deny and decline left nothing; allow and allow_for_session wrote.
    let ws = env.ws();
    assert_eq!(
        std::fs::read_to_string(ws.join("src/new.txt")).unwrap(),
        "allowed"
    );
    assert!(ws.join("src/one.txt").exists() && ws.join("src/two.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("src/notes.txt")).unwrap(),
        "alpha\nbeta\ngamma\n"
    );
}

#[test]
fn approval_never_blocks_without_asking() {
    let Some(python) = python() else { return };
    let env = Env::new();
    env.workspace_config("approval = \"never\"\n");
    scenario(&python, &env, "never", &[]);
    assert!(!env.ws().join("src/new.txt").exists());
}

#[test]
fn a_client_without_elicitation_gets_the_fallback() {
    let Some(python) = python() else { return };
    let env = Env::new();
    scenario(&python, &env, "fallback", &[]);
}

#[test]
fn reloading_the_workspace_config_sends_list_changed() {
    let Some(python) = python() else { return };
    let env = Env::new();
    scenario(&python, &env, "reload", &[]);
}

#[test]
fn streamable_http_with_and_without_the_right_token() {
    let Some(python) = python() else { return };
    let env = Env::new();
    let server = env.serve_http(Some("py-secret"));
    let out = scenario(
        &python,
        &env,
        "http",
        &["--url", &server.url, "--token", "py-secret"],
    );
    // DELETE at the end of the session answers 200, which the SDK accepts silently.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
    scenario(
        &python,
        &env,
        "http-refused",
        &["--url", &server.url, "--token", "not-the-secret"],
    );
    let open = env.serve_http(None);
    scenario(&python, &env, "http", &["--url", &open.url]);
}

#[test]
fn a_slow_mcp_server_never_holds_up_initialize() {
    let Some(python) = python() else { return };
    let env = Env::new();
    let config = env.dir.path().join("servers.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp_servers.slow]\ncommand = {:?}\nargs = [\"--startup-delay-ms\", \"3000\"]\nstartup_timeout_seconds = 600\n",
            support::fixture_server().to_string_lossy()
        ),
    )
    .unwrap();
    let out = scenario(
        &python,
        &env,
        "slow-server",
        &["--config", &config.to_string_lossy()],
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
}
