//! Configuration: four layers, later ones overriding earlier ones key by key —
//! the user config (`$XDG_CONFIG_HOME/kun/config.toml`), the workspace's `.kun/config.toml`,
//! the file given by `--config`, then command-line flags. `.mcp.json` at the workspace root adds
//! its servers (configuration files win on a name clash). [`Settings::sources`] says where each
//! effective value came from.
//!
//! **Workspace trust** ([`trust`]): the workspace layer (`.kun/config.toml`, `.mcp.json`)
//! counts as the user's own only when the user trusts the workspace. Otherwise it may only
//! narrow — stricter sandbox and approval, fallback deny, deny-lists added, allow-lists
//! intersected, lower limits — and its hooks do not run and its MCP servers do not start. The
//! rule of every key is in [`narrowing`]; what was left out is in [`Settings::ignored`].
//!
//! Unknown keys and bad values are errors naming the file, the line and the key.

mod agents;
mod effective;
mod error;
mod file;
pub mod gui_media;
mod mcp_json;
mod memory_web;
pub mod narrowing;
mod sections;
pub mod trust;
pub mod validate;

pub use agents::{
    DEFAULT_MAX_PARALLEL, DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_SECONDS, DelegationTable, OpenAiTable,
    RunnerKind, SkillsTable,
};
pub use effective::{DEFAULT_BASH_TIMEOUT_SECONDS, EffectiveValue};
pub use error::ConfigError;
pub use file::{
    ApprovalFallback, ConfigFile, LimitsTable, McpServerEntry, McpTable, SandboxTable, ServeTable,
    ShellTable, StructuredContent, ToolsTable, TrustScope, TrustTable,
};
pub use mcp_json::read_mcp_json;
pub use memory_web::{MemorySettings, MemoryTable, WebSearchTable, WebSettings, WebTable};
pub use narrowing::{Authority, Ignored, RULES, Rule};
pub use sections::{
    DEFAULT_MAX_TOOL_NAME_LENGTH, SandboxOptions, ServeSettings, ShellSettings, TrustSettings,
};
pub use trust::{TrustFlag, WorkspaceTrust};

use kun_hooks::HooksConfig;
use kun_mcp::{DefinedBy, McpTrust, Vouch};
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
    /// `--trust-workspace`.
    pub trust: TrustFlag,
    /// `--surface`.
    pub client_surface: Option<kun_ports::ClientSurface>,
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
    /// `[sandbox]` beyond the mode.
    pub sandbox_options: SandboxOptions,
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
    /// Hooks of the user's layers (and of a trusted workspace), in layer order.
    pub hooks: HooksConfig,
    /// MCP servers by name (a workspace's too: whether they start is kun-mcp's decision,
    /// see [`Settings::mcp_trust`]).
    pub mcp_servers: BTreeMap<String, McpServerEntry>,
    /// MCP presentation.
    pub mcp: McpTable,
    /// `[shell]`.
    pub shell: ShellSettings,
    /// `[serve]`.
    pub serve: ServeSettings,
    /// Whether the workspace is trusted, and the user's trust entries.
    pub trust: TrustSettings,
    /// `client_surface`, `[plan]` and `[computer_use]`.
    pub gui: gui_media::GuiSettings,
    /// `[media.<kind>]`.
    pub media: gui_media::MediaSettings,
    /// Workspace settings that were not applied, in file order.
    pub ignored: Vec<Ignored>,
    /// `[skills]`.
    pub skills: SkillsTable,
    /// `[delegation]`.
    pub delegation: DelegationTable,
    /// `[memory]`.
    pub memory: MemorySettings,
    /// `[web]` and `[web.search]`.
    pub web: WebSettings,
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
            sandbox_options: SandboxOptions::default(),
            approval: ApprovalPolicy::default(),
            mode: ThreadMode::default(),
            approval_fallback: ApprovalFallback::default(),
            tools: ToolsTable::default(),
            limits: LimitsTable::default(),
            hooks: HooksConfig::default(),
            mcp_servers: BTreeMap::new(),
            mcp: McpTable::default(),
            shell: ShellSettings::default(),
            serve: ServeSettings::default(),
            trust: TrustSettings::default(),
            gui: gui_media::GuiSettings::default(),
            media: gui_media::MediaSettings::default(),
            ignored: Vec::new(),
            skills: SkillsTable::default(),
            delegation: DelegationTable::default(),
            memory: MemorySettings::default(),
            web: WebSettings::default(),
            sources: BTreeMap::new(),
        }
    }

    /// Loads every layer: decides the workspace's trust from the user's files and the flag,
    /// then merges `.mcp.json`, the user config, the workspace config and `--config` (each
    /// with its [`Authority`]), then the flags.
    ///
    /// # Errors
    /// The first bad file, naming file, line and key.
    pub fn load(paths: &ConfigPaths, overrides: &Overrides) -> Result<Self, ConfigError> {
        let mut settings = Self::defaults(&paths.workspace);
        let mcp_json = paths.workspace.join(".mcp.json");
        let json_servers = read_mcp_json(&mcp_json)?;
        let mut files = Vec::new();
        for layer in paths.layers() {
            if let Some((file, text)) = read_file(&layer.path, layer.presence)? {
                validate::file(&file, &layer.path, &text)?;
                files.push((layer, file, text));
            }
        }
        let entries: Vec<(PathBuf, PathBuf)> = files
            .iter()
            .filter(|(layer, ..)| layer_authority(&layer.source, true) == Authority::User)
            .flat_map(|(layer, file, _)| {
                let listed = file.trust.as_ref().and_then(|t| t.workspaces.clone());
                listed
                    .into_iter()
                    .flatten()
                    .map(|entry| (entry, layer.path.clone()))
            })
            .collect();
        settings.trust.workspace = trust::decide(&paths.workspace, &entries, overrides.trust);
        let trusted = settings.trust.workspace.is_trusted();
        let json_source = Source::McpJson(mcp_json);
        for (name, entry) in json_servers {
            settings
                .sources
                .insert(format!("mcp_servers.{name}"), json_source.clone());
            settings.mcp_servers.insert(name, entry);
        }
        for (layer, file, text) in files {
            let authority = layer_authority(&layer.source, trusted);
            settings.merge_layer(file, &text, &layer.path, &layer.source, authority)?;
        }
        settings.apply_overrides(overrides);
        settings.report_refused_servers();
        Ok(settings)
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
        mark("client_surface", o.client_surface.is_some());
        self.gui.client_surface = o.client_surface.unwrap_or(self.gui.client_surface);
        self.sandbox = o.sandbox.unwrap_or(self.sandbox);
        self.approval = o.approval.unwrap_or(self.approval);
        self.mode = o.mode.unwrap_or(self.mode);
        self.approval_fallback = o.approval_fallback.unwrap_or(self.approval_fallback);
        if o.allow_tools.is_some() {
            self.tools.allow.clone_from(&o.allow_tools);
        }
        if o.deny_tools.is_some() {
            self.tools.deny.clone_from(&o.deny_tools);
        }
    }

    /// Who wrote the definition of server `name`: the workspace for `.mcp.json` and
    /// `.kun/config.toml` entries, the user otherwise.
    #[must_use]
    pub fn defined_by(&self, name: &str) -> DefinedBy {
        match self.source_of(&format!("mcp_servers.{name}")) {
            Source::Workspace(_) | Source::McpJson(_) => DefinedBy::Workspace,
            _ => DefinedBy::User,
        }
    }

    /// The user's word on the workspace's MCP definitions, for kun-mcp to decide with.
    #[must_use]
    pub fn mcp_trust(&self) -> McpTrust {
        let pins = self
            .trust
            .mcp_servers
            .iter()
            .filter_map(|pin| kun_mcp::DefinitionId::parse(pin).ok());
        McpTrust::new(self.trust.workspace.standing(), pins)
    }

    /// Adds an [`Ignored`] entry for every server a workspace defines that will not start
    /// (kun-mcp's verdict), with its pin line.
    fn report_refused_servers(&mut self) {
        let trust = self.mcp_trust();
        let mut refused = Vec::new();
        for (name, entry) in &self.mcp_servers {
            let Ok(config) = crate::mcp::server_config(self, name, entry) else {
                continue; // attaching reports the configuration error
            };
            if !config.enabled {
                continue;
            }
            if let Vouch::Unvouched(id) = trust.vouch(&config) {
                let file = match self.source_of(&format!("mcp_servers.{name}")) {
                    Source::Workspace(p) | Source::McpJson(p) => p,
                    _ => continue,
                };
                refused.push(Ignored {
                    key: narrowing::server_key(name),
                    file,
                    given: narrowing::render(&config.transport.describe()),
                    rule: Rule::ServersRefused,
                    in_effect: None,
                    hint: Some(id.pin_line()),
                });
            }
        }
        self.ignored.extend(refused);
    }

    /// A configuration error about a dotted key, naming the file its value came from.
    #[must_use]
    pub fn error_at(&self, key: &str, message: impl Into<String>) -> ConfigError {
        let file = match self.source_of(key) {
            Source::User(p) | Source::Workspace(p) | Source::ConfigFlag(p) | Source::McpJson(p) => {
                p
            }
            Source::Default | Source::CommandLine => PathBuf::from("command line"),
        };
        ConfigError {
            file,
            line: None,
            key: Some(key.to_owned()),
            message: message.into(),
        }
    }

    /// Where a dotted key's value came from.
    #[must_use]
    pub fn source_of(&self, key: &str) -> Source {
        self.sources.get(key).cloned().unwrap_or(Source::Default)
    }
}

/// The authority of a layer's source, given whether the workspace is trusted.
fn layer_authority(source: &Source, trusted: bool) -> Authority {
    match source {
        Source::Workspace(_) | Source::McpJson(_) if trusted => Authority::TrustedWorkspace,
        Source::Workspace(_) | Source::McpJson(_) => Authority::UntrustedWorkspace,
        Source::Default | Source::User(_) | Source::ConfigFlag(_) | Source::CommandLine => {
            Authority::User
        }
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
