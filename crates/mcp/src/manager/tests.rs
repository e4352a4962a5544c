#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

use super::*;
use crate::naming::tool_names;

fn idle(names: &[&str], limit: NameLimit) -> McpManager {
    McpManager::builder()
        .servers(
            names
                .iter()
                .map(|name| McpServerConfig::stdio(*name, "/nonexistent/never-started")),
        )
        .name_limit(limit)
        .idle()
        .unwrap()
}

#[tokio::test]
async fn every_tool_name_has_exactly_its_server_as_owner() {
    let limit = NameLimit::new(54).unwrap();
    let servers = [
        "git",
        "github",
        "git_hub",
        "My-Server",
        "a-very-long-server-name-that-gets-hashed-down",
    ];
    let manager = idle(&servers, limit);
    let slugs = server_slugs(servers, limit);
    let tools = ["status", "Search Issues", "查询", &"x".repeat(80)];
    for server in servers {
        for name in tool_names(server, &slugs[server], &tools, limit)
            .into_iter()
            .flatten()
        {
            assert_eq!(manager.owner_of(&name), Some(server), "{name}");
        }
    }
    for name in [
        "mcp_search",
        "mcp_describe",
        "mcp_call",
        "read",
        "mcp_",
        "mcp_gitx_y",
    ] {
        assert_eq!(manager.owner_of(name), None, "{name}");
    }
}

#[tokio::test]
async fn an_idle_manager_starts_nothing_until_launched() {
    let manager = idle(&["one", "two"], NameLimit::default());
    let states = |m: &McpManager| -> Vec<ServerState> {
        m.statuses().into_iter().map(|s| s.state).collect()
    };
    assert_eq!(states(&manager), [ServerState::Idle, ServerState::Idle]);
    assert!(manager.wait_started(Some(Duration::ZERO)).await);
    manager.launch(["two", "unknown"]);
    let now = states(&manager);
    assert_eq!(now[0], ServerState::Idle);
    assert_ne!(now[1], ServerState::Idle, "launched");
    // The command does not exist: the first attempt fails quickly and the state settles.
    assert!(manager.wait_started(Some(Duration::from_secs(30))).await);
    assert!(matches!(
        manager.statuses()[1].state,
        ServerState::Reconnecting { .. } | ServerState::Failed { .. }
    ));
    assert_eq!(manager.statuses()[0].state, ServerState::Idle);
    manager.shutdown().await;
}
