//! A tool as an MCP server lists it, in our own types (rmcp's stay inside this crate).

use crate::annotations::ToolHints;
use serde_json::{Map, Value};

/// One tool from a server's `tools/list`.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteTool {
    /// The name the server uses (sent back in `tools/call`).
    pub name: String,
    /// A human-readable title (the tool's own, else its annotations').
    pub title: Option<String>,
    /// What the server says the tool does.
    pub description: Option<String>,
    /// The raw JSON Schema of its arguments.
    pub input_schema: Value,
    /// The JSON Schema of its structured output, if declared.
    pub output_schema: Option<Value>,
    /// Its annotations, when it has any.
    pub hints: Option<ToolHints>,
}

impl RemoteTool {
    /// Reads a tool in MCP's JSON shape (`{name, title?, description?, inputSchema,
    /// outputSchema?, annotations?}`), as `tools/list` sends it.
    ///
    /// ```
    /// let tool = kun_mcp::RemoteTool::from_json(serde_json::json!({
    ///     "name": "get_current_time",
    ///     "description": "Get the current time in a timezone",
    ///     "inputSchema": {"type": "object", "properties": {"timezone": {"type": "string"}}},
    ///     "annotations": {"readOnlyHint": true, "openWorldHint": false}
    /// })).unwrap();
    /// assert_eq!(tool.hints.unwrap().read_only, Some(true));
    /// ```
    ///
    /// # Errors
    /// When the value is not a tool (for example, no `name` or no `inputSchema` object).
    pub fn from_json(value: Value) -> Result<Self, serde_json::Error> {
        let tool: rmcp::model::Tool = serde_json::from_value(value)?;
        Ok(Self::from_rmcp(tool))
    }

    /// Converts rmcp's tool.
    pub(crate) fn from_rmcp(tool: rmcp::model::Tool) -> Self {
        let hints = tool.annotations.map(|a| ToolHints {
            title: a.title,
            read_only: a.read_only_hint,
            destructive: a.destructive_hint,
            idempotent: a.idempotent_hint,
            open_world: a.open_world_hint,
        });
        let title = tool
            .title
            .or_else(|| hints.as_ref().and_then(|h| h.title.clone()));
        Self {
            name: tool.name.into_owned(),
            title,
            description: tool.description.map(std::borrow::Cow::into_owned),
            input_schema: Value::Object(Map::clone(&tool.input_schema)),
            output_schema: tool.output_schema.map(|s| Value::Object(Map::clone(&s))),
            hints,
        }
    }
}
