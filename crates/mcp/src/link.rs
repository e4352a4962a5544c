//! The line from a tool to its server's current connection. It outlives reconnects: tools
//! registered (or pinned by a turn) before a server restarted reach the new connection.
//!
//! Every failure of a call is an error **result** the model can read, never a hang:
//!
//! | what happened | result |
//! |---|---|
//! | the server is down or reconnecting | `{error}`, saying it is reconnecting |
//! | no answer within the call timeout | `tool_timeout` (the request is cancelled) |
//! | the server died while the call ran | `tool_execution_failed`, effects unknown |
//! | the server rejected the arguments (`-32602`) | `invalid_arguments` |
//! | another protocol error | `tool_execution_failed` with the MCP error |
//! | the tool answered `isError: true` | `tool_execution_failed`: its text as the message, its blocks as the content |
//! | the tool declared an output schema but sent no `structuredContent` | `tool_execution_failed` naming the server's mistake, its blocks as the content |
//!
//! A successful answer keeps both views ([`ToolResult`]): `content` holds the server's blocks
//! as they came ([`crate::content`]: text, images, audio, resource links), and `output` holds
//! its `structuredContent` when it sent one, else `{server, tool, content}` with the blocks as
//! MCP JSON (for `kun-tools call` and hooks).

use crate::connection::seconds;
use crate::content;
use kun_ports::{AbortSignal, ContentBlock, ErrorCode, ToolResult};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::ServiceError;
use rmcp::{Peer, RoleClient};
use serde_json::{Map, Value, json};
use std::sync::{PoisonError, RwLock};
use std::time::Duration;

/// JSON-RPC "invalid params".
const INVALID_PARAMS: i32 = -32602;

enum LinkState {
    Up(Peer<RoleClient>),
    Down(String),
}

/// Whether a tool promised `structuredContent` (it declared an output schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Structured {
    /// Declared: a successful answer must carry it.
    Declared,
    /// Not declared: it may or may not come.
    Undeclared,
}

/// One server's current connection, shared by all its tools.
pub(crate) struct ServerLink {
    server: String,
    call_timeout: Duration,
    state: RwLock<LinkState>,
}

impl ServerLink {
    pub(crate) fn new(server: &str, call_timeout: Duration) -> Self {
        Self {
            server: server.to_owned(),
            call_timeout,
            state: RwLock::new(LinkState::Down("the server has not started yet".to_owned())),
        }
    }

    pub(crate) fn set_up(&self, peer: Peer<RoleClient>) {
        *self.state.write().unwrap_or_else(PoisonError::into_inner) = LinkState::Up(peer);
    }

    pub(crate) fn set_down(&self, reason: impl Into<String>) {
        *self.state.write().unwrap_or_else(PoisonError::into_inner) =
            LinkState::Down(reason.into());
    }

    fn peer(&self) -> Result<Peer<RoleClient>, String> {
        match &*self.state.read().unwrap_or_else(PoisonError::into_inner) {
            LinkState::Up(peer) => Ok(peer.clone()),
            LinkState::Down(reason) => Err(reason.clone()),
        }
    }

    /// Calls `tool` (its original name) with `arguments`; see the module table.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
        structured: Structured,
        abort: &AbortSignal,
    ) -> ToolResult {
        let peer = match self.peer() {
            Ok(peer) => peer,
            Err(reason) => {
                return ToolResult::failure(
                    ErrorCode::ToolExecutionFailed,
                    format!(
                        "MCP server `{}` is not connected ({reason}). Try again shortly, or use another tool.",
                        self.server
                    ),
                );
            }
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let request = tokio::time::timeout(self.call_timeout, peer.call_tool(params));
        // Dropping the request (timeout or abort) sends `notifications/cancelled`.
        let outcome = tokio::select! {
            outcome = request => outcome,
            () = abort.aborted() => {
                return ToolResult::tool_error(format!(
                    "the call to `{tool}` on MCP server `{}` was aborted",
                    self.server
                ));
            }
        };
        match outcome {
            Err(_) => ToolResult::failure(
                ErrorCode::ToolTimeout,
                format!(
                    "MCP tool `{tool}` on server `{}` did not answer within {}; the request was cancelled. Its effects, if any, are unknown.",
                    self.server,
                    seconds(self.call_timeout)
                ),
            ),
            Ok(Ok(result)) => self.convert(tool, result, structured),
            Ok(Err(err)) => self.service_error(tool, &err),
        }
    }

    fn service_error(&self, tool: &str, err: &ServiceError) -> ToolResult {
        let server = &self.server;
        match err {
            ServiceError::McpError(data) if data.code.0 == INVALID_PARAMS => {
                let mut details = Map::new();
                details.insert(
                    "mcp_error".to_owned(),
                    json!({"code": data.code.0, "message": data.message}),
                );
                ToolResult::failure_with(
                    ErrorCode::InvalidArguments,
                    format!(
                        "MCP server `{server}` rejected the arguments of `{tool}`: {}",
                        data.message
                    ),
                    details,
                )
            }
            ServiceError::McpError(data) => {
                let mut details = Map::new();
                details.insert(
                    "mcp_error".to_owned(),
                    json!({"code": data.code.0, "message": data.message}),
                );
                ToolResult::failure_with(
                    ErrorCode::ToolExecutionFailed,
                    format!(
                        "MCP server `{server}` answered `{tool}` with an error: {}",
                        data.message
                    ),
                    details,
                )
            }
            ServiceError::TransportClosed
            | ServiceError::TransportSend(_)
            | ServiceError::Cancelled { .. } => ToolResult::failure(
                ErrorCode::ToolExecutionFailed,
                format!(
                    "MCP server `{server}` went away while `{tool}` was running; its effects are unknown. The server is being restarted: check the outcome before calling again."
                ),
            ),
            other => ToolResult::failure(
                ErrorCode::ToolExecutionFailed,
                format!("calling `{tool}` on MCP server `{server}` failed: {other}"),
            ),
        }
    }

    /// The server's answer as a result (see the module docs).
    fn convert(&self, tool: &str, result: CallToolResult, structured: Structured) -> ToolResult {
        let server = &self.server;
        let blocks = content::blocks(&result.content);
        let mut identity = Map::new();
        identity.insert("server".to_owned(), Value::String(server.clone()));
        identity.insert("tool".to_owned(), Value::String(tool.to_owned()));
        if result.is_error == Some(true) {
            let text = blocks
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect::<Vec<_>>()
                .join("\n");
            let message = if text.trim().is_empty() {
                format!(
                    "MCP tool `{tool}` on server `{server}` reported an error without a message"
                )
            } else {
                text
            };
            if let Some(value) = result.structured_content {
                identity.insert("structured_content".to_owned(), value);
            }
            return failure_with_blocks(message, identity, blocks);
        }
        match (result.structured_content, structured) {
            (Some(value), _) => ToolResult::ok(value).with_content(blocks),
            (None, Structured::Declared) => failure_with_blocks(
                format!(
                    "MCP server `{server}` declared an output schema for `{tool}` but its \
                     answer carries no structured content (a mistake of the server); what it \
                     sent is shown as it came"
                ),
                identity,
                blocks,
            ),
            (None, Structured::Undeclared) => {
                let json =
                    serde_json::to_value(&result.content).unwrap_or(Value::Array(Vec::new()));
                identity.insert("content".to_owned(), json);
                ToolResult::ok(Value::Object(identity)).with_content(blocks)
            }
        }
    }
}

/// A `tool_execution_failed` result whose content is the server's blocks, led by the message
/// when they hold no text of their own.
fn failure_with_blocks(
    message: String,
    details: Map<String, Value>,
    mut blocks: Vec<ContentBlock>,
) -> ToolResult {
    if !blocks.iter().any(|b| b.as_text().is_some()) {
        blocks.insert(0, ContentBlock::text(message.clone()));
    }
    ToolResult::failure_with(ErrorCode::ToolExecutionFailed, message, details).with_content(blocks)
}
