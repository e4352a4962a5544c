//! Our vocabulary → MCP's: catalog entries to tools, results to `CallToolResult`, refusals
//! to JSON-RPC errors.
//!
//! | ours | MCP |
//! |---|---|
//! | `input_schema` | `inputSchema` (an object schema; anything else becomes `{"type": "object"}`) |
//! | `output_schema` (an object schema), when [`Structured::Sent`] | `outputSchema` |
//! | `side_effect = read-only` | `readOnlyHint: true` |
//! | kind `file_change` / `command_execution`, not read-only | `destructiveHint: true` |
//! | provider kind `mcp` / `web` | `openWorldHint: true` |
//! | the result's content blocks ([`ToolResult::model_content`]: the tool's rendering, its media, or the output rendered generically) | `content`: `text`, `image`, `audio`, `resource_link` blocks |
//! | a success's `output`, when the tool declares an output schema and [`Structured::Sent`] | `structuredContent` |
//! | an error's `output` (`{code, error, …}`), when [`Structured::Sent`] | `structuredContent` (the text block is the message in plain words) |
//! | result `is_error` | `isError` |
//! | `Err(UnknownTool / NotAdvertised / DisabledByPolicy)` | JSON-RPC `-32602` invalid params |
//! | `Err(Aborted)` | JSON-RPC `-32603` internal error (the client cancelled the call) |
//! | a method `serve` does not offer (`prompts/list`, `resources/read`, …) | JSON-RPC `-32601` naming the method ([`unsupported`]) |

use crate::serve::options::Structured;
use kun_ports::{
    ContentBlock, HostError, NotAdvertisedReason, ProviderKind, SideEffect, ToolDescriptor,
    ToolKind, ToolResult, ToolSpec,
};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ConstString, ErrorCode, JsonObject, Resource, Tool, ToolAnnotations,
};
use serde_json::{Value, json};
use std::sync::Arc;

/// A catalog entry as an MCP tool; its `outputSchema` only when `structured` is sent.
#[must_use]
pub fn mcp_tool(descriptor: &ToolDescriptor, structured: Structured) -> Tool {
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
        descriptor.provider_kind(),
        ProviderKind::Mcp | ProviderKind::Web
    );
    let annotations = ToolAnnotations::new()
        .read_only(read_only)
        .destructive(changes && !read_only)
        .open_world(open_world);
    let tool = Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema),
    )
    .with_annotations(annotations);
    match (structured, output_schema(spec)) {
        (Structured::Sent, Some(schema)) => tool.with_raw_output_schema(Arc::new(schema.clone())),
        _ => tool,
    }
}

/// The tool's output schema, when it is one MCP accepts (an object schema).
fn output_schema(spec: &ToolSpec) -> Option<&JsonObject> {
    match &spec.output_schema {
        Some(Value::Object(map)) if map.get("type") == Some(&Value::from("object")) => Some(map),
        _ => None,
    }
}

/// A pipeline result as an MCP result (see the module table). `spec` is the called tool's,
/// when it is still registered.
#[must_use]
pub fn call_result(
    result: ToolResult,
    spec: Option<&ToolSpec>,
    structured: Structured,
) -> CallToolResult {
    let content = result.model_content().into_iter().map(mcp_block).collect();
    let declares_output = spec.is_some_and(|spec| output_schema(spec).is_some());
    let structured_content = match structured {
        Structured::Omitted => None,
        Structured::Sent if result.is_error || declares_output => match result.output {
            Value::Object(map) => Some(Value::Object(map)),
            _ => None,
        },
        Structured::Sent => None,
    };
    let mut converted = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    converted.structured_content = structured_content;
    converted
}

/// One of our content blocks as MCP's.
fn mcp_block(block: ContentBlock) -> rmcp::model::ContentBlock {
    use rmcp::model::ContentBlock as Mcp;
    match block {
        ContentBlock::Text { text } => Mcp::text(text),
        ContentBlock::Image { data, mime_type } => Mcp::image(data, mime_type),
        ContentBlock::Audio { data, mime_type } => Mcp::audio(data, mime_type),
        ContentBlock::ResourceLink {
            uri,
            name,
            mime_type,
            description,
        } => {
            let mut resource = Resource::new(uri, name);
            resource.mime_type = mime_type;
            resource.description = description;
            Mcp::resource_link(resource)
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

/// `-32601` for a method `serve` does not offer, naming it.
#[must_use]
pub fn unsupported<M: ConstString>() -> ErrorData {
    unsupported_method(M::VALUE)
}

/// `-32601` for the method called `method`.
#[must_use]
pub fn unsupported_method(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "kun-tools does not support `{method}`: it serves tools only (tools/list and \
             tools/call)"
        ),
        Some(json!({"method": method})),
    )
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
mod tests;
