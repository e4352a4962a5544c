//! MCP servers from the configuration: `[mcp_servers.NAME]` tables and `.mcp.json` entries
//! become `kun-mcp` server configurations, the manager starts them, and a follower task keeps
//! their providers registered in both the main and the child registry (replacing by id, so a
//! reconnected server is never registered twice). The child registry takes them as
//! `McpProvider`s, which implement `Delegable`: there is no type-erased way in.

use crate::config::{ConfigError, McpServerEntry, Settings};
use crate::{Assembly, ChildRegistry};
use kun_mcp::naming::NameLimit;
use kun_mcp::{
    McpCatalog, McpManager, McpServerConfig, SearchMode, SearchSettings, TransportConfig,
};
use kun_ports::ToolProvider;
use kun_registry::CapabilityRegistry;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Running MCP servers attached to an assembly. Dropping it stops following changes; call
/// [`McpAttachment::shutdown`] to stop the servers gracefully.
#[derive(Debug)]
pub struct McpAttachment {
    /// The servers.
    pub manager: McpManager,
    _follower: Follower,
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
        self._follower = follow(&self.manager, Registries::of(assembly));
    }

    /// Each server's state, for diagnostics.
    #[must_use]
    pub fn statuses(&self) -> Vec<kun_mcp::ServerStatus> {
        self.manager.statuses()
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
/// id, so a reconnected server is never registered twice).
fn follow(manager: &McpManager, registries: Registries) -> Follower {
    register_all(&registries, &manager.catalog());
    let mut changes = manager.changes();
    Follower(tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            let catalog = changes.borrow_and_update().clone();
            register_all(&registries, &catalog);
        }
    }))
}

/// Starts the configured MCP servers (none configured: `Ok(None)`) and keeps their providers
/// registered in the assembly's main and child registries. Returns once every enabled server
/// has connected or failed its first attempt.
///
/// # Errors
/// A configuration that cannot work; nothing is started then.
pub async fn attach_mcp(assembly: &Assembly) -> Result<Option<McpAttachment>, ConfigError> {
    let settings = &assembly.settings;
    if settings.mcp_servers.is_empty() {
        return Ok(None);
    }
    let servers = server_configs(settings)?;
    let search = search_settings(settings)?;
    let manager = McpManager::builder()
        .servers(servers)
        .search(search)
        .name_limit(mcp_name_limit(settings)?)
        .workspace(settings.workspace.clone())
        .trust(settings.mcp_trust())
        .sanitizer(Arc::new(kun_builtin_tools::sanitize_schema))
        .start()
        .await
        .map_err(|err| config_error(settings, "mcp_servers".to_owned(), err.to_string()))?;
    let follower = follow(&manager, Registries::of(assembly));
    Ok(Some(McpAttachment {
        manager,
        _follower: follower,
    }))
}
