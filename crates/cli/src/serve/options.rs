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
use kun_composition::config::StructuredContent;

/// The `clientInfo.name`s of clients that show the model `structuredContent` instead of the
/// text block (Claude Code, Codex).
pub const TEXT_ONLY_CLIENTS: [&str; 2] = ["claude-code", "codex-mcp-client"];

/// Whether one client gets `outputSchema` and `structuredContent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structured {
    /// Tools carry their `outputSchema`, results their `structuredContent`.
    Sent,
    /// Neither: the model reads the text blocks.
    Omitted,
}

/// The rule of the module table: what `mode` means for a client that gave `client_name`
/// (`None`: it has not said, which counts as "any other client").
#[must_use]
pub fn for_client(mode: StructuredContent, client_name: Option<&str>) -> Structured {
    match mode {
        StructuredContent::Always => Structured::Sent,
        StructuredContent::Never => Structured::Omitted,
        StructuredContent::Auto
            if client_name.is_some_and(|name| TEXT_ONLY_CLIENTS.contains(&name)) =>
        {
            Structured::Omitted
        }
        StructuredContent::Auto => Structured::Sent,
    }
}

/// What `serve` sends, from `[serve]` (read for every request, so a reload applies to the
/// next one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeOptions {
    /// Whether tools and results carry their structured parts.
    pub structured_content: StructuredContent,
    /// The longest tool name advertised; longer ones are left out of `tools/list` (MCP tool
    /// names are made to fit when they are made, see `kun_composition::mcp_name_limit`).
    pub max_tool_name_length: usize,
}

impl ServeOptions {
    /// The options in effect for `settings`.
    #[must_use]
    pub fn from_settings(settings: &Settings) -> Self {
        let serve = &settings.serve;
        Self {
            structured_content: serve.structured_content,
            max_tool_name_length: usize::try_from(serve.max_tool_name_length).unwrap_or(usize::MAX),
        }
    }

    /// Whether a client that gave `client_name` gets the structured parts.
    #[must_use]
    pub fn structured_for(&self, client_name: Option<&str>) -> Structured {
        for_client(self.structured_content, client_name)
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
    use kun_composition::config::ServeSettings;

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
                assert_eq!(for_client(mode, *client), want, "{mode:?} {client:?}");
            }
        }
    }

    #[test]
    fn the_defaults_are_auto_and_54() {
        let defaults = ServeSettings::default();
        assert_eq!(defaults.structured_content, StructuredContent::Auto);
        assert_eq!(defaults.max_tool_name_length, 54);
        let options = ServeOptions {
            structured_content: defaults.structured_content,
            max_tool_name_length: 54,
        };
        assert!(options.admits_name(&"a".repeat(54)));
        assert!(!options.admits_name(&"a".repeat(55)));
    }
}
