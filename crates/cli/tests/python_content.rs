//! What the model reads through `kun-tools serve`, seen by the official Python SDK: the
//! structured parts follow the client's name, names fit the cap, and an upstream server's
//! image stays an image. Scenarios in tests/python/serve_content.py; the real
//! `mcp-server-time` and `@modelcontextprotocol/server-everything` (installed by `.ci/run`)
//! are configured behind `serve`. Without them or the venv the tests are skipped, except
//! under `CI=true`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::Env;

/// The venv's python (with the `mcp` package), the time server and server-everything.
fn tools() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let manifest = env!("CARGO_MANIFEST_DIR");
    let python = kun_ports::testkit::external_test_program(
        manifest,
        "KUN_TEST_PYTHON",
        "target/ci-venv/bin/python",
    )?;
    let time = kun_ports::testkit::external_test_program(
        manifest,
        "KUN_MCP_SERVER_TIME",
        "target/ci-venv/bin/mcp-server-time",
    )?;
    let everything = kun_ports::testkit::external_test_program(
        manifest,
        "KUN_MCP_SERVER_EVERYTHING",
        "target/ci-node/node_modules/.bin/mcp-server-everything",
    )?;
    Some((python, time, everything))
}

/// A `--config` file with `serve` (a `[serve]` table, or nothing) and both servers;
/// server-everything under a long key, so some of its names have to be shortened to fit 54
/// characters.
fn servers_config(env: &Env, serve: &str, time: &Path, everything: &Path) -> String {
    let path = env.dir.path().join("servers.toml");
    std::fs::write(
        &path,
        format!(
            "{serve}\n[mcp_servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\n\n\
             [mcp_servers.everything-server-for-long-names]\ncommand = {:?}\n",
            time.to_string_lossy(),
            everything.to_string_lossy()
        ),
    )
    .unwrap();
    path.to_string_lossy().into_owned()
}

/// Runs `name` as a client called `client_name` against `serve` with `[serve]` = `serve`.
fn scenario_with(serve: &str, name: &str, client_name: Option<&str>) {
    let Some((python, time, everything)) = tools() else {
        return;
    };
    let env = Env::new();
    let config = servers_config(&env, serve, &time, &everything);
    let ws = env.ws_arg();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/serve_content.py");
    let mut cmd = Command::new(python);
    cmd.arg(script)
        .args([name, "--kun", support::kun_tools(), "--workspace", &ws])
        .args(["--config", &config])
        .env("XDG_CONFIG_HOME", env.dir.path().join("config"))
        .env("XDG_STATE_HOME", env.dir.path().join("state"))
        .env_remove("RUST_LOG");
    if let Some(client_name) = client_name {
        cmd.args(["--client-name", client_name]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "scenario {name} ({client_name:?}) failed\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("ok {name}")));
}

fn scenario(name: &str, client_name: Option<&str>) {
    scenario_with("", name, client_name);
}

#[test]
fn an_sdk_client_gets_output_schemas_and_structured_content_that_validate() {
    scenario("structured", None);
}

#[test]
fn any_other_client_name_is_structured_too() {
    scenario("structured", Some("cursor-vscode"));
}

#[test]
fn claude_code_gets_the_rendering_only() {
    scenario("text-only", Some("claude-code"));
}

#[test]
fn codex_gets_the_rendering_only() {
    scenario("text-only", Some("codex-mcp-client"));
}

#[test]
fn never_leaves_the_structured_parts_out_for_everyone() {
    scenario_with(
        "[serve]\nstructured_content = \"never\"\n",
        "text-only",
        None,
    );
}

#[test]
fn always_sends_them_even_to_claude_code() {
    scenario_with(
        "[serve]\nstructured_content = \"always\"\n",
        "structured",
        Some("claude-code"),
    );
}
