//! The shape of one configuration file (`config.toml`). Every table denies unknown keys.

use kun_ports::{ApprovalPolicy, SandboxMode, ThreadMode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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

/// Who vouches for an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustScope {
    /// Configured by the user: trusted everywhere.
    #[default]
    User,
    /// Configured by a workspace: trusted only in `trusted_workspace_roots`.
    Workspace,
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
    /// Who vouches for it.
    #[serde(default)]
    pub trust_scope: TrustScope,
    /// Workspaces where a workspace-scoped server is trusted.
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

/// One `config.toml`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Sandbox mode.
    pub sandbox: Option<SandboxMode>,
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
    /// `[skills]`.
    pub skills: Option<super::agents::SkillsTable>,
    /// `[delegation]`.
    pub delegation: Option<super::agents::DelegationTable>,
}
