//! Steps 17 and 18: rate-limit normalisation for network-backed tools, hook context, and
//! spilling large outputs to the artifact store.

use super::Host;
use crate::canonical::canonical_len;
use kun_ports::{ContentBlock, OperationKey, ToolDescriptor, ToolResult};
use serde_json::{Map, Value};

/// How much of a spilled output stays inline as a preview.
pub const ARTIFACT_PREVIEW_BYTES: usize = 2048;

/// Step 17: only tools of network-backed providers (MCP, web, media) have their output
/// checked for rate limiting. A local file that says "too many requests" is just a file.
pub(crate) fn normalize_rate_limit(tool: &ToolDescriptor, result: ToolResult) -> ToolResult {
    if tool.provider_kind().is_network_backed() {
        crate::rate_limit::normalise_rate_limit(result)
    } else {
        result
    }
}

/// Adds the hooks' extra context for the model to the result: an `additional_context`
/// field of an object output, or a wrapper `{output, additional_context}` around any other.
pub(crate) fn attach_context(mut result: ToolResult, context: Vec<String>) -> ToolResult {
    if context.is_empty() {
        return result;
    }
    if !result.content.is_empty() {
        let mut text = String::from("additional context:");
        for note in &context {
            text.push_str("\n- ");
            text.push_str(note);
        }
        result.content.push(ContentBlock::text(text));
    }
    let notes = Value::from(context);
    match &mut result.output {
        Value::Object(map) => {
            map.insert("additional_context".to_owned(), notes);
        }
        other => {
            let mut map = Map::new();
            map.insert("output".to_owned(), other.take());
            map.insert("additional_context".to_owned(), notes);
            result.output = Value::Object(map);
        }
    }
    result
}

impl Host {
    /// Step 18 (second part): a successful output larger than the threshold goes to the
    /// artifact store; the model gets `{artifact_id, byte_size, line_count, truncated, preview}`.
    /// When the store fails the output stays inline (and a warning is logged).
    pub(crate) fn spill_large_output(
        &self,
        operation: &OperationKey,
        result: ToolResult,
    ) -> ToolResult {
        let Some(store) = &self.artifacts else {
            return result;
        };
        if result.is_error {
            return result;
        }
        // What the model would read: the tool's rendering when it has one, else the output.
        let rendered = (!result.content.is_empty()).then(|| result.model_text());
        let size = match (&rendered, &result.output) {
            (Some(text), _) | (None, Value::String(text)) => text.len(),
            (None, other) => canonical_len(other),
        };
        if size <= self.artifact_threshold {
            return result;
        }
        let text = match (rendered, &result.output) {
            (Some(text), _) => text,
            (None, Value::String(text)) => text.clone(),
            (None, other) => serde_json::to_string_pretty(other).unwrap_or_default(),
        };
        let name_hint = format!("{}-{}", operation.tool_name, operation.call_id);
        match store.put(&name_hint, text.as_bytes()) {
            Ok(artifact) => {
                let mut map = Map::new();
                map.insert("artifact_id".to_owned(), Value::from(artifact.id));
                map.insert("byte_size".to_owned(), Value::from(artifact.byte_size));
                map.insert("line_count".to_owned(), Value::from(text.lines().count()));
                map.insert("truncated".to_owned(), Value::Bool(true));
                map.insert("preview".to_owned(), Value::from(preview(&text)));
                if let Some(path) = artifact.path {
                    map.insert(
                        "path".to_owned(),
                        Value::from(path.to_string_lossy().into_owned()),
                    );
                }
                let text = format!(
                    "{}\n… output too large ({} bytes, {} lines): the whole of it is artifact {}",
                    preview(&text),
                    artifact.byte_size,
                    text.lines().count(),
                    map.get("path")
                        .and_then(Value::as_str)
                        .map_or_else(|| map["artifact_id"].to_string(), str::to_owned)
                );
                ToolResult::ok(Value::Object(map)).with_text(text)
            }
            Err(error) => {
                tracing::warn!(tool = %operation.tool_name, "output kept inline: {error}");
                result
            }
        }
    }
}

/// The first [`ARTIFACT_PREVIEW_BYTES`] of `text`, cut at a character boundary.
fn preview(text: &str) -> &str {
    if text.len() <= ARTIFACT_PREVIEW_BYTES {
        return text;
    }
    let mut end = ARTIFACT_PREVIEW_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn preview_cuts_at_a_char_boundary() {
        let text = "é".repeat(ARTIFACT_PREVIEW_BYTES);
        let cut = preview(&text);
        assert!(cut.len() <= ARTIFACT_PREVIEW_BYTES);
        assert!(cut.chars().all(|c| c == 'é'));
        assert_eq!(preview("short"), "short");
    }

    #[test]
    fn context_goes_into_objects_or_wraps_others() {
        let r = attach_context(ToolResult::ok(json!({"a": 1})), vec!["note".into()]);
        assert_eq!(r.output, json!({"a": 1, "additional_context": ["note"]}));
        let r = attach_context(ToolResult::ok(json!("text")), vec!["note".into()]);
        assert_eq!(
            r.output,
            json!({"output": "text", "additional_context": ["note"]})
        );
        let r = attach_context(ToolResult::ok(json!("text")), vec![]);
        assert_eq!(r.output, json!("text"));
    }
}
