//! `catalog`, `call` and `doctor` with an MCP server configured: the real `mcp-server-time`
//! (PyPI, pinned; `.ci/install-mcp.sh` installs it into target/ci-venv).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn time_server() -> Option<PathBuf> {
    kun_ports::testkit::external_test_program(
        env!("CARGO_MANIFEST_DIR"),
        "KUN_MCP_SERVER_TIME",
        "target/ci-venv/bin/mcp-server-time",
    )
}

fn run(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kun-tools"))
        .args(args)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let json = serde_json::from_str(text.trim()).unwrap_or(Value::Null);
    (
        out.status.code(),
        json,
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn mcp_tools_reach_catalog_call_and_doctor() {
    let Some(server) = time_server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    // Servers from a file the user passes (`--config`) are trusted; a workspace's own
    // `.kun/config.toml` could not start them.
    let config = dir.path().join("servers.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp_servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\n[mcp_servers.gone]\ncommand = \"/nonexistent/server\"\nstartup_timeout_seconds = 5\n",
            server.to_string_lossy()
        ),
    )
    .unwrap();
    let config_arg = config.to_string_lossy().into_owned();
    let ws_arg = ws.to_string_lossy().into_owned();

    let (code, catalog, err) = run(
        dir.path(),
        &[
            "catalog",
            "--workspace",
            &ws_arg,
            "--config",
            &config_arg,
            "--json",
            // A loaded machine may take more than the default few seconds to start Python.
            "--wait-mcp",
            "60",
            "--sandbox",
            "danger-full-access",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let tools = catalog["tools"].as_array().unwrap();
    let time = tools
        .iter()
        .find(|t| t["name"] == "mcp_time_get_current_time")
        .expect("the MCP tool is listed");
    assert_eq!(time["provider_id"], "mcp:time");
    let gone = catalog["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "mcp:gone")
        .unwrap();
    assert_eq!(gone["available"], false);
    assert!(
        gone["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{gone}"
    );
    // The server that cannot start is named as not ready; the one that started is not.
    let not_ready: Vec<&str> = catalog["mcp_not_ready"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(not_ready, ["gone"], "{catalog}");

    let (code, result, err) = run(
        dir.path(),
        &[
            "call",
            "--workspace",
            &ws_arg,
            "--config",
            &config_arg,
            "--yes",
            "mcp_time_get_current_time",
            "{\"timezone\": \"UTC\"}",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(result["is_error"], false, "{result}");

    let (_, doctor, err) = run(
        dir.path(),
        &[
            "doctor",
            "--workspace",
            &ws_arg,
            "--config",
            &config_arg,
            "--json",
            "--wait-mcp",
            "60",
        ],
    );
    let servers = doctor["mcp_servers"]
        .as_array()
        .unwrap_or_else(|| panic!("{doctor} {err}"));
    let time = servers.iter().find(|s| s["name"] == "time").unwrap();
    assert_eq!(time["state"], "connected", "{time}");
    let gone = servers.iter().find(|s| s["name"] == "gone").unwrap();
    assert_ne!(gone["state"], "connected", "{gone}");
}
