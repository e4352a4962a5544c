//! Which MCP servers a `call` needs, so that it starts only those.
//!
//! `call` attaches the configured servers idle ([`McpLaunch::OnDemand`]) and, before each
//! call, starts what the call's tool needs and waits for it (each first attempt is bounded
//! by its server's start-up timeout):
//!
//! | tool | servers started |
//! |---|---|
//! | a tool of a non-MCP provider (`read`, `bash`, `web_fetch`, …) | none |
//! | `mcp_<slug>_…` (slugs are prefix-free: at most one server owns a name) | its owner |
//! | `mcp_describe` / `mcp_call` with `name` | the owner of `name` (all when none owns it) |
//! | `mcp_search`, or any other name | all: the tool may be any server's, and an unknown name's "closest" suggestions cover every server's tools |
//!
//! [`McpLaunch::OnDemand`]: kun_composition::McpLaunch::OnDemand

use kun_composition::{Assembly, McpAttachment};
use kun_mcp::{CALL_TOOL, DESCRIBE_TOOL};
use kun_ports::ProviderKind;
use serde_json::Value;

/// What a call needs started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// No MCP server.
    Nothing,
    /// This server.
    Server(String),
    /// Every server.
    All,
}

/// The servers `tool` called with `arguments` needs (see the module table).
#[must_use]
pub fn need(assembly: &Assembly, mcp: &McpAttachment, tool: &str, arguments: &Value) -> Need {
    let kind = assembly.registry.provider_kind_of(tool);
    if kind.is_some_and(|kind| kind != ProviderKind::Mcp) {
        return Need::Nothing;
    }
    if tool == CALL_TOOL || tool == DESCRIBE_TOOL {
        return match arguments.get("name").and_then(Value::as_str) {
            Some(target) => owner(mcp, target),
            None => Need::All,
        };
    }
    owner(mcp, tool)
}

fn owner(mcp: &McpAttachment, name: &str) -> Need {
    mcp.manager
        .owner_of(name)
        .map_or(Need::All, |server| Need::Server(server.to_owned()))
}

/// Starts what `tool` needs and waits until those servers are up or have failed.
pub async fn prepare(
    assembly: &Assembly,
    mcp: Option<&McpAttachment>,
    tool: &str,
    arguments: &Value,
) {
    let Some(mcp) = mcp else { return };
    match need(assembly, mcp, tool, arguments) {
        Need::Nothing => return,
        Need::Server(server) => mcp.launch([server.as_str()]),
        Need::All => mcp.launch_all(),
    }
    mcp.wait_started(None).await;
}
