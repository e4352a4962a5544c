//! MCP servers from the configuration reach the catalog and the pipeline: the real
//! `mcp-server-time` (PyPI, pinned; `.ci/install-mcp.sh` installs it into target/ci-venv).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

use kun_composition::{AssembleOptions, ConfigPaths, Overrides, Settings, assemble, attach_mcp};
use kun_ports::{ApprovalPolicy, ToolCall, ToolHost};
use serde_json::json;
use std::path::PathBuf;

fn time_server() -> Option<PathBuf> {
    let venv =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/ci-venv/bin/mcp-server-time");
    let found = std::env::var_os("KUN_MCP_SERVER_TIME")
        .map(PathBuf::from)
        .or_else(|| venv.exists().then_some(venv));
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "mcp-server-time must be installed in CI (.ci/install-mcp.sh)"
        );
        eprintln!("skipping: mcp-server-time is not installed (run .ci/install-mcp.sh)");
    }
    found
}

fn settings(dir: &std::path::Path, config: &str) -> Settings {
    std::fs::create_dir_all(dir.join(".kun")).unwrap();
    std::fs::write(dir.join(".kun/config.toml"), config).unwrap();
    let paths = ConfigPaths {
        workspace: dir.to_path_buf(),
        user: None,
        explicit: None,
    };
    Settings::load(&paths, &Overrides::default()).unwrap()
}

#[tokio::test]
async fn configured_servers_are_listed_and_called_through_the_gates() {
    let Some(server) = time_server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "approval = \"on-request\"\n[mcp_servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\n\n[mcp_servers.off]\ncommand = \"/nonexistent\"\nenabled = false\n",
        server.to_string_lossy()
    );
    let assembly = assemble(settings(dir.path(), &config), AssembleOptions::default()).unwrap();
    let attachment = attach_mcp(&assembly)
        .await
        .unwrap()
        .expect("servers are configured");

    let ctx = assembly.context("thread", "turn-1").build();
    let catalog = assembly.catalog(&ctx);
    let tools = catalog["tools"].as_array().unwrap();
    let current = tools
        .iter()
        .find(|t| t["name"] == "mcp_time_get_current_time")
        .expect("time tool listed");
    assert_eq!(current["provider_id"], "mcp:time");
    assert_eq!(current["provider_kind"], "mcp");
    let providers = catalog["providers"].as_array().unwrap();
    let off = providers
        .iter()
        .find(|p| p["id"] == "mcp:off")
        .expect("disabled server in diagnostics");
    assert_eq!(off["enabled"], false);
    // Registered once in both registries.
    let ids: Vec<_> = assembly
        .registry
        .diagnostics()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(
        ids.iter().filter(|id| *id == "mcp:time").count(),
        1,
        "{ids:?}"
    );
    assert!(
        assembly
            .child_registry
            .diagnostics()
            .iter()
            .any(|p| p.id == "mcp:time")
    );

    // The call goes through the pipeline: with auto approval it runs and returns the server's answer.
    let auto = assembly
        .context("thread", "turn-2")
        .approval(ApprovalPolicy::Auto)
        .build();
    let call = ToolCall::new(
        "c1",
        "mcp_time_get_current_time",
        json!({"timezone": "UTC"}),
    );
    let result = assembly.host.execute(call, &auto).await.unwrap();
    assert!(!result.is_error, "{}", result.output);
    assert!(
        result.output.to_string().contains("UTC"),
        "{}",
        result.output
    );

    attachment.shutdown().await;
}

#[tokio::test]
async fn a_server_entry_without_a_transport_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let assembly = assemble(
        settings(dir.path(), "[mcp_servers.broken]\nargs = [\"x\"]\n"),
        AssembleOptions::default(),
    )
    .unwrap();
    let err = attach_mcp(&assembly).await.unwrap_err();
    assert_eq!(err.key.as_deref(), Some("mcp_servers.broken"), "{err}");
    assert!(err.message.contains("command"), "{err}");
}
