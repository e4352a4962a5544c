//! [`McpManager`]: owns the connections (one supervisor task per server) and publishes the
//! MCP providers.

mod state;
mod supervisor;

pub use state::McpCatalog;

use crate::access::ServerAccess;
use crate::config::{ConfigError, McpServerConfig, SearchSettings};
use crate::link::ServerLink;
use crate::naming::{NameLimit, ToolAddress, server_slugs};
use crate::provider::McpProvider;
use crate::record::{SchemaSanitizer, identity_sanitizer};
use crate::status::{ServerState, ServerStatus};
use crate::trust::McpTrust;
use state::{ServerSlot, Shared};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Builds and starts an [`McpManager`].
#[must_use]
pub struct McpManagerBuilder {
    servers: Vec<McpServerConfig>,
    workspace: Option<std::path::PathBuf>,
    trust: McpTrust,
    search: SearchSettings,
    sanitizer: SchemaSanitizer,
    name_limit: NameLimit,
}

impl fmt::Debug for McpManagerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpManagerBuilder")
            .field("servers", &self.servers)
            .field("search", &self.search)
            .field("name_limit", &self.name_limit)
            .finish_non_exhaustive()
    }
}

impl McpManagerBuilder {
    /// Adds a server.
    pub fn server(mut self, config: McpServerConfig) -> Self {
        self.servers.push(config);
        self
    }

    /// Adds servers.
    pub fn servers(mut self, configs: impl IntoIterator<Item = McpServerConfig>) -> Self {
        self.servers.extend(configs);
        self
    }

    /// The workspace the servers serve. Servers not visible or not trusted there are not
    /// started at all (state `refused`): a workspace-scoped server is launched only where the
    /// user trusts it.
    pub fn workspace(mut self, root: impl Into<std::path::PathBuf>) -> Self {
        self.workspace = Some(root.into());
        self
    }

    /// The user's word on workspace definitions (default: untrusted workspace, no pins). A
    /// workspace definition nobody vouches for is never started (state `refused`), with or
    /// without [`workspace`](Self::workspace).
    pub fn trust(mut self, trust: McpTrust) -> Self {
        self.trust = trust;
        self
    }

    /// Sets the search mode and its knobs.
    pub const fn search(mut self, settings: SearchSettings) -> Self {
        self.search = settings;
        self
    }

    /// Keeps every catalog name within `limit` (64 by default; `kun-tools serve` uses 54 so
    /// that clients adding `mcp__<server>__` stay within what model APIs accept).
    pub const fn name_limit(mut self, limit: NameLimit) -> Self {
        self.name_limit = limit;
        self
    }

    /// Sanitises every tool's input schema with `sanitizer` (identity by default; pass
    /// `kun_builtin_tools::sanitize_schema` so MCP and built-in schemas match).
    pub fn sanitizer(mut self, sanitizer: SchemaSanitizer) -> Self {
        self.sanitizer = sanitizer;
        self
    }

    /// Validates every server, starts the enabled ones, and returns once each has connected
    /// or failed its first attempt (each within its start-up timeout). Servers that fail keep
    /// retrying in the background; their providers say why they are unavailable.
    ///
    /// # Errors
    /// A server configuration that cannot work, or two servers with the same name. Nothing is
    /// started then.
    pub async fn start(self) -> Result<McpManager, ConfigError> {
        let mut seen = BTreeSet::new();
        for config in &self.servers {
            config.validate()?;
            if !seen.insert(config.name.as_str()) {
                return Err(ConfigError {
                    server: config.name.clone(),
                    field: "name",
                    message: "two MCP servers have this name; give each server a unique name"
                        .to_owned(),
                });
            }
        }
        let slugs = server_slugs(
            self.servers.iter().map(|c| c.name.as_str()),
            self.name_limit,
        );
        let slots: Vec<Arc<ServerSlot>> = self
            .servers
            .into_iter()
            .map(|config| {
                let access = ServerAccess::new(&config, &self.trust);
                let root = self.workspace.as_deref();
                let denied = match root {
                    Some(root) => access.check(Some(root)).err(),
                    None => access
                        .is_unvouched()
                        .then_some(crate::access::AccessDenied::Unvouched),
                };
                let refused = denied.map(|denied| access.explain(denied, &config.name, root));
                let state = match (&refused, config.enabled) {
                    (Some(reason), true) => ServerState::Refused {
                        reason: reason.clone(),
                    },
                    (None, true) => ServerState::Starting,
                    (_, false) => ServerState::Disabled,
                };
                let status = ServerStatus {
                    name: config.name.clone(),
                    definition: access.definition().clone(),
                    defined_by: config.defined_by,
                    provider_id: config.provider_id(),
                    transport: config.transport.kind(),
                    target: config.transport.describe(),
                    state,
                    pid: None,
                    server_info: None,
                    reconnects: 0,
                };
                let link = ServerLink::new(&config.name, config.call_timeout);
                if !config.enabled {
                    link.set_down("the server is turned off in the configuration");
                } else if let Some(reason) = &refused {
                    link.set_down(reason);
                }
                Arc::new(ServerSlot {
                    slug: slugs.get(&config.name).cloned().unwrap_or_default(),
                    access: Arc::new(access),
                    link: Arc::new(link),
                    status: Arc::new(Mutex::new(status)),
                    refresh: Notify::new(),
                    config,
                })
            })
            .collect();
        let shared = Shared::new(self.search, self.sanitizer, self.name_limit, slots);
        let shutdown = CancellationToken::new();
        let mut tasks = Vec::new();
        let mut readiness = Vec::new();
        for slot in shared
            .servers
            .iter()
            .filter(|s| s.status().state == ServerState::Starting)
        {
            let (tx, rx) = oneshot::channel();
            readiness.push(rx);
            tasks.push(tokio::spawn(supervisor::supervise(
                Arc::clone(&shared),
                Arc::clone(slot),
                shutdown.clone(),
                tx,
            )));
        }
        for rx in readiness {
            // A supervisor that ended without firing has already published its state.
            let _ = rx.await;
        }
        Ok(McpManager {
            shared,
            shutdown,
            tasks: Mutex::new(tasks),
        })
    }
}

/// Owns the MCP connections and publishes the providers.
///
/// The manager starts one supervisor per enabled server (see `supervisor.rs`) and keeps a
/// current [`McpCatalog`]: one provider per configured server, in configuration order, plus
/// the search gateway `mcp:search`. Provider ids never change while the manager lives, and
/// names from different servers never collide (see [`naming`](crate::naming)), so the
/// assembly root keeps both registries current with `replace_provider` per published
/// provider — a reconnected server replaces its old provider instead of registering twice:
///
/// ```no_run
/// # async fn wire(main: impl Fn(std::sync::Arc<kun_mcp::McpProvider>), child: impl Fn(std::sync::Arc<kun_mcp::McpProvider>)) -> Result<(), kun_mcp::ConfigError> {
/// use kun_mcp::{McpManager, McpServerConfig};
/// let manager = McpManager::builder()
///     .server(McpServerConfig::stdio("time", "mcp-server-time"))
///     .start()
///     .await?;
/// let mut changes = manager.changes();
/// loop {
///     // Clone out of the channel: never hold its lock while registering.
///     let providers = changes.borrow_and_update().providers.clone();
///     for provider in &providers {
///         main(provider.clone());   // e.g. registry.replace_provider(provider.clone())
///         child(provider.clone());  // the child registry too: McpProvider is Delegable
///     }
///     if changes.changed().await.is_err() {
///         break; // the manager was dropped
///     }
/// }
/// # Ok(()) }
/// ```
///
/// Dropping the manager stops every supervisor and kills every stdio server's process group;
/// [`McpManager::shutdown`] does the same and waits for the servers to close cleanly.
pub struct McpManager {
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl fmt::Debug for McpManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpManager")
            .field("servers", &self.statuses())
            .finish_non_exhaustive()
    }
}

impl McpManager {
    /// Starts a builder: no servers, default search settings, identity sanitiser.
    pub fn builder() -> McpManagerBuilder {
        McpManagerBuilder {
            servers: Vec::new(),
            workspace: None,
            trust: McpTrust::default(),
            search: SearchSettings::default(),
            sanitizer: identity_sanitizer(),
            name_limit: NameLimit::default(),
        }
    }

    /// The current catalog.
    #[must_use]
    pub fn catalog(&self) -> Arc<McpCatalog> {
        self.shared.current()
    }

    /// The current providers: one per configured server (configuration order), then
    /// `mcp:search`.
    #[must_use]
    pub fn providers(&self) -> Vec<Arc<McpProvider>> {
        self.catalog().providers.clone()
    }

    /// A receiver that sees every new catalog (state changes, new tools, reconnects).
    #[must_use]
    pub fn changes(&self) -> watch::Receiver<Arc<McpCatalog>> {
        self.shared.subscribe()
    }

    /// Each server's state, in configuration order, for diagnostics.
    #[must_use]
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.shared
            .servers
            .iter()
            .map(|slot| slot.status().clone())
            .collect()
    }

    /// Where a catalog name routes (exact match only).
    #[must_use]
    pub fn resolve(&self, name: &str) -> Option<ToolAddress> {
        self.catalog().names.resolve(name).cloned()
    }

    /// Asks a connected server to list its tools again (as if it had sent
    /// `tools/list_changed`). Returns `false` for an unknown server name.
    pub fn refresh(&self, server: &str) -> bool {
        match self.shared.servers.iter().find(|s| s.config.name == server) {
            Some(slot) => {
                slot.refresh.notify_one();
                true
            }
            None => false,
        }
    }

    /// Stops every supervisor and waits until each server is closed.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        let tasks = std::mem::take(
            &mut *self
                .tasks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for task in tasks {
            let _ = task.await;
        }
    }
}

impl Drop for McpManager {
    fn drop(&mut self) {
        self.shutdown.cancel();
        for slot in &self.shared.servers {
            supervisor::kill_group(slot.status().pid);
        }
    }
}
