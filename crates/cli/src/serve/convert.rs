//! Our vocabulary → MCP's: catalog entries to tools, results to `CallToolResult`, refusals
//! to JSON-RPC errors.
//!
//! | ours | MCP |
//! |---|---|
//! | `input_schema` | `inputSchema` (an object schema; anything else becomes `{"type": "object"}`) |
//! | `side_effect = read-only` | `readOnlyHint: true` |
//! | kind `file_change` / `command_execution`, not read-only | `destructiveHint: true` |
//! | provider kind `mcp` / `web` | `openWorldHint: true` |
//! | result `output` | `structuredContent` (a non-object wrapped as `{"value": …}`), and one text block with the same JSON |
//! | result `is_error` | `isError` |
//! | `Err(UnknownTool / NotAdvertised / DisabledByPolicy)` | JSON-RPC `-32602` invalid params |
//! | `Err(Aborted)` | JSON-RPC `-32603` internal error (the client cancelled the call) |

use kun_ports::{
    HostError, NotAdvertisedReason, ProviderKind, SideEffect, ToolDescriptor, ToolKind, ToolResult,
};
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::Arc;

/// A catalog entry as an MCP tool.
#[must_use]
pub fn mcp_tool(descriptor: &ToolDescriptor) -> Tool {
    let spec = descriptor.spec();
    let schema: JsonObject = match &spec.input_schema {
        Value::Object(map) => map.clone(),
        _ => {
            let mut map = JsonObject::new();
            map.insert("type".to_owned(), Value::from("object"));
            map
        }
    };
    let read_only = spec.side_effect == SideEffect::ReadOnly;
    let changes = matches!(spec.kind, ToolKind::FileChange | ToolKind::CommandExecution);
    let open_world = matches!(
        descriptor.provider_kind,
        ProviderKind::Mcp | ProviderKind::Web
    );
    let annotations = ToolAnnotations::new()
        .read_only(read_only)
        .destructive(changes && !read_only)
        .open_world(open_world);
    Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema),
    )
    .with_annotations(annotations)
}

/// A pipeline result as an MCP result: `structuredContent` is the output object, `content`
/// one text block with the same JSON, `isError` mirrors.
#[must_use]
pub fn call_result(result: ToolResult) -> CallToolResult {
    let text = result.model_text();
    let structured = match result.output {
        Value::Object(_) => result.output,
        other => json!({ "value": other }),
    };
    let mut converted = if result.is_error {
        CallToolResult::error(vec![rmcp::model::ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![rmcp::model::ContentBlock::text(text)])
    };
    converted.structured_content = Some(structured);
    converted
}

/// A refusal (`Err` from the host) as a JSON-RPC error.
#[must_use]
pub fn host_error(err: &HostError) -> ErrorData {
    match err {
        HostError::UnknownTool { name } => ErrorData::invalid_params(
            format!(
                "unknown tool `{name}`: it is not in tools/list; list the tools and call one of them"
            ),
            Some(json!({"tool": name, "reason": "unknown_tool"})),
        ),
        HostError::NotAdvertised { name, reason } => ErrorData::invalid_params(
            format!(
                "tool `{name}` is not offered under the current configuration: {}; call a \
                 tool from tools/list",
                why_not_advertised(*reason)
            ),
            Some(json!({"tool": name, "reason": "not_advertised"})),
        ),
        HostError::DisabledByPolicy { name } => ErrorData::invalid_params(
            format!("tool `{name}` is disabled by its own policy (never) and cannot be called"),
            Some(json!({"tool": name, "reason": "disabled_by_policy"})),
        ),
        HostError::Aborted { stage } => ErrorData::internal_error(
            format!("the call was cancelled ({stage:?}) before it produced a result"),
            Some(json!({"reason": "aborted"})),
        ),
    }
}

fn why_not_advertised(reason: NotAdvertisedReason) -> &'static str {
    match reason {
        NotAdvertisedReason::WrongProvider => "another provider serves that name",
        NotAdvertisedReason::Provider => "its provider is off, unavailable or blocked",
        NotAdvertisedReason::ToolPolicy => "the allow/deny lists or plan mode exclude it",
        NotAdvertisedReason::Context => "the tool declines this context",
        NotAdvertisedReason::Sandbox => "the sandbox mode blocks it",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_object_outputs_are_wrapped_and_text_mirrors_them() {
        let result = call_result(ToolResult::ok(json!("plain")));
        assert_eq!(result.structured_content, Some(json!({"value": "plain"})));
        assert_eq!(result.is_error, Some(false));
        let text = result.content[0].as_text().map(|t| t.text.clone());
        assert_eq!(text.as_deref(), Some("plain"));

        let failure = call_result(ToolResult {
            output: json!({"code": "approval_denied", "error": "no"}),
            is_error: true,
            content: Vec::new(),
        });
        assert_eq!(failure.is_error, Some(true));
        assert_eq!(
            failure.structured_content,
            Some(json!({"code": "approval_denied", "error": "no"}))
        );
    }

    #[test]
    fn refusals_are_invalid_params() {
        let err = host_error(&HostError::UnknownTool {
            name: "teleport".to_owned(),
        });
        assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(err.message.contains("teleport"));
    }
}
