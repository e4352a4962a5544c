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
    kun_ports::testkit::external_test_program(
        env!("CARGO_MANIFEST_DIR"),
        "KUN_MCP_SERVER_TIME",
        "target/ci-venv/bin/mcp-server-time",
    )
}

/// Settings whose MCP servers come from a file the user chose (`--config`), so they are
/// trusted.
fn settings(dir: &std::path::Path, config: &str) -> Settings {
    let file = dir.join("user.toml");
    std::fs::write(&file, config).unwrap();
    let paths = ConfigPaths {
        workspace: dir.to_path_buf(),
        user: None,
        explicit: Some(file),
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

/// A repository's own `.kun/config.toml` or `.mcp.json` cannot start a server, whatever
/// trust it claims for it; a user definition of the same name does not lend it trust; a pin of
/// the exact definition does.
#[tokio::test]
async fn servers_a_workspace_declares_for_itself_are_not_started() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("repo");
    std::fs::create_dir_all(ws.join(".kun")).unwrap();
    let marker = dir.path().join("ran");
    let command = format!("touch {}", marker.display());
    std::fs::write(
        ws.join(".kun/config.toml"),
        format!("[mcp_servers.sneaky]\ncommand = \"sh\"\nargs = [\"-c\", {command:?}]\ntrust_scope = \"user\"\ntrusted_workspace_roots = [\".\"]\n"),
    )
    .unwrap();
    std::fs::write(
        ws.join(".mcp.json"),
        format!(
            r#"{{"mcpServers": {{"other": {{"command": "sh", "args": ["-c", {command:?}]}}}}}}"#
        ),
    )
    .unwrap();
    let paths = ConfigPaths {
        workspace: ws.clone(),
        user: None,
        explicit: None,
    };
    let settings = Settings::load(&paths, &Overrides::default()).unwrap();
    let assembly = assemble(settings, AssembleOptions::default()).unwrap();
    let attachment = attach_mcp(&assembly).await.unwrap().unwrap();
    for status in attachment.statuses() {
        let state = serde_json::to_value(&status).unwrap();
        assert_eq!(state["state"], "refused", "{state}");
        assert!(
            state["reason"].as_str().unwrap().contains("not trusted"),
            "{state}"
        );
    }
    let ctx = assembly.context("t", "u").build();
    let catalog = assembly.catalog(&ctx);
    let sneaky = catalog["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "mcp:sneaky")
        .unwrap()
        .clone();
    assert_eq!(sneaky["available"], false);
    let pin = attachment
        .statuses()
        .into_iter()
        .find(|s| s.name == "sneaky")
        .unwrap()
        .definition;
    attachment.shutdown().await;
    assert!(!marker.exists(), "an untrusted server was started");

    // The user's config defines a server of the same name and trusts it everywhere: the
    // workspace's definition still does not inherit that trust.
    let user = dir.path().join("user.toml");
    std::fs::write(&user, "[mcp_servers.sneaky]\ncommand = \"/bin/true\"\n").unwrap();
    let paths = ConfigPaths {
        workspace: ws.clone(),
        user: Some(user.clone()),
        explicit: None,
    };
    let settings = Settings::load(&paths, &Overrides::default()).unwrap();
    let assembly = assemble(settings, AssembleOptions::default()).unwrap();
    let attachment = attach_mcp(&assembly).await.unwrap().unwrap();
    attachment.shutdown().await;
    assert!(
        !marker.exists(),
        "a redefined server inherited the user's trust"
    );

    // The user pins that exact definition: now it may start (and only it: `.mcp.json`'s
    // `other` stays refused).
    std::fs::write(
        &user,
        format!("[trust]\nmcp_servers = [\"{pin}\"]\n[mcp_servers.x]\ncommand = \"true\"\nenabled = false\n"),
    )
    .unwrap();
    let settings = Settings::load(&paths, &Overrides::default()).unwrap();
    let assembly = assemble(settings, AssembleOptions::default()).unwrap();
    let attachment = attach_mcp(&assembly).await.unwrap().unwrap();
    let other = attachment
        .statuses()
        .into_iter()
        .find(|s| s.name == "other")
        .unwrap();
    assert!(
        matches!(other.state, kun_mcp::ServerState::Refused { .. }),
        "{other:?}"
    );
    attachment.shutdown().await;
    assert!(marker.exists(), "a server the user pinned is started");
}

/// A stdio server whose definition names no `cwd` starts in the workspace, so a relative
/// `command` means the workspace's file (as in Claude Code and Codex), whatever directory
/// kun-tools was started from.
#[tokio::test]
async fn a_relative_command_starts_in_the_workspace() {
    use std::os::unix::fs::PermissionsExt as _;
    let Some(server) = time_server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("run-time.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nexec {:?} --local-timezone UTC \"$@\"\n",
            server.to_string_lossy()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_ne!(std::env::current_dir().unwrap(), dir.path());
    let config = "[mcp_servers.time]\ncommand = \"./run-time.sh\"\n";
    let assembly = assemble(settings(dir.path(), config), AssembleOptions::default()).unwrap();
    let _attachment = attach_mcp(&assembly).await.unwrap().expect("configured");
    let ctx = assembly.context("thread", "turn-1").build();
    let catalog = assembly.catalog(&ctx);
    let names: Vec<&str> = catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"mcp_time_get_current_time"), "{catalog}");
}

/// `start_mcp` waits for nothing: on demand, no server runs until it is launched, and its
/// tools are registered when they arrive; `runs` tells a reload whether the servers changed.
#[tokio::test]
async fn servers_start_on_demand_and_register_when_they_arrive() {
    let Some(server) = time_server() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[mcp_servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\n\n[mcp_servers.other]\ncommand = \"/nonexistent/other\"\n",
        server.to_string_lossy()
    );
    let settings = settings(dir.path(), &config);
    let assembly = assemble(settings.clone(), AssembleOptions::default()).unwrap();
    let attachment = kun_composition::start_mcp(&assembly, kun_composition::McpLaunch::OnDemand)
        .unwrap()
        .expect("servers are configured");
    let states: Vec<_> = attachment.statuses().into_iter().map(|s| s.state).collect();
    assert_eq!(
        states,
        [kun_mcp::ServerState::Idle, kun_mcp::ServerState::Idle]
    );
    assert_eq!(attachment.not_ready().len(), 2);
    let tool = "mcp_time_get_current_time";
    assert_eq!(attachment.manager.owner_of(tool), Some("time"));
    assert!(assembly.registry.provider_kind_of(tool).is_none());

    attachment.launch(["time"]);
    assert!(
        attachment
            .wait_started(Some(std::time::Duration::from_secs(60)))
            .await
    );
    assert_eq!(
        assembly.registry.provider_kind_of(tool),
        Some(kun_ports::ProviderKind::Mcp)
    );
    let not_ready: Vec<String> = attachment.not_ready().into_iter().map(|s| s.name).collect();
    assert_eq!(not_ready, ["other"], "the other server was never launched");
    let other = attachment
        .statuses()
        .into_iter()
        .find(|s| s.name == "other")
        .unwrap();
    assert_eq!(other.state, kun_mcp::ServerState::Idle);

    assert!(attachment.runs(&settings));
    let fewer = self::settings(
        dir.path(),
        &format!(
            "[mcp_servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\n",
            server.to_string_lossy()
        ),
    );
    assert!(!attachment.runs(&fewer));
    attachment.shutdown().await;
}
