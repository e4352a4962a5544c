//! The providers the manager publishes: one per configured server (`mcp:<server>`) and the
//! search gateway (`mcp:search`).
//!
//! A provider's tool list is fixed when it is built: a server whose tools change gets a new
//! provider, published through [`McpManager::changes`](crate::McpManager::changes), which the
//! assembly root re-registers (`replace_provider`, in the main and the child registry). A
//! turn keeps the registry snapshot it started with, so a refresh during a turn is visible
//! from the next turn on. The policy, in contrast, is read live: a server that dies becomes
//! unavailable at once.

use crate::status::ServerStatus;
use kun_ports::{Delegable, ProviderKind, ProviderPolicy, Tool, ToolProvider};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

/// The provider id of the search gateway.
pub const GATEWAY_PROVIDER_ID: &str = "mcp:search";

/// What a provider stands for.
#[derive(Clone)]
pub(crate) enum Role {
    /// One server; its policy follows the server's state.
    Server(Arc<Mutex<ServerStatus>>),
    /// The search gateway; usable while search mode is on.
    Gateway(GatewayMode),
}

/// Whether the gateway's tools are in the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GatewayMode {
    /// Search mode is on: `mcp_search`, `mcp_describe`, `mcp_call`.
    Active,
    /// Direct mode: the gateway is off (and has no tools).
    Off,
}

/// An MCP provider: a server's tools, or the search gateway. Implements [`Delegable`]: MCP
/// tools may reach a child agent (its lists may still narrow them, e.g. `mcp:<server>` in the
/// blocked providers).
pub struct McpProvider {
    id: String,
    role: Role,
    tools: Vec<Arc<dyn Tool>>,
}

impl fmt::Debug for McpProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpProvider")
            .field("id", &self.id)
            .field("tools", &self.tools.len())
            .field("policy", &self.policy())
            .finish()
    }
}

impl McpProvider {
    pub(crate) fn server(
        id: String,
        status: Arc<Mutex<ServerStatus>>,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Self {
        Self {
            id,
            role: Role::Server(status),
            tools,
        }
    }

    pub(crate) fn gateway(mode: GatewayMode, tools: Vec<Arc<dyn Tool>>) -> Self {
        Self {
            id: GATEWAY_PROVIDER_ID.to_owned(),
            role: Role::Gateway(mode),
            tools,
        }
    }

    /// Whether this is the search gateway.
    #[must_use]
    pub const fn is_gateway(&self) -> bool {
        matches!(self.role, Role::Gateway(_))
    }

    /// The names of its tools, in order.
    #[must_use]
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.spec().name.clone()).collect()
    }
}

impl ToolProvider for McpProvider {
    fn id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Mcp
    }

    fn policy(&self) -> ProviderPolicy {
        match &self.role {
            Role::Server(status) => status
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .state
                .policy(),
            Role::Gateway(GatewayMode::Active) => ProviderPolicy::ready(),
            Role::Gateway(GatewayMode::Off) => ProviderPolicy::disabled(
                "MCP search mode is off: MCP tools are listed directly (mode = \"direct\", or \"auto\" below its threshold)",
            ),
        }
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}

impl Delegable for McpProvider {}
