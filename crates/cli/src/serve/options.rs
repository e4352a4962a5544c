//! `[serve]`: what `serve` sends each client.
//!
//! | key | values | default | what it does |
//! |---|---|---|---|
//! | `structured_content` | `auto`, `always`, `never` | `auto` | whether tools carry `outputSchema` and results `structuredContent` |
//! | `max_tool_name_length` | 24 to 64 | 54 | the longest tool name advertised |
//!
//! **Why `auto`.** Claude Code and Codex give the model a result's `structuredContent`, as
//! JSON, *instead of* its text block whenever it is present, so the compact rendering would
//! reach neither. `auto` therefore leaves out both `outputSchema` and `structuredContent` for
//! clients whose `clientInfo.name` is one of [`TEXT_ONLY_CLIENTS`], and sends them to every
//! other client (programs, the MCP Inspector, SDK clients). A declared `outputSchema` obliges
//! a `structuredContent` on every success, so the two always travel together.
//!
//! | `structured_content` | `claude-code`, `codex-mcp-client` | any other client |
//! |---|---|---|
//! | `auto` | omitted | sent |
//! | `always` | sent | sent |
//! | `never` | omitted | omitted |
//!
//! **Why 54.** Both clients name a tool `mcp__<server>__<tool>` and model APIs reject names
//! over 64 characters (the session breaks); with the server key `kun` the prefix takes 10.

use kun_composition::Settings;

/// The `clientInfo.name`s of clients that show the model `structuredContent` instead of the
/// text block (Claude Code, Codex).
pub const TEXT_ONLY_CLIENTS: [&str; 2] = ["claude-code", "codex-mcp-client"];

/// The default `max_tool_name_length`.
pub const DEFAULT_MAX_TOOL_NAME_LENGTH: usize = 54;

/// `[serve] structured_content`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(
    not(test),
    expect(
        dead_code,
        reason = "`always` and `never` come from [serve] once Settings has it (see ServeOptions::from_settings)"
    )
)]
pub enum StructuredContent {
    /// Omitted for [`TEXT_ONLY_CLIENTS`], sent to every other client.
    #[default]
    Auto,
    /// Sent to every client.
    Always,
    /// Sent to no client.
    Never,
}

/// Whether one client gets `outputSchema` and `structuredContent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structured {
    /// Tools carry their `outputSchema`, results their `structuredContent`.
    Sent,
    /// Neither: the model reads the text blocks.
    Omitted,
}

impl StructuredContent {
    /// The rule of the module table for a client that gave `client_name` (`None`: it has
    /// not said, which counts as "any other client").
    #[must_use]
    pub fn for_client(self, client_name: Option<&str>) -> Structured {
        match self {
            Self::Always => Structured::Sent,
            Self::Never => Structured::Omitted,
            Self::Auto if client_name.is_some_and(|name| TEXT_ONLY_CLIENTS.contains(&name)) => {
                Structured::Omitted
            }
            Self::Auto => Structured::Sent,
        }
    }
}

/// What `serve` sends, from `[serve]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeOptions {
    /// Whether tools and results carry their structured parts.
    pub structured_content: StructuredContent,
    /// The longest tool name advertised; longer ones are left out of `tools/list` (MCP tool
    /// names are shortened to fit when they are made, see `kun_mcp::naming`).
    pub max_tool_name_length: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            structured_content: StructuredContent::Auto,
            max_tool_name_length: DEFAULT_MAX_TOOL_NAME_LENGTH,
        }
    }
}

impl ServeOptions {
    /// The options in effect for `settings`.
    ///
    /// Wiring point: `[serve]` is being added to `Settings` on another branch; until it lands
    /// this returns the defaults, and this is the one place to read
    /// `settings.serve.structured_content` and `settings.serve.max_tool_name_length` from.
    #[must_use]
    pub fn from_settings(settings: &Settings) -> Self {
        let _ = settings;
        Self::default()
    }

    /// Whether `name` may be advertised.
    #[must_use]
    pub fn admits_name(&self, name: &str) -> bool {
        name.len() <= self.max_tool_name_length
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_cell_by_cell() {
        use Structured::{Omitted, Sent};
        use StructuredContent::{Always, Auto, Never};
        let clients = [
            Some("claude-code"),
            Some("codex-mcp-client"),
            Some("mcp"),
            Some("Claude Code"),
            Some("cursor"),
            None,
        ];
        let table = [
            (Auto, [Omitted, Omitted, Sent, Sent, Sent, Sent]),
            (Always, [Sent; 6]),
            (Never, [Omitted; 6]),
        ];
        for (mode, expected) in table {
            for (client, want) in clients.iter().zip(expected) {
                assert_eq!(mode.for_client(*client), want, "{mode:?} {client:?}");
            }
        }
    }

    #[test]
    fn names_up_to_the_cap_are_admitted() {
        let options = ServeOptions::default();
        assert_eq!(options.max_tool_name_length, 54);
        assert!(options.admits_name(&"a".repeat(54)));
        assert!(!options.admits_name(&"a".repeat(55)));
    }
}
