//! Each server's state, for the provider policy and for `kun-tools doctor`.
//!
//! | state | provider policy |
//! |---|---|
//! | `disabled` | disabled (`enabled = false` in the configuration) |
//! | `idle` | unavailable: not started (the command did not need it yet) |
//! | `starting` | unavailable: starting |
//! | `connected` | ready |
//! | `reconnecting` | unavailable: why the last attempt failed, and which attempt is next |
//! | `failed` | unavailable: gave up, and why |
//! | `stopped` | unavailable: shut down |

use crate::trust::{DefinedBy, DefinitionId};
use kun_ports::ProviderPolicy;
use serde::Serialize;

/// Where a server's connection stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    /// Turned off in the configuration; never started.
    Disabled,
    /// Not started: not visible or not trusted in the workspace the manager was started for
    /// (a server defined by a cloned repository never runs on its own say-so).
    Refused {
        /// Why, and what to configure to use it.
        reason: String,
    },
    /// May start, but nothing asked for it yet (a manager built with
    /// [`idle`](crate::McpManagerBuilder::idle) starts a server on first use).
    Idle,
    /// The first connection attempt is running.
    Starting,
    /// Connected; its tools are listed.
    Connected {
        /// Tools it listed.
        tool_count: usize,
    },
    /// The connection failed or was lost; another attempt is scheduled.
    Reconnecting {
        /// The attempt that comes next (1-based).
        next_attempt: u32,
        /// How many attempts are allowed in a row.
        max_attempts: u32,
        /// Why the last attempt failed or the connection ended.
        last_error: String,
    },
    /// Gave up after too many failed attempts.
    Failed {
        /// Why.
        reason: String,
    },
    /// The manager was shut down.
    Stopped,
}

impl ServerState {
    /// The provider policy this state implies (see the module table).
    #[must_use]
    pub fn policy(&self) -> ProviderPolicy {
        match self {
            Self::Disabled => ProviderPolicy::disabled(
                "turned off in the configuration (enabled = false); set enabled = true to use it",
            ),
            Self::Refused { reason } => {
                ProviderPolicy::unavailable(format!("not started: {reason}"))
            }
            Self::Idle => ProviderPolicy::unavailable(
                "the server has not been started; it starts when one of its tools is called",
            ),
            Self::Starting => ProviderPolicy::unavailable("the server is starting"),
            Self::Connected { .. } => ProviderPolicy::ready(),
            Self::Reconnecting {
                next_attempt,
                max_attempts,
                last_error,
            } => ProviderPolicy::unavailable(format!(
                "{last_error}; retrying (attempt {next_attempt} of {max_attempts})"
            )),
            Self::Failed { reason } => ProviderPolicy::unavailable(format!(
                "{reason}; gave up reconnecting. Fix the server or its configuration and restart"
            )),
            Self::Stopped => ProviderPolicy::unavailable("the MCP manager was shut down"),
        }
    }

    /// Whether the server is connected.
    #[must_use]
    pub const fn is_connected(&self) -> bool {
        matches!(self, Self::Connected { .. })
    }
}

/// One server as diagnostics show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerStatus {
    /// The configured name.
    pub name: String,
    /// The id of its exact definition, `<name>:<hash>` (what `[trust] mcp_servers` pins).
    pub definition: DefinitionId,
    /// Who wrote the definition.
    pub defined_by: DefinedBy,
    /// `mcp:<name>`.
    pub provider_id: String,
    /// `stdio` or `streamable_http`.
    pub transport: &'static str,
    /// The command line or URL (never headers or environment values).
    pub target: String,
    /// The connection state.
    #[serde(flatten)]
    pub state: ServerState,
    /// The child's process id while a stdio server runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// `name version` the server reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_info: Option<String>,
    /// How many times it was reconnected after a connection was lost.
    pub reconnects: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_and_broken_are_different() {
        let off = ServerState::Disabled.policy();
        assert!(!off.enabled && off.available);
        let broken = ServerState::Reconnecting {
            next_attempt: 2,
            max_attempts: 5,
            last_error: "cannot start `nope`".into(),
        }
        .policy();
        assert!(broken.enabled && !broken.available);
        let reason = broken.reason.unwrap();
        assert!(
            reason.contains("cannot start `nope`") && reason.contains("attempt 2 of 5"),
            "{reason}"
        );
        assert!(
            ServerState::Connected { tool_count: 3 }
                .policy()
                .is_usable()
        );
    }

    #[test]
    fn status_serialises_flat() {
        let status = ServerStatus {
            name: "time".into(),
            definition: crate::McpServerConfig::stdio("time", "t").definition_id(),
            defined_by: DefinedBy::User,
            provider_id: "mcp:time".into(),
            transport: "stdio",
            target: "mcp-server-time".into(),
            state: ServerState::Connected { tool_count: 2 },
            pid: Some(42),
            server_info: None,
            reconnects: 0,
        };
        let json = serde_json::to_value(status).unwrap();
        assert_eq!(json["state"], "connected");
        assert_eq!(json["tool_count"], 2);
        assert_eq!(json["pid"], 42);
    }
}
