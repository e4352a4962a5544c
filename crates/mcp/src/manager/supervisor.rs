//! One task per enabled server: connect, list tools, watch the connection, and reconnect with
//! exponential backoff when it fails or ends.
//!
//! ```text
//! starting ──connect ok──▶ connected ──server exits──▶ reconnecting ──ok──▶ connected
//!    │                        │  ▲ tools/list_changed,                │
//!    └──connect fails──▶ reconnecting ◀──────── fails ───────────────┘
//!                             │ max_attempts failures in a row
//!                             ▼
//!                           failed
//! ```
//!
//! On shutdown the connection is cancelled (stdin closed, then SIGTERM, then SIGKILL by
//! rmcp) and the child's process group is killed.

use super::state::{ServerSlot, Shared};
use crate::connection::{self, Connected, StderrTail, with_stderr};
use crate::status::ServerState;
use rmcp::service::QuitReason;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a cancelled connection may take to close before the group is killed anyway.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(8);

/// How a connection ended.
enum Ended {
    /// The server went away (or the transport failed).
    Lost(String),
    /// The manager is shutting down.
    Shutdown,
}

/// Runs the server's connection until shutdown. The state leaves `starting` after the first
/// attempt, whatever its outcome.
pub(crate) async fn supervise(
    shared: Arc<Shared>,
    slot: Arc<ServerSlot>,
    shutdown: CancellationToken,
) {
    let policy = slot.config.reconnect;
    let mut failures: u32 = 0;
    let mut ever_connected = false;
    loop {
        let stderr = StderrTail::default();
        let attempt = tokio::select! {
            attempt = connection::connect(&slot.config, &stderr) => attempt,
            () = shutdown.cancelled() => break,
        };
        let error = match attempt {
            Ok(connected) => {
                match serve(&shared, &slot, connected, &shutdown, ever_connected).await {
                    Ended::Shutdown => break,
                    Ended::Lost(reason) => {
                        // `serve` dropped the connection's group guard: its group is killed.
                        ever_connected = true;
                        failures = 0;
                        with_stderr(reason, &stderr)
                    }
                }
            }
            Err(message) => message,
        };
        slot.link.set_down(error.clone());
        failures += 1;
        if failures > policy.max_attempts {
            let reason = format!("{error} ({failures} failed attempts in a row)");
            shared.set_state(&slot, ServerState::Failed { reason }, None);
            // Stay alive only to notice shutdown; nothing else to do.
            shutdown.cancelled().await;
            break;
        }
        shared.set_state(
            &slot,
            ServerState::Reconnecting {
                next_attempt: failures,
                max_attempts: policy.max_attempts,
                last_error: error,
            },
            None,
        );
        tokio::select! {
            () = tokio::time::sleep(policy.delay(failures)) => {}
            () = shutdown.cancelled() => break,
        }
    }
    slot.link.set_down("the MCP manager was shut down");
    shared.set_state(&slot, ServerState::Stopped, None);
}

/// Lists the tools, publishes, and watches the connection until it ends.
async fn serve(
    shared: &Shared,
    slot: &ServerSlot,
    connected: Connected,
    shutdown: &CancellationToken,
    reconnected: bool,
) -> Ended {
    let Connected {
        client,
        pid,
        group: _group,
        mut tools_changed,
        server_info,
    } = connected;
    let listing_timeout = slot.config.startup_timeout;
    let tools = match connection::list_tools(&client, listing_timeout).await {
        Ok(tools) => tools,
        Err(message) => {
            let mut client = client;
            let _ = client.close_with_timeout(CLOSE_TIMEOUT).await;
            return Ended::Lost(message);
        }
    };
    slot.link.set_up(client.peer().clone());
    {
        let mut status = slot.status();
        status.server_info = server_info;
        if reconnected {
            status.reconnects += 1;
        }
    }
    let tool_count = tools.len();
    shared.set_tools(slot, tools);
    shared.set_state(slot, ServerState::Connected { tool_count }, pid);

    let peer = client.peer().clone();
    let cancel = client.cancellation_token();
    let waiting = client.waiting();
    tokio::pin!(waiting);
    loop {
        tokio::select! {
            quit = &mut waiting => {
                let reason = match quit {
                    Ok(QuitReason::Closed) => "the server closed the connection".to_owned(),
                    Ok(QuitReason::Cancelled) => "the connection was cancelled".to_owned(),
                    Ok(QuitReason::JoinError(err)) | Err(err) => format!("the connection task failed: {err}"),
                    Ok(_) => "the connection ended".to_owned(),
                };
                return Ended::Lost(reason);
            }
            changed = tools_changed.recv() => {
                if changed.is_none() {
                    continue;
                }
                relist(shared, slot, &peer, pid).await;
            }
            () = slot.refresh.notified() => relist(shared, slot, &peer, pid).await,
            () = shutdown.cancelled() => {
                cancel.cancel();
                let _ = tokio::time::timeout(CLOSE_TIMEOUT, &mut waiting).await;
                // Returning drops the group guard, which kills what is left of the server.
                return Ended::Shutdown;
            }
        }
    }
}

/// Lists the tools again after `tools/list_changed` or a refresh request.
async fn relist(
    shared: &Shared,
    slot: &ServerSlot,
    peer: &rmcp::Peer<rmcp::RoleClient>,
    pid: Option<u32>,
) {
    let timeout = slot.config.startup_timeout;
    match tokio::time::timeout(timeout, peer.list_all_tools()).await {
        Ok(Ok(tools)) => {
            let tools: Vec<_> = tools
                .into_iter()
                .map(crate::remote::RemoteTool::from_rmcp)
                .collect();
            let tool_count = tools.len();
            shared.set_tools(slot, tools);
            shared.set_state(slot, ServerState::Connected { tool_count }, pid);
        }
        Ok(Err(err)) => {
            tracing::warn!(server = %slot.config.name, "tools/list after a change failed: {err}")
        }
        Err(_) => tracing::warn!(server = %slot.config.name, "tools/list after a change timed out"),
    }
}

/// Kills what is left of a stdio server's process group (the server was its leader).
pub(crate) fn kill_group(pid: Option<u32>) {
    if let Some(group) = pid.and_then(kun_ports::process::ProcessGroup::led_by) {
        group.kill();
    }
}
