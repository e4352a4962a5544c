//! A direct MCP tool: one server tool under its catalog name, behind every gate.

use crate::access::ServerAccess;
use crate::link::{ServerLink, Structured};
use crate::record::McpToolRecord;
use async_trait::async_trait;
use kun_ports::{ErrorCode, Tool, ToolContext, ToolError, ToolHostContext, ToolResult, ToolSpec};
use serde_json::{Map, Value, json};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// One MCP tool as a [`Tool`]. Its spec carries the annotation-derived policy, kind and side
/// effect, and the server's output schema when it declared an object schema; [`Tool::should_advertise`] is the server's visibility ∧ trust, so the registry
/// checks it when listing and again when resolving a call; `execute` checks it a third time
/// (a direct call that skipped the registry still gets the trust error).
pub struct McpTool {
    spec: ToolSpec,
    record: Arc<McpToolRecord>,
    access: Arc<ServerAccess>,
    link: Arc<ServerLink>,
}

impl fmt::Debug for McpTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("server", &self.record.address.server)
            .field("tool", &self.record.address.tool)
            .finish_non_exhaustive()
    }
}

/// Whether a direct tool is listed or only callable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listing {
    /// Listed with its schema (direct mode).
    Listed,
    /// Hidden but callable (search mode: `mcp_call` forwards to it).
    Hidden,
}

impl McpTool {
    pub(crate) fn new(
        record: Arc<McpToolRecord>,
        access: Arc<ServerAccess>,
        link: Arc<ServerLink>,
        listing: Listing,
    ) -> Self {
        let mut spec = ToolSpec::new(
            record.name.clone(),
            record.description.clone(),
            record.input_schema.clone(),
        )
        .with_kind(record.class.kind)
        .with_policy(record.class.policy)
        .with_side_effect(record.class.side_effect);
        if let Some(schema) = record
            .output_schema
            .as_ref()
            .filter(|s| is_object_schema(s))
        {
            spec = spec.with_output_schema(schema.clone());
        }
        if listing == Listing::Hidden {
            spec = spec.hidden();
        }
        Self {
            spec,
            record,
            access,
            link,
        }
    }

    /// The record this tool was built from.
    #[must_use]
    pub fn record(&self) -> &McpToolRecord {
        &self.record
    }
}

/// Whether a declared output schema describes an object (`"type": "object"`), the only kind
/// MCP clients before 2026-07-28 accept; any other is not passed on.
fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The error result for a server the turn may not use.
pub(crate) fn access_denied(
    access: &ServerAccess,
    server: &str,
    roots: &[PathBuf],
) -> Option<ToolResult> {
    let workspace = roots.first().map(PathBuf::as_path);
    let denied = access.check(workspace).err()?;
    let mut result = ToolResult::tool_error(access.explain(denied, server, workspace));
    if let Value::Object(map) = &mut result.output {
        map.insert("mcp_access".to_owned(), json!(denied.as_str()));
        map.insert("server".to_owned(), json!(server));
    }
    Some(result)
}

/// The arguments as a JSON object (`null` counts as no arguments).
pub(crate) fn object_arguments(
    arguments: Value,
    tool: &str,
) -> Result<Map<String, Value>, ToolResult> {
    match arguments {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        other => Err(ToolResult::failure(
            ErrorCode::InvalidArguments,
            format!(
                "the arguments of `{tool}` must be a JSON object, not {}",
                match other {
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    _ => "a boolean",
                }
            ),
        )),
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn should_advertise(&self, ctx: &ToolHostContext) -> bool {
        self.access.check_context(ctx).is_ok()
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        let server = &self.record.address.server;
        if let Some(denied) = access_denied(&self.access, server, ctx.turn.workspace_roots) {
            return Ok(denied);
        }
        let arguments = match object_arguments(arguments, &self.spec.name) {
            Ok(map) => map,
            Err(result) => return Ok(result),
        };
        let structured = if self.spec.output_schema.is_some() {
            Structured::Declared
        } else {
            Structured::Undeclared
        };
        Ok(self
            .link
            .call(
                &self.record.address.tool,
                arguments,
                structured,
                ctx.turn.abort,
            )
            .await)
    }
}
