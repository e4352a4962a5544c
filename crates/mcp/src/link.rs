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
//! | the tool answered `isError: true` | the tool's content, `is_error` |

use crate::connection::seconds;
use kun_ports::{AbortSignal, ErrorCode, ToolResult};
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
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
            Ok(Ok(result)) => self.convert(tool, result),
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

    /// `{server, tool, content, structured_content?}`; on `isError`, also `error` (the text).
    fn convert(&self, tool: &str, result: CallToolResult) -> ToolResult {
        let is_error = result.is_error == Some(true);
        let text: Vec<&str> = result
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .map(|t| t.text.as_str())
            .collect();
        let error_text = is_error.then(|| text.join("\n"));
        let mut output = Map::new();
        output.insert("server".to_owned(), Value::String(self.server.clone()));
        output.insert("tool".to_owned(), Value::String(tool.to_owned()));
        let content = serde_json::to_value(&result.content).unwrap_or(Value::Array(Vec::new()));
        output.insert("content".to_owned(), content);
        if let Some(structured) = result.structured_content {
            output.insert("structured_content".to_owned(), structured);
        }
        if let Some(message) = error_text {
            let message = if message.trim().is_empty() {
                format!("MCP tool `{tool}` reported an error without a message")
            } else {
                message
            };
            output.insert("error".to_owned(), Value::String(message));
        }
        ToolResult {
            output: Value::Object(output),
            is_error,
            content: Vec::new(),
        }
    }
}
