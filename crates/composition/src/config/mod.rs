//! Configuration: four layers, later ones overriding earlier ones key by key —
//! the user config (`$XDG_CONFIG_HOME/kun/config.toml`), the workspace's `.kun/config.toml`,
//! the file given by `--config`, then command-line flags. `.mcp.json` at the workspace root adds
//! its servers (configuration files win on a name clash). Hooks from every layer run, user
//! hooks first. [`Settings::sources`] says where each effective value came from.
//!
//! Unknown keys and bad values are errors naming the file, the line and the key.

mod agents;
mod effective;
mod error;
mod file;
mod mcp_json;

pub use agents::{
    DEFAULT_MAX_PARALLEL, DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_SECONDS, DelegationTable,
    LayerAuthority, OpenAiTable, RunnerKind, SkillsTable,
};
pub use effective::{DEFAULT_BASH_TIMEOUT_SECONDS, EffectiveValue};
pub use error::ConfigError;
pub use file::{
    ApprovalFallback, ConfigFile, LimitsTable, McpServerEntry, McpTable, ToolsTable, TrustScope,
};
pub use mcp_json::read_mcp_json;

use kun_hooks::HooksConfig;
use kun_ports::{ApprovalPolicy, HookPhase, SandboxMode, ThreadMode};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Where an effective value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "layer", content = "path", rename_all = "snake_case")]
pub enum Source {
    /// The built-in default.
    Default,
    /// The user config file.
    User(PathBuf),
    /// The workspace's `.kun/config.toml`.
    Workspace(PathBuf),
    /// The `--config` file.
    ConfigFlag(PathBuf),
    /// A command-line flag.
    CommandLine,
    /// `.mcp.json`.
    McpJson(PathBuf),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Default => f.write_str("default"),
            Self::User(p) => write!(f, "user config {}", p.display()),
            Self::Workspace(p) => write!(f, "workspace config {}", p.display()),
            Self::ConfigFlag(p) => write!(f, "--config {}", p.display()),
            Self::CommandLine => f.write_str("command line"),
            Self::McpJson(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Values given on the command line (the last layer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `--sandbox`.
    pub sandbox: Option<SandboxMode>,
    /// `--approval`.
    pub approval: Option<ApprovalPolicy>,
    /// `--mode`.
    pub mode: Option<ThreadMode>,
    /// `--approval-fallback`.
    pub approval_fallback: Option<ApprovalFallback>,
    /// `--allow-tools`.
    pub allow_tools: Option<Vec<String>>,
    /// `--deny-tools`.
    pub deny_tools: Option<Vec<String>>,
}

/// Whether a configuration file must exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// A missing file is an empty layer.
    Optional,
    /// A missing file is an error (the `--config` file).
    Required,
}

/// One TOML layer: where it counts, its file, and whether the file must exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// The layer.
    pub source: Source,
    /// Its file.
    pub path: PathBuf,
    /// Whether the file must exist.
    pub presence: Presence,
}

/// Where to look for configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigPaths {
    /// The workspace root.
    pub workspace: PathBuf,
    /// The user config file (`None`: no user layer).
    pub user: Option<PathBuf>,
    /// The `--config` file.
    pub explicit: Option<PathBuf>,
}

impl ConfigPaths {
    /// The standard places for `workspace`: `$XDG_CONFIG_HOME/kun/config.toml` (or
    /// `~/.config/kun/config.toml`) and `<workspace>/.kun/config.toml`.
    #[must_use]
    pub fn standard(workspace: &Path, explicit: Option<PathBuf>) -> Self {
        let user = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
            .map(|dir| dir.join("kun").join("config.toml"));
        Self {
            workspace: workspace.to_path_buf(),
            user,
            explicit,
        }
    }

    /// The workspace layer's file.
    #[must_use]
    pub fn workspace_file(&self) -> PathBuf {
        self.workspace.join(".kun").join("config.toml")
    }

    /// The TOML layers, earliest first. Only the `--config` file must exist.
    #[must_use]
    pub fn layers(&self) -> Vec<Layer> {
        let mut layers = Vec::with_capacity(3);
        if let Some(user) = &self.user {
            layers.push(Layer {
                source: Source::User(user.clone()),
                path: user.clone(),
                presence: Presence::Optional,
            });
        }
        let workspace = self.workspace_file();
        layers.push(Layer {
            source: Source::Workspace(workspace.clone()),
            path: workspace,
            presence: Presence::Optional,
        });
        if let Some(explicit) = &self.explicit {
            layers.push(Layer {
                source: Source::ConfigFlag(explicit.clone()),
                path: explicit.clone(),
                presence: Presence::Required,
            });
        }
        layers
    }

    /// Every file that configures this workspace (for reload watching).
    #[must_use]
    pub fn files(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = self.user.iter().cloned().collect();
        files.push(self.workspace_file());
        files.extend(self.explicit.iter().cloned());
        files.push(self.workspace.join(".mcp.json"));
        files
    }
}

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The workspace root (absolute).
    pub workspace: PathBuf,
    /// Sandbox mode.
    pub sandbox: SandboxMode,
    /// Approval policy.
    pub approval: ApprovalPolicy,
    /// Agent or plan.
    pub mode: ThreadMode,
    /// When the client cannot be asked.
    pub approval_fallback: ApprovalFallback,
    /// Tool lists.
    pub tools: ToolsTable,
    /// Output limits and the bash timeout.
    pub limits: LimitsTable,
    /// Hooks of every layer, in layer order.
    pub hooks: HooksConfig,
    /// MCP servers by name.
    pub mcp_servers: BTreeMap<String, McpServerEntry>,
    /// MCP presentation.
    pub mcp: McpTable,
    /// `[skills]`.
    pub skills: SkillsTable,
    /// `[delegation]`.
    pub delegation: DelegationTable,
    /// Where each value came from, by dotted key.
    pub sources: BTreeMap<String, Source>,
}

impl Settings {
    /// Defaults for `workspace` with no file and no flag.
    #[must_use]
    pub fn defaults(workspace: &Path) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            sandbox: SandboxMode::default(),
            approval: ApprovalPolicy::default(),
            mode: ThreadMode::default(),
            approval_fallback: ApprovalFallback::default(),
            tools: ToolsTable::default(),
            limits: LimitsTable::default(),
            hooks: HooksConfig::default(),
            mcp_servers: BTreeMap::new(),
            mcp: McpTable::default(),
            skills: SkillsTable::default(),
            delegation: DelegationTable::default(),
            sources: BTreeMap::new(),
        }
    }

    /// Loads every layer.
    ///
    /// # Errors
    /// The first bad file, naming file, line and key.
    pub fn load(paths: &ConfigPaths, overrides: &Overrides) -> Result<Self, ConfigError> {
        let mut settings = Self::defaults(&paths.workspace);
        let mcp_json = paths.workspace.join(".mcp.json");
        for (name, entry) in read_mcp_json(&mcp_json)? {
            settings.sources.insert(
                format!("mcp_servers.{name}"),
                Source::McpJson(mcp_json.clone()),
            );
            settings.mcp_servers.insert(name, entry);
        }
        for layer in paths.layers() {
            if let Some((file, text)) = read_file(&layer.path, layer.presence)? {
                settings.apply(file, &text, &layer.path, &layer.source)?;
            }
        }
        settings.apply_overrides(overrides);
        Ok(settings)
    }

    fn apply(
        &mut self,
        file: ConfigFile,
        text: &str,
        path: &Path,
        source: &Source,
    ) -> Result<(), ConfigError> {
        let mut set = |key: &str| {
            self.sources.insert(key.to_owned(), source.clone());
        };
        if file.sandbox.is_some() {
            set("sandbox");
        }
        if file.approval.is_some() {
            set("approval");
        }
        if file.mode.is_some() {
            set("mode");
        }
        if file.approval_fallback.is_some() {
            set("approval_fallback");
        }
        let tools = file.tools.unwrap_or_default();
        for (key, present) in [
            ("tools.allow", tools.allow.is_some()),
            ("tools.deny", tools.deny.is_some()),
            ("tools.plan_allow", tools.plan_allow.is_some()),
        ] {
            if present {
                set(key);
            }
        }
        let limits = file.limits.unwrap_or_default();
        for (key, present) in [
            ("limits.max_output_lines", limits.max_output_lines.is_some()),
            ("limits.max_output_bytes", limits.max_output_bytes.is_some()),
            (
                "limits.bash_timeout_seconds",
                limits.bash_timeout_seconds.is_some(),
            ),
        ] {
            if present {
                set(key);
            }
        }
        let mcp = file.mcp.unwrap_or_default();
        for (key, present) in [
            ("mcp.search", mcp.search.is_some()),
            ("mcp.search_threshold", mcp.search_threshold.is_some()),
            ("mcp.top_k", mcp.top_k.is_some()),
        ] {
            if present {
                set(key);
            }
        }
        if let Some(servers) = &file.mcp_servers {
            for name in servers.keys() {
                set(&format!("mcp_servers.{name}"));
            }
        }
        self.sandbox = file.sandbox.unwrap_or(self.sandbox);
        self.approval = file.approval.unwrap_or(self.approval);
        self.mode = file.mode.unwrap_or(self.mode);
        self.approval_fallback = file.approval_fallback.unwrap_or(self.approval_fallback);
        merge(&mut self.tools.allow, tools.allow);
        merge(&mut self.tools.deny, tools.deny);
        merge(&mut self.tools.plan_allow, tools.plan_allow);
        merge(&mut self.limits.max_output_lines, limits.max_output_lines);
        merge(&mut self.limits.max_output_bytes, limits.max_output_bytes);
        merge(
            &mut self.limits.bash_timeout_seconds,
            limits.bash_timeout_seconds,
        );
        merge(&mut self.mcp.search, mcp.search);
        merge(&mut self.mcp.search_threshold, mcp.search_threshold);
        merge(&mut self.mcp.top_k, mcp.top_k);
        validate_limits(&self.limits, path, text)?;
        for (name, mut entry) in file.mcp_servers.unwrap_or_default() {
            // A repository cannot vouch for itself: a server from the workspace's own config
            // keeps the trust the user's config gave that name, and is otherwise
            // workspace-scoped and trusted nowhere.
            if matches!(source, Source::Workspace(_)) {
                let earlier = self.mcp_servers.get(&name);
                let granted = earlier.map_or(TrustScope::Workspace, |e| e.trust_scope);
                let roots = earlier
                    .map(|e| e.trusted_workspace_roots.clone())
                    .unwrap_or_default();
                if !entry.trusted_workspace_roots.is_empty()
                    && entry.trusted_workspace_roots != roots
                {
                    tracing::warn!(
                        server = %name,
                        "a workspace config cannot grant trust to its own MCP server; trust it from the user config"
                    );
                }
                entry.trust_scope = granted;
                entry.trusted_workspace_roots = roots;
            }
            self.mcp_servers.insert(name, entry);
        }
        let authority = LayerAuthority::of(source);
        let mut agent_keys = Vec::new();
        if let Some(skills) = file.skills {
            agent_keys.extend(agents::merge_skills(&mut self.skills, skills, authority));
        }
        if let Some(delegation) = file.delegation {
            agent_keys.extend(agents::merge_delegation(
                &mut self.delegation,
                delegation,
                authority,
            ));
        }
        for key in agent_keys {
            set(key);
        }
        if let Some(hooks) = file.hooks {
            let layer = hooks_from_toml(hooks, path, text)?;
            for phase in HookPhase::ALL {
                for group in layer.groups(phase) {
                    self.hooks.push(phase, group.clone());
                }
            }
            set("hooks");
        }
        Ok(())
    }

    fn apply_overrides(&mut self, o: &Overrides) {
        let mut mark = |key: &str, present: bool| {
            if present {
                self.sources.insert(key.to_owned(), Source::CommandLine);
            }
        };
        mark("sandbox", o.sandbox.is_some());
        mark("approval", o.approval.is_some());
        mark("mode", o.mode.is_some());
        mark("approval_fallback", o.approval_fallback.is_some());
        mark("tools.allow", o.allow_tools.is_some());
        mark("tools.deny", o.deny_tools.is_some());
        self.sandbox = o.sandbox.unwrap_or(self.sandbox);
        self.approval = o.approval.unwrap_or(self.approval);
        self.mode = o.mode.unwrap_or(self.mode);
        self.approval_fallback = o.approval_fallback.unwrap_or(self.approval_fallback);
        merge(&mut self.tools.allow, o.allow_tools.clone());
        merge(&mut self.tools.deny, o.deny_tools.clone());
    }

    /// Where a dotted key's value came from.
    #[must_use]
    pub fn source_of(&self, key: &str) -> Source {
        self.sources.get(key).cloned().unwrap_or(Source::Default)
    }
}

fn merge<T>(slot: &mut Option<T>, value: Option<T>) {
    if value.is_some() {
        *slot = value;
    }
}

fn read_file(path: &Path, presence: Presence) -> Result<Option<(ConfigFile, String)>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err)
            if err.kind() == std::io::ErrorKind::NotFound && presence == Presence::Optional =>
        {
            return Ok(None);
        }
        Err(err) => {
            return Err(ConfigError::file(
                path,
                format!("cannot read the configuration: {err}"),
            ));
        }
    };
    let file = toml::from_str::<ConfigFile>(&text)
        .map_err(|err| ConfigError::from_toml(path, &text, &err))?;
    Ok(Some((file, text)))
}

fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines()
        .position(|line| line.contains(needle))
        .map(|i| i + 1)
}

fn validate_limits(limits: &LimitsTable, path: &Path, text: &str) -> Result<(), ConfigError> {
    for (key, value) in [
        ("max_output_lines", limits.max_output_lines),
        ("max_output_bytes", limits.max_output_bytes),
        ("bash_timeout_seconds", limits.bash_timeout_seconds),
    ] {
        if value == Some(0) {
            return Err(ConfigError {
                file: path.to_path_buf(),
                line: line_of(text, key),
                key: Some(format!("limits.{key}")),
                message: "must be at least 1".to_owned(),
            });
        }
    }
    Ok(())
}

fn hooks_from_toml(
    table: toml::Table,
    path: &Path,
    text: &str,
) -> Result<HooksConfig, ConfigError> {
    let json =
        serde_json::to_value(&table).map_err(|err| ConfigError::file(path, err.to_string()))?;
    HooksConfig::from_value(&json).map_err(|err| {
        let message = err.to_string();
        // Point at the first line of the event the error names, if it names one.
        let event = HookPhase::ALL
            .iter()
            .map(|p| p.as_str())
            .find(|name| message.contains(name));
        let line = event
            .and_then(|name| line_of(text, &format!("hooks.{name}")))
            .or_else(|| line_of(text, "hooks"));
        ConfigError {
            file: path.to_path_buf(),
            line,
            key: Some("hooks".to_owned()),
            message,
        }
    })
}
