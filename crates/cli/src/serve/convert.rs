//! Our vocabulary → MCP's: catalog entries to tools, results to `CallToolResult`, refusals
//! to JSON-RPC errors.
//!
//! | ours | MCP |
//! |---|---|
//! | `input_schema` | `inputSchema` (an object schema; anything else becomes `{"type": "object"}`) |
//! | `side_effect = read-only` | `readOnlyHint: true` |
//! | kind `file_change` / `command_execution`, not read-only | `destructiveHint: true` |
//! | provider kind `mcp` / `web` | `openWorldHint: true` |
//! | result `output` | `structuredContent` (a non-object wrapped as `{"value": …}`) |
//! | result content (`model_content`) | `content`: text, image and audio blocks, resource links (a generated video) |
//! | result `is_error` | `isError` |
//! | `Err(UnknownTool / NotAdvertised / DisabledByPolicy)` | JSON-RPC `-32602` invalid params |
//! | `Err(Aborted)` | JSON-RPC `-32603` internal error (the client cancelled the call) |

use kun_ports::{
    ContentBlock, HostError, NotAdvertisedReason, ProviderKind, SideEffect, ToolDescriptor,
    ToolKind, ToolResult,
};
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject, Resource, Tool, ToolAnnotations};
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
/// the blocks the model reads ([`ToolResult::model_content`]: the tool's text, image, audio
/// and resource-link blocks, or one text block), `isError` mirrors.
#[must_use]
pub fn call_result(result: ToolResult) -> CallToolResult {
    let content: Vec<rmcp::model::ContentBlock> = result
        .model_content()
        .into_iter()
        .map(content_block)
        .collect();
    let structured = match result.output {
        Value::Object(_) => result.output,
        other => json!({ "value": other }),
    };
    let mut converted = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    converted.structured_content = Some(structured);
    converted
}

/// One of our content blocks as MCP's.
#[must_use]
pub fn content_block(block: ContentBlock) -> rmcp::model::ContentBlock {
    match block {
        ContentBlock::Text { text } => rmcp::model::ContentBlock::text(text),
        ContentBlock::Image { data, mime_type } => {
            rmcp::model::ContentBlock::image(data, mime_type)
        }
        ContentBlock::Audio { data, mime_type } => {
            rmcp::model::ContentBlock::audio(data, mime_type)
        }
        ContentBlock::ResourceLink {
            uri,
            name,
            mime_type,
            description,
        } => {
            let mut resource = Resource::new(uri, name);
            if let Some(mime_type) = mime_type {
                resource = resource.with_mime_type(mime_type);
            }
            if let Some(description) = description {
                resource = resource.with_description(description);
            }
            rmcp::model::ContentBlock::resource_link(resource)
        }
    }
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
    fn media_blocks_reach_the_client_as_mcp_content() {
        let result = call_result(ToolResult {
            output: json!({"path": "/data/a.png"}),
            is_error: false,
            content: vec![
                ContentBlock::text("1280x800 (scale 0.5)"),
                ContentBlock::image("aGk=", "image/png"),
                ContentBlock::audio("d2F2", "audio/wav"),
                ContentBlock::ResourceLink {
                    uri: "file:///data/v.mp4".to_owned(),
                    name: "v.mp4".to_owned(),
                    mime_type: Some("video/mp4".to_owned()),
                    description: None,
                },
            ],
        });
        let wire = serde_json::to_value(&result.content).unwrap();
        assert_eq!(
            wire[0],
            json!({"type": "text", "text": "1280x800 (scale 0.5)"})
        );
        assert_eq!(
            wire[1],
            json!({"type": "image", "data": "aGk=", "mimeType": "image/png"})
        );
        assert_eq!(
            wire[2],
            json!({"type": "audio", "data": "d2F2", "mimeType": "audio/wav"})
        );
        assert_eq!(wire[3]["type"], "resource_link");
        assert_eq!(wire[3]["uri"], "file:///data/v.mp4");
        assert_eq!(wire[3]["mimeType"], "video/mp4");
        assert_eq!(
            result.structured_content,
            Some(json!({"path": "/data/a.png"}))
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
