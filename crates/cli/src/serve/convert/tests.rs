use super::*;
use kun_ports::ToolPolicy;

fn spec_with_output() -> ToolSpec {
    ToolSpec::new("read", "Reads.", json!({"type": "object"})).with_output_schema(json!({
        "type": "object",
        "properties": {"lines": {"type": "integer"}},
        "required": ["lines"]
    }))
}

fn text_of(result: &CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|b| b.as_text().map(|t| t.text.clone()))
        .collect()
}

#[test]
fn a_success_sends_its_rendering_and_its_output_where_declared() {
    let rendered = ToolResult::ok(json!({"lines": 2})).with_text("   1│alpha\n   2│beta");
    let spec = spec_with_output();
    let table = [
        // (spec, structured, structuredContent expected)
        (Some(&spec), Structured::Sent, Some(json!({"lines": 2}))),
        (Some(&spec), Structured::Omitted, None),
        (None, Structured::Sent, None),
        (None, Structured::Omitted, None),
    ];
    for (spec, structured, want) in table {
        let result = call_result(rendered.clone(), spec, structured);
        assert_eq!(result.is_error, Some(false));
        assert_eq!(text_of(&result), ["   1│alpha\n   2│beta"]);
        assert_eq!(result.structured_content, want, "{structured:?}");
    }
    // A tool without a rendering: its output, rendered generically, is the text.
    let plain = call_result(ToolResult::ok(json!("plain")), None, Structured::Sent);
    assert_eq!(text_of(&plain), ["plain"]);
    assert_eq!(plain.structured_content, None);
}

#[test]
fn an_error_is_plain_words_and_keeps_its_code_where_structured() {
    let failure = ToolResult::failure(kun_ports::ErrorCode::ApprovalDenied, "the user said no");
    let sent = call_result(failure.clone(), Some(&spec_with_output()), Structured::Sent);
    assert_eq!(sent.is_error, Some(true));
    assert_eq!(text_of(&sent), ["the user said no"]);
    assert_eq!(
        sent.structured_content,
        Some(json!({"code": "approval_denied", "error": "the user said no"}))
    );
    // Also for a tool without an output schema: programs read the code.
    let undeclared = call_result(failure.clone(), None, Structured::Sent);
    assert_eq!(
        undeclared.structured_content.unwrap()["code"],
        "approval_denied"
    );
    let omitted = call_result(failure, None, Structured::Omitted);
    assert_eq!(omitted.structured_content, None);
    assert_eq!(text_of(&omitted), ["the user said no"]);
}

#[test]
fn media_blocks_pass_as_mcp_blocks() {
    let result = ToolResult::ok(json!({})).with_content(vec![
        ContentBlock::text("a screenshot"),
        ContentBlock::image("iVBORw0KGgo=", "image/png"),
        ContentBlock::audio("UklGRg==", "audio/wav"),
        ContentBlock::ResourceLink {
            uri: "file:///ws/out.mp4".into(),
            name: "out.mp4".into(),
            mime_type: Some("video/mp4".into()),
            description: None,
        },
    ]);
    let converted = call_result(result, None, Structured::Sent);
    let json = serde_json::to_value(&converted.content).unwrap();
    assert_eq!(
        json,
        json!([
            {"type": "text", "text": "a screenshot"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///ws/out.mp4", "name": "out.mp4", "mimeType": "video/mp4"}
        ])
    );
}

struct Fixed(ToolSpec);

#[async_trait::async_trait]
impl kun_ports::Tool for Fixed {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn execute<'a>(
        &self,
        _arguments: Value,
        _ctx: kun_ports::ToolContext<'a>,
    ) -> Result<ToolResult, kun_ports::ToolError> {
        Ok(ToolResult::ok(json!({})))
    }
}

fn descriptor(spec: ToolSpec) -> ToolDescriptor {
    ToolDescriptor::new(Arc::new(Fixed(spec)), "builtin", ProviderKind::BuiltIn)
}

#[test]
fn output_schemas_are_advertised_only_to_structured_clients() {
    let read = descriptor(spec_with_output().with_policy(ToolPolicy::Auto));
    assert_eq!(
        mcp_tool(&read, Structured::Sent)
            .output_schema
            .map(|s| s["type"].clone()),
        Some(json!("object"))
    );
    assert!(mcp_tool(&read, Structured::Omitted).output_schema.is_none());
    // MCP (before 2026-07-28) takes object schemas only.
    let odd = descriptor(
        ToolSpec::new("odd", "", json!({"type": "object"}))
            .with_output_schema(json!({"type": "array"})),
    );
    assert!(mcp_tool(&odd, Structured::Sent).output_schema.is_none());
    assert!(read.tool().spec().output_schema.is_some());
}

#[test]
fn refusals_are_invalid_params_and_unsupported_methods_are_named() {
    let err = host_error(&HostError::UnknownTool {
        name: "teleport".to_owned(),
    });
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("teleport"));
    let err = unsupported::<rmcp::model::ListPromptsRequestMethod>();
    assert_eq!(err.code, ErrorCode::METHOD_NOT_FOUND);
    assert!(err.message.contains("`prompts/list`"), "{}", err.message);
    assert!(err.message.contains("tools/call"), "{}", err.message);
}
