//! MCP servers from the configuration: `[mcp_servers.NAME]` tables and `.mcp.json` entries
//! become `kun-mcp` server configurations, the manager starts them, and a follower task keeps
//! their providers registered in both the main and the child registry (replacing by id, so a
//! reconnected server is never registered twice). The child registry takes them as
//! `McpProvider`s, which implement `Delegable`: there is no type-erased way in.
//!
//! Nothing here waits on a server unless asked: [`start_mcp`] returns at once, with the
//! servers connecting in the background ([`McpLaunch::Background`], what `serve` and
//! `catalog` use) or waiting for [`McpAttachment::launch`] ([`McpLaunch::OnDemand`], what
//! `call` uses: a call starts only the server that owns its tool). Each server's tools are
//! registered when they arrive. [`McpAttachment::wait_started`] waits, with a bound.

use crate::config::{ConfigError, McpServerEntry, Settings};
use crate::{Assembly, ChildRegistry};
use kun_mcp::naming::NameLimit;
use kun_mcp::{
    McpCatalog, McpManager, McpServerConfig, SearchMode, SearchSettings, ServerState,
    TransportConfig,
};
use kun_ports::ToolProvider;
use kun_registry::CapabilityRegistry;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Running MCP servers attached to an assembly. Dropping it stops following changes; call
/// [`McpAttachment::shutdown`] to stop the servers gracefully.
pub struct McpAttachment {
    /// The servers.
    pub manager: McpManager,
    /// What the manager was built from: a reload that changes it needs a new manager.
    setup: McpSetup,
    registries: Registries,
    /// Each catalog once its providers are registered.
    registered: Arc<watch::Sender<Arc<McpCatalog>>>,
    _follower: Follower,
}

impl std::fmt::Debug for McpAttachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpAttachment")
            .field("manager", &self.manager)
            .field("setup", &self.setup)
            .finish_non_exhaustive()
    }
}

/// When the configured servers start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpLaunch {
    /// All of them, now, in the background.
    Background,
    /// None until [`McpAttachment::launch`] names them.
    OnDemand,
}

/// Everything a manager is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct McpSetup {
    servers: Vec<McpServerConfig>,
    search: SearchSettings,
    name_limit: NameLimit,
    workspace: PathBuf,
    trust: kun_mcp::McpTrust,
}

impl McpSetup {
    fn of(settings: &Settings) -> Result<Self, ConfigError> {
        Ok(Self {
            servers: server_configs(settings)?,
            search: search_settings(settings)?,
            name_limit: mcp_name_limit(settings)?,
            workspace: settings.workspace.clone(),
            trust: settings.mcp_trust(),
        })
    }
}

/// The task that re-registers providers; aborted when dropped.
#[derive(Debug)]
struct Follower(JoinHandle<()>);

impl Drop for Follower {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl McpAttachment {
    /// Moves the servers' providers to another assembly (after a configuration reload built
    /// new registries): registers them there now and follows changes into those registries
    /// from then on. Must run inside a tokio runtime.
    pub fn retarget(&mut self, assembly: &Assembly) {
        self.registries = Registries::of(assembly);
        self._follower = follow(
            &self.manager,
            self.registries.clone(),
            Arc::clone(&self.registered),
        );
    }

    /// Each server's state, for diagnostics.
    #[must_use]
    pub fn statuses(&self) -> Vec<kun_mcp::ServerStatus> {
        self.manager.statuses()
    }

    /// The servers that may run but are not connected (idle, starting, reconnecting, failed
    /// or stopped), with their states: what `catalog` and `doctor` report as not ready.
    #[must_use]
    pub fn not_ready(&self) -> Vec<kun_mcp::ServerStatus> {
        self.manager
            .statuses()
            .into_iter()
            .filter(|status| {
                !matches!(
                    status.state,
                    ServerState::Connected { .. }
                        | ServerState::Disabled
                        | ServerState::Refused { .. }
                )
            })
            .collect()
    }

    /// Waits until every launched server has connected or failed its first attempt, for at
    /// most `within` (`None`: each attempt's own start-up timeout). Returns whether they all
    /// got there; the providers are registered by then.
    pub async fn wait_started(&self, within: Option<Duration>) -> bool {
        let settled = self.manager.wait_started(within).await;
        // The follower registers each catalog; make sure the last one is in before returning.
        let catalog = self.manager.catalog();
        register_all(&self.registries, &catalog);
        self.registered.send_replace(catalog);
        settled
    }

    /// Follows the catalogs whose providers are in the registries (each server's tools and
    /// state included): a change here is a change of the assembly's catalog. Ends (`changed`
    /// fails) when the attachment is dropped.
    #[must_use]
    pub fn registered(&self) -> watch::Receiver<Arc<McpCatalog>> {
        self.registered.subscribe()
    }

    /// Starts the named servers (those still idle; others are ignored), in the background.
    pub fn launch<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        self.manager.launch(names);
    }

    /// Starts every server still idle, in the background.
    pub fn launch_all(&self) {
        self.manager.launch_all();
    }

    /// Whether `settings` configure exactly the servers (and search, name limit, workspace
    /// and trust) this attachment runs; a configuration that does not load says `false`.
    #[must_use]
    pub fn runs(&self, settings: &Settings) -> bool {
        McpSetup::of(settings).is_ok_and(|setup| setup == self.setup)
    }

    /// Stops following and shuts every server down (their process groups are killed).
    pub async fn shutdown(self) {
        drop(self._follower);
        self.manager.shutdown().await;
    }
}

fn config_error(settings: &Settings, key: String, message: String) -> ConfigError {
    let source = settings.source_of(&key);
    let file = match source {
        crate::Source::User(p)
        | crate::Source::Workspace(p)
        | crate::Source::ConfigFlag(p)
        | crate::Source::McpJson(p) => p,
        crate::Source::Default | crate::Source::CommandLine => PathBuf::from("command line"),
    };
    ConfigError {
        file,
        line: None,
        key: Some(key),
        message,
    }
}

fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// One configured server as a `kun-mcp` configuration; `defined_by` follows the layer it came
/// from, and kun-mcp decides from it whether the server may start.
///
/// # Errors
/// A server with neither `command` nor `url`, or with both.
pub fn server_config(
    settings: &Settings,
    name: &str,
    entry: &McpServerEntry,
) -> Result<McpServerConfig, ConfigError> {
    let key = format!("mcp_servers.{name}");
    let transport = match (&entry.command, &entry.url) {
        (Some(command), None) => TransportConfig::Stdio {
            command: command.clone(),
            args: entry.args.clone(),
            env: entry.env.clone(),
            cwd: entry
                .cwd
                .as_ref()
                .map(|cwd| absolute(&settings.workspace, cwd)),
        },
        (None, Some(url)) => TransportConfig::StreamableHttp {
            url: url.clone(),
            headers: entry.headers.clone(),
        },
        (Some(_), Some(_)) => {
            return Err(config_error(
                settings,
                key,
                "has both `command` and `url`; keep one transport".to_owned(),
            ));
        }
        (None, None) => {
            return Err(config_error(
                settings,
                key,
                "needs `command` (stdio) or `url` (streamable HTTP)".to_owned(),
            ));
        }
    };
    let mut config = McpServerConfig::with_transport(name, transport);
    config.enabled = entry.enabled.unwrap_or(true);
    config.default_cwd = Some(settings.workspace.clone());
    config.defined_by = settings.defined_by(name);
    config.trust_scope = entry.trust_scope;
    config.trusted_workspace_roots = entry
        .trusted_workspace_roots
        .iter()
        .map(|root| absolute(&settings.workspace, root))
        .collect();
    config.workspace_roots = entry
        .workspace_roots
        .iter()
        .map(|root| absolute(&settings.workspace, root))
        .collect();
    if let Some(seconds) = entry.startup_timeout_seconds {
        config.startup_timeout = Duration::from_secs(u64::from(seconds.max(1)));
    }
    if let Some(seconds) = entry.call_timeout_seconds {
        config.call_timeout = Duration::from_secs(u64::from(seconds.max(1)));
    }
    config
        .validate()
        .map_err(|err| config_error(settings, format!("mcp_servers.{name}"), err.to_string()))?;
    Ok(config)
}

/// `[mcp]` as search settings.
///
/// # Errors
/// An unknown search mode.
pub fn search_settings(settings: &Settings) -> Result<SearchSettings, ConfigError> {
    let mut search = SearchSettings::default();
    if let Some(mode) = &settings.mcp.search {
        search.mode = mode
            .parse::<SearchMode>()
            .map_err(|message| config_error(settings, "mcp.search".to_owned(), message))?;
    }
    if let Some(threshold) = settings.mcp.search_threshold {
        search.threshold = threshold as usize;
    }
    if let Some(top_k) = settings.mcp.top_k {
        search.top_k = (top_k as usize).clamp(1, search.top_k_max);
    }
    Ok(search)
}

/// The cap on MCP tool names: `[serve] max_tool_name_length` (54 unless configured: Claude
/// Code and Codex name a tool `mcp__<server>__<tool>`, model APIs stop at 64, and `kun`
/// takes 10). Every front end (`serve`, `catalog`, `call`, `doctor`) names MCP tools the same
/// way, so a name `serve` advertises is the name `call` accepts.
///
/// # Errors
/// A length outside 24..=64 (the configuration layer refuses those already).
pub fn mcp_name_limit(settings: &Settings) -> Result<NameLimit, ConfigError> {
    let length = usize::try_from(settings.serve.max_tool_name_length).unwrap_or(usize::MAX);
    NameLimit::new(length).map_err(|err| {
        config_error(
            settings,
            "serve.max_tool_name_length".to_owned(),
            err.to_string(),
        )
    })
}

/// Every configured server, in name order.
///
/// # Errors
/// The first unusable entry.
pub fn server_configs(settings: &Settings) -> Result<Vec<McpServerConfig>, ConfigError> {
    settings
        .mcp_servers
        .iter()
        .map(|(name, entry)| server_config(settings, name, entry))
        .collect()
}

/// The two registries MCP providers go into.
#[derive(Clone)]
struct Registries {
    main: Arc<CapabilityRegistry>,
    child: ChildRegistry,
}

impl Registries {
    fn of(assembly: &Assembly) -> Self {
        Self {
            main: Arc::clone(&assembly.registry),
            child: assembly.child_registry.clone(),
        }
    }
}

fn register_all(registries: &Registries, catalog: &McpCatalog) {
    for provider in &catalog.providers {
        let main = registries
            .main
            .replace_provider(Arc::clone(provider) as Arc<dyn ToolProvider>);
        // `McpProvider` is `Delegable`: the child registry takes it as its own type.
        let child = registries.child.replace_provider(Arc::clone(provider));
        for err in [main.err(), child.err()].into_iter().flatten() {
            tracing::warn!(
                provider = provider.id(),
                "cannot register MCP provider: {err}"
            );
        }
    }
}

/// Registers the current providers now, then again on every catalog change (replacing by
/// id, so a reconnected server is never registered twice), and announces each registered
/// catalog on `registered`.
fn follow(
    manager: &McpManager,
    registries: Registries,
    registered: Arc<watch::Sender<Arc<McpCatalog>>>,
) -> Follower {
    let mut changes = manager.changes();
    let catalog = changes.borrow_and_update().clone();
    register_all(&registries, &catalog);
    registered.send_replace(catalog);
    Follower(tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            let catalog = changes.borrow_and_update().clone();
            register_all(&registries, &catalog);
            registered.send_replace(catalog);
        }
    }))
}

/// Attaches the configured MCP servers (none configured: `Ok(None)`) and keeps their
/// providers registered in the assembly's main and child registries as their tools arrive.
/// Returns at once: with [`McpLaunch::Background`] every server that may start is starting,
/// with [`McpLaunch::OnDemand`] none is. Trust and visibility are decided here either way: a
/// refused server never starts. Must run inside a tokio runtime.
///
/// # Errors
/// A configuration that cannot work; nothing is started then.
pub fn start_mcp(
    assembly: &Assembly,
    launch: McpLaunch,
) -> Result<Option<McpAttachment>, ConfigError> {
    let settings = &assembly.settings;
    if settings.mcp_servers.is_empty() {
        return Ok(None);
    }
    let setup = McpSetup::of(settings)?;
    let manager = McpManager::builder()
        .servers(setup.servers.clone())
        .search(setup.search)
        .name_limit(setup.name_limit)
        .workspace(setup.workspace.clone())
        .trust(setup.trust.clone())
        .sanitizer(Arc::new(kun_builtin_tools::sanitize_schema))
        .idle()
        .map_err(|err| config_error(settings, "mcp_servers".to_owned(), err.to_string()))?;
    let registries = Registries::of(assembly);
    let registered = Arc::new(watch::Sender::new(manager.catalog()));
    let follower = follow(&manager, registries.clone(), Arc::clone(&registered));
    if launch == McpLaunch::Background {
        manager.launch_all();
    }
    Ok(Some(McpAttachment {
        manager,
        setup,
        registries,
        registered,
        _follower: follower,
    }))
}

/// Starts the configured MCP servers (none configured: `Ok(None)`) and keeps their providers
/// registered in the assembly's main and child registries. Returns once every enabled server
/// has connected or failed its first attempt: [`start_mcp`] with
/// [`McpLaunch::Background`], then [`McpAttachment::wait_started`] without a bound.
///
/// # Errors
/// A configuration that cannot work; nothing is started then.
pub async fn attach_mcp(assembly: &Assembly) -> Result<Option<McpAttachment>, ConfigError> {
    let attachment = start_mcp(assembly, McpLaunch::Background)?;
    if let Some(attachment) = &attachment {
        attachment.wait_started(None).await;
    }
    Ok(attachment)
}
