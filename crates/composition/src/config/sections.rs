//! The resolved sections of [`Settings`](super::Settings) that other crates consume: defaults
//! filled in, typed.

use super::file::StructuredContent;
use super::trust::WorkspaceTrust;
use serde::Serialize;
use std::path::PathBuf;

/// `[serve] max_tool_name_length` by default: 64 minus Claude Code's and Codex's
/// `mcp__kun__` prefix.
pub const DEFAULT_MAX_TOOL_NAME_LENGTH: u32 = 54;

/// `[sandbox]` beyond the mode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SandboxOptions {
    /// Whether confined commands may reach the network (default off).
    pub network: bool,
    /// Paths relative to the workspace root that `write` and `edit` may change although
    /// they are protected (`.kun/`, `.git/`, …). User config and `--config` only.
    pub protected_path_exceptions: Vec<PathBuf>,
}

/// `[shell]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ShellSettings {
    /// Environment variable names passed to the commands the model runs, beyond the base set
    /// (`PATH`, `HOME`, `LANG`/`LC_*`, `TERM`, `USER`, `SHELL`, `TMPDIR`, `TZ`).
    pub env: Vec<String>,
}

/// `[serve]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServeSettings {
    /// `Origin`s `serve --http` accepts besides loopback ones (`scheme://host[:port|:*]`).
    pub allowed_origins: Vec<String>,
    /// Whether to send `outputSchema` and `structuredContent`.
    pub structured_content: StructuredContent,
    /// The longest tool name `serve` advertises.
    pub max_tool_name_length: u32,
}

impl Default for ServeSettings {
    fn default() -> Self {
        Self {
            allowed_origins: Vec::new(),
            structured_content: StructuredContent::Auto,
            max_tool_name_length: DEFAULT_MAX_TOOL_NAME_LENGTH,
        }
    }
}

/// `[trust]` and the verdict on this workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TrustSettings {
    /// Whether this workspace is trusted, and why.
    pub workspace: WorkspaceTrust,
    /// `[trust] workspaces` of the user's files.
    pub workspaces: Vec<PathBuf>,
    /// `[trust] mcp_servers` of the user's files: pinned MCP definitions, `<name>:<hash>`.
    pub mcp_servers: Vec<String>,
}
