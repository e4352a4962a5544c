//! What the catalog knows about one MCP tool: where it routes, how it is named, how the gates
//! treat it, and its sanitised schema.

use crate::annotations::{ToolClass, ToolHints, classify};
use crate::naming::{NameLimit, ToolAddress, server_slugs, tool_names};
use crate::remote::RemoteTool;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// Normalises a tool's raw input schema for model APIs. The assembly root passes the
/// built-in tools' sanitiser (`kun_builtin_tools::sanitize_schema`) so MCP schemas and ours
/// go through the same one; [`identity_sanitizer`] leaves schemas as they came.
pub type SchemaSanitizer = Arc<dyn Fn(Value) -> Value + Send + Sync>;

/// A sanitiser that changes nothing.
#[must_use]
pub fn identity_sanitizer() -> SchemaSanitizer {
    Arc::new(|schema| schema)
}

/// One MCP tool as the catalog holds it.
#[derive(Clone, PartialEq)]
pub struct McpToolRecord {
    /// The catalog name, `mcp_<server>_<tool>`.
    pub name: String,
    /// The server and the tool's original name (the reverse map's entry).
    pub address: ToolAddress,
    /// A human-readable title, if the server gave one.
    pub title: Option<String>,
    /// The description shown to the model.
    pub description: String,
    /// The sanitised input schema.
    pub input_schema: Value,
    /// The output schema, if declared (as the server sent it).
    pub output_schema: Option<Value>,
    /// The annotations, if any.
    pub hints: Option<ToolHints>,
    /// Policy, kind and side effect derived from the annotations.
    pub class: ToolClass,
}

impl fmt::Debug for McpToolRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpToolRecord")
            .field("name", &self.name)
            .field("address", &self.address)
            .field("class", &self.class)
            .finish_non_exhaustive()
    }
}

impl McpToolRecord {
    /// The record of `tool` from `server`, under catalog name `name`.
    #[must_use]
    pub fn new(server: &str, name: String, tool: RemoteTool, sanitizer: &SchemaSanitizer) -> Self {
        let class = classify(tool.hints.as_ref());
        let description = match tool.description.as_deref().map(str::trim) {
            Some(text) if !text.is_empty() => text.to_owned(),
            _ => format!("MCP tool `{}` from server `{server}`.", tool.name),
        };
        Self {
            name,
            address: ToolAddress {
                server: server.to_owned(),
                tool: tool.name,
            },
            title: tool.title,
            description,
            input_schema: sanitizer(tool.input_schema),
            output_schema: tool.output_schema,
            hints: tool.hints,
            class,
        }
    }

    /// The provider id of its server, `mcp:<server>`.
    #[must_use]
    pub fn provider_id(&self) -> String {
        format!("mcp:{}", self.address.server)
    }
}

/// Names (within `limit`) and records every tool of one server (tools that cannot be named
/// apart are left out; see [`tool_names`]).
#[must_use]
pub fn records_for_server(
    server: &str,
    server_slug: &str,
    tools: Vec<RemoteTool>,
    sanitizer: &SchemaSanitizer,
    limit: NameLimit,
) -> Vec<McpToolRecord> {
    let originals: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let names = tool_names(server, server_slug, &originals, limit);
    let mut records: Vec<McpToolRecord> = tools
        .into_iter()
        .zip(names)
        .filter_map(|(tool, name)| {
            let Some(name) = name else {
                tracing::warn!(server, tool = %tool.name, "MCP server lists a tool name twice; the repeat is left out");
                return None;
            };
            Some(McpToolRecord::new(server, name, tool, sanitizer))
        })
        .collect();
    records.sort_by(|a, b| a.name.cmp(&b.name));
    records
}

/// Records for tools of several servers at once (for tests, benchmarks and offline
/// catalogs): server slugs are assigned over all `servers` together, names within the
/// default [`NameLimit`].
#[must_use]
pub fn records_for_catalog(
    servers: Vec<(String, Vec<RemoteTool>)>,
    sanitizer: &SchemaSanitizer,
) -> Vec<McpToolRecord> {
    let limit = NameLimit::default();
    let slugs = server_slugs(servers.iter().map(|(name, _)| name.as_str()), limit);
    let mut records = Vec::new();
    for (server, tools) in servers {
        let slug = slugs.get(&server).cloned().unwrap_or_default();
        records.extend(records_for_server(&server, &slug, tools, sanitizer, limit));
    }
    records
}
