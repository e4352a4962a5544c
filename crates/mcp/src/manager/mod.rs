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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, watch};
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
        let manager = self.spawn()?;
        manager.wait_started(None).await;
        Ok(manager)
    }

    /// Validates every server and starts the enabled ones in the background: returns at once,
    /// with every server that may start in state `starting`. Their tools arrive with later
    /// catalogs ([`McpManager::changes`]); [`McpManager::wait_started`] waits for them. Must
    /// run inside a tokio runtime.
    ///
    /// # Errors
    /// As [`start`](Self::start).
    pub fn spawn(self) -> Result<McpManager, ConfigError> {
        let manager = self.idle()?;
        manager.launch_all();
        Ok(manager)
    }

    /// Validates every server and starts none: every server that may start waits in state
    /// `idle` until [`McpManager::launch`] (or [`McpManager::launch_all`]) names it. Trust and
    /// visibility are decided here, as with [`start`](Self::start): a refused server never
    /// launches. Must run inside a tokio runtime.
    ///
    /// # Errors
    /// As [`start`](Self::start).
    pub fn idle(self) -> Result<McpManager, ConfigError> {
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
                    (None, true) => ServerState::Idle,
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
                } else {
                    link.set_down("the server has not been started");
                }
                Arc::new(ServerSlot {
                    slug: slugs.get(&config.name).cloned().unwrap_or_default(),
                    access: Arc::new(access),
                    link: Arc::new(link),
                    status: Arc::new(Mutex::new(status)),
                    refresh: Notify::new(),
                    launched: AtomicBool::new(false),
                    config,
                })
            })
            .collect();
        Ok(McpManager {
            shared: Shared::new(self.search, self.sanitizer, self.name_limit, slots),
            shutdown: CancellationToken::new(),
            tasks: Mutex::new(Vec::new()),
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

    /// Starts every server still `idle` (each once; refused and disabled servers never
    /// start). Returns at once; the servers connect in the background.
    pub fn launch_all(&self) {
        for slot in &self.shared.servers {
            self.launch_slot(slot);
        }
    }

    /// Starts the named servers that are still `idle`; other names are ignored. Returns at
    /// once.
    pub fn launch<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        for name in names {
            if let Some(slot) = self.shared.servers.iter().find(|s| s.config.name == name) {
                self.launch_slot(slot);
            }
        }
    }

    fn launch_slot(&self, slot: &Arc<ServerSlot>) {
        if slot.status().state != ServerState::Idle || slot.launched.swap(true, Ordering::AcqRel) {
            return;
        }
        self.shared.set_state(slot, ServerState::Starting, None);
        let task = tokio::spawn(supervisor::supervise(
            Arc::clone(&self.shared),
            Arc::clone(slot),
            self.shutdown.clone(),
        ));
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(task);
    }

    /// Waits until no server is `starting` (each launched server has connected or failed its
    /// first attempt), for at most `within` (`None`: as long as that takes — each attempt is
    /// bounded by its server's start-up timeout). Returns whether they all got there.
    pub async fn wait_started(&self, within: Option<Duration>) -> bool {
        // Subscribe before looking, so a change between the look and the wait is not missed.
        let mut changes = self.shared.subscribe();
        let settled = async {
            while self
                .statuses()
                .iter()
                .any(|s| s.state == ServerState::Starting)
            {
                if changes.changed().await.is_err() {
                    break;
                }
            }
        };
        match within {
            Some(limit) => tokio::time::timeout(limit, settled).await.is_ok(),
            None => {
                settled.await;
                true
            }
        }
    }

    /// The configured server whose tools `name` would be (`mcp_<slug>_…`), whether or not
    /// the server is running or lists such a tool. Server slugs are prefix-free (see
    /// [`naming`](crate::naming)), so at most one server owns a name; the search gateway's
    /// own tools (`mcp_search`, `mcp_describe`, `mcp_call`) belong to none.
    #[must_use]
    pub fn owner_of(&self, name: &str) -> Option<&str> {
        self.shared
            .servers
            .iter()
            .find(|slot| {
                name.strip_prefix("mcp_")
                    .and_then(|rest| rest.strip_prefix(slot.slug.as_str()))
                    .is_some_and(|rest| rest.starts_with('_'))
            })
            .map(|slot| slot.config.name.as_str())
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

#[cfg(test)]
mod tests;
