//! The shape of one configuration file (`config.toml`). Every table denies unknown keys.
//!
//! Every key here needs a narrowing rule in [`super::narrowing::RULES`]; a table test fails
//! when one is missing.

pub use kun_mcp::TrustScope;

use kun_ports::{ApprovalPolicy, SandboxMode, ThreadMode};
use serde::de::{self, IntoDeserializer as _, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// What to do with an approval when the client cannot be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalFallback {
    /// Deny (the safe default).
    #[default]
    Deny,
    /// Allow.
    Allow,
}

/// `[serve] structured_content`: whether `serve` sends `outputSchema` and
/// `structuredContent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredContent {
    /// Left out for clients that show the model `structuredContent` instead of the text
    /// (Claude Code, Codex), sent to every other client.
    #[default]
    Auto,
    /// Always sent.
    Always,
    /// Never sent.
    Never,
}

/// `[tools]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsTable {
    /// Only these tools.
    pub allow: Option<Vec<String>>,
    /// Never these tools.
    pub deny: Option<Vec<String>>,
    /// Replaces the default plan whitelist.
    pub plan_allow: Option<Vec<String>>,
}

/// `[limits]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsTable {
    /// Lines a tool result may carry.
    pub max_output_lines: Option<u32>,
    /// Bytes a tool result may carry.
    pub max_output_bytes: Option<u32>,
    /// Default `bash` timeout.
    pub bash_timeout_seconds: Option<u32>,
}

/// `[mcp_servers.NAME]`: the fields of a `.mcp.json` entry plus ours.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerEntry {
    /// stdio: the program.
    pub command: Option<String>,
    /// stdio: its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// stdio: extra environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// stdio: working directory.
    pub cwd: Option<PathBuf>,
    /// streamable HTTP: the endpoint.
    pub url: Option<String>,
    /// streamable HTTP: request headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `.mcp.json` transport type (`stdio`, `http`, `streamable-http`, `sse`).
    #[serde(rename = "type")]
    pub transport: Option<String>,
    /// Where a server of the user config is trusted (ignored in a workspace's entries).
    #[serde(default)]
    pub trust_scope: TrustScope,
    /// With `trust_scope = "workspace"`: the workspaces it is trusted in.
    #[serde(default)]
    pub trusted_workspace_roots: Vec<PathBuf>,
    /// Workspaces where the server is visible (empty: everywhere).
    #[serde(default)]
    pub workspace_roots: Vec<PathBuf>,
    /// The user's switch.
    pub enabled: Option<bool>,
    /// How long the server may take to start.
    pub startup_timeout_seconds: Option<u32>,
    /// How long one call may take.
    pub call_timeout_seconds: Option<u32>,
}

/// `[mcp]`: how MCP tools are presented.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct McpTable {
    /// `direct`, `search` or `auto`.
    pub search: Option<String>,
    /// Tool count above which `auto` switches to search.
    pub search_threshold: Option<u32>,
    /// Results per search.
    pub top_k: Option<u32>,
}

/// `[trust]`: read from the user config and `--config` only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TrustTable {
    /// Trusted workspaces (absolute, or `~/…`); a workspace inside one is trusted too.
    pub workspaces: Option<Vec<PathBuf>>,
    /// Trusted MCP server definitions of workspaces, `<name>:<hash>`.
    pub mcp_servers: Option<Vec<String>>,
}

/// `[shell]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ShellTable {
    /// Names of environment variables passed to the commands the model runs, beyond the
    /// base set.
    pub env: Option<Vec<String>>,
}

/// `[serve]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServeTable {
    /// `Origin`s accepted by `serve --http` besides loopback ones.
    pub allowed_origins: Option<Vec<String>>,
    /// Whether to send `outputSchema` / `structuredContent`.
    pub structured_content: Option<StructuredContent>,
    /// The longest tool name `serve` advertises.
    pub max_tool_name_length: Option<u32>,
}

/// `sandbox = "MODE"`, or the `[sandbox]` table: `mode`, `network`,
/// `protected_path_exceptions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SandboxTable {
    /// The sandbox mode (`sandbox = "…"` is short for `[sandbox] mode = "…"`).
    pub mode: Option<SandboxMode>,
    /// Whether confined commands may reach the network.
    pub network: Option<bool>,
    /// Paths under the workspace that `write`/`edit` may change although protected.
    pub protected_path_exceptions: Option<Vec<PathBuf>>,
}

/// The table form, unknown keys denied.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxFields {
    mode: Option<SandboxMode>,
    network: Option<bool>,
    protected_path_exceptions: Option<Vec<PathBuf>>,
}

impl<'de> Deserialize<'de> for SandboxTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> Visitor<'de> for Either {
            type Value = SandboxTable;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a sandbox mode (read-only, workspace-write, danger-full-access, external-sandbox) or a [sandbox] table",
                )
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<SandboxTable, E> {
                let mode = SandboxMode::deserialize(text.into_deserializer())?;
                Ok(SandboxTable {
                    mode: Some(mode),
                    ..SandboxTable::default()
                })
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<SandboxTable, M::Error> {
                let fields =
                    SandboxFields::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(SandboxTable {
                    mode: fields.mode,
                    network: fields.network,
                    protected_path_exceptions: fields.protected_path_exceptions,
                })
            }
        }
        deserializer.deserialize_any(Either)
    }
}

/// One `config.toml`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Sandbox mode, or the `[sandbox]` table.
    pub sandbox: Option<SandboxTable>,
    /// Approval policy.
    pub approval: Option<ApprovalPolicy>,
    /// Agent or plan.
    pub mode: Option<ThreadMode>,
    /// When the client cannot be asked.
    pub approval_fallback: Option<ApprovalFallback>,
    /// `[tools]`.
    pub tools: Option<ToolsTable>,
    /// `[limits]`.
    pub limits: Option<LimitsTable>,
    /// `[hooks]`, Claude Code's shape; validated by `kun-hooks`.
    pub hooks: Option<toml::Table>,
    /// `[mcp_servers.*]`.
    pub mcp_servers: Option<BTreeMap<String, McpServerEntry>>,
    /// `[mcp]`.
    pub mcp: Option<McpTable>,
    /// `[trust]` (user config and `--config` only).
    pub trust: Option<TrustTable>,
    /// `[shell]`.
    pub shell: Option<ShellTable>,
    /// `[serve]`.
    pub serve: Option<ServeTable>,
    /// `cli`, `gui` or `api` (goal and todo tools are listed for `gui` only).
    pub client_surface: Option<kun_ports::ClientSurface>,
    /// `[plan]`.
    pub plan: Option<super::gui_media::PlanTable>,
    /// `[computer_use]`.
    pub computer_use: Option<super::gui_media::ComputerUseTable>,
    /// `[media.<kind>]` (user config and `--config` only).
    pub media: Option<super::gui_media::MediaTable>,
    /// `[skills]`.
    pub skills: Option<super::agents::SkillsTable>,
    /// `[delegation]`.
    pub delegation: Option<super::agents::DelegationTable>,
    /// `[memory]`.
    pub memory: Option<super::MemoryTable>,
    /// `[web]` (and `[web.search]`).
    pub web: Option<super::WebTable>,
}
