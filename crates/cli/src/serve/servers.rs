//! MCP servers while serving: they connect in the background, and `serve` follows them.
//!
//! Every catalog the MCP servers publish once its providers are registered (a server's tools
//! arriving, a server failing, reconnecting or changing its tool list) republishes the
//! catalog fingerprint at once, so sessions send `notifications/tools/list_changed` without
//! waiting for the next configuration poll. A server that cannot start is reported on stderr
//! once, with the reason; `kun-tools doctor` shows every server's state.

use super::live::Published;
use kun_mcp::{McpCatalog, ServerState, ServerStatus};
use std::collections::BTreeSet;
use std::sync::Arc;
use tokio::sync::watch;

/// Follows one set of servers until it is dropped (a reload replaced it, or `serve` ends).
pub(crate) fn follow(published: Arc<Published>, mut registered: watch::Receiver<Arc<McpCatalog>>) {
    tokio::spawn(async move {
        let mut reported = BTreeSet::new();
        loop {
            let catalog = registered.borrow_and_update().clone();
            for line in first_failures(&catalog.statuses, &mut reported) {
                eprintln!("kun-tools: {line}");
            }
            published.republish();
            if registered.changed().await.is_err() {
                return;
            }
        }
    });
}

/// One line for each server that is failing and was not reported yet.
fn first_failures(statuses: &[ServerStatus], reported: &mut BTreeSet<String>) -> Vec<String> {
    statuses
        .iter()
        .filter_map(|status| {
            let why = match &status.state {
                ServerState::Reconnecting { last_error, .. } => {
                    format!("{last_error}; retrying in the background")
                }
                ServerState::Failed { reason } => format!("{reason}; gave up"),
                _ => return None,
            };
            reported.insert(status.name.clone()).then(|| {
                format!(
                    "MCP server `{}` is not available: {why} (`kun-tools doctor` shows its state)",
                    status.name
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;
    use kun_mcp::{DefinedBy, McpServerConfig};

    fn status(name: &str, state: ServerState) -> ServerStatus {
        ServerStatus {
            name: name.to_owned(),
            definition: McpServerConfig::stdio(name, "x").definition_id(),
            defined_by: DefinedBy::User,
            provider_id: format!("mcp:{name}"),
            transport: "stdio",
            target: "x".to_owned(),
            state,
            pid: None,
            server_info: None,
            reconnects: 0,
        }
    }

    #[test]
    fn each_failing_server_is_reported_once() {
        let mut reported = BTreeSet::new();
        let failing = ServerState::Reconnecting {
            next_attempt: 1,
            max_attempts: 5,
            last_error: "cannot start `nope`".to_owned(),
        };
        let first = [
            status("ok", ServerState::Connected { tool_count: 1 }),
            status("slow", ServerState::Starting),
            status("broken", failing),
        ];
        let lines = first_failures(&first, &mut reported);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("`broken`") && lines[0].contains("cannot start `nope`"));
        let later = [status(
            "broken",
            ServerState::Failed {
                reason: "still broken".to_owned(),
            },
        )];
        assert!(first_failures(&later, &mut reported).is_empty());
        let gave_up = [status(
            "slow",
            ServerState::Failed {
                reason: "timed out".to_owned(),
            },
        )];
        assert_eq!(first_failures(&gave_up, &mut reported).len(), 1);
    }
}
