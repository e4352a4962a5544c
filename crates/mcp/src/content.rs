//! What an MCP server's result becomes: its content blocks, as the model should read them.
//!
//! Blocks pass through as they came, so `kun-tools serve` can hand them on unchanged: a
//! screenshot stays an image, a generated clip stays audio.
//!
//! | MCP block | our [`ContentBlock`] |
//! |---|---|
//! | `text` | `text` |
//! | `image` | `image` (base64 and media type unchanged) |
//! | `audio` | `audio` |
//! | `resource_link` | `resource_link` (uri, name, media type, description) |
//! | `resource` with `text` | `text`: a `[resource <uri>]` line, then the text |
//! | `resource` with an `image/*` or `audio/*` blob | `image` / `audio` |
//! | `resource` with another blob | `text`: `[resource <uri> (<type>, N bytes) not shown]` |
//!
//! Embedded resources are unwrapped because a client of `serve` cannot read them back: `serve`
//! offers no `resources/read`. Annotations and `_meta` are dropped.

use kun_ports::ContentBlock;
use rmcp::model::{ContentBlock as McpBlock, ResourceContents};

/// Converts a server's blocks, in order.
pub(crate) fn blocks(content: &[McpBlock]) -> Vec<ContentBlock> {
    content.iter().map(block).collect()
}

fn block(block: &McpBlock) -> ContentBlock {
    match block {
        McpBlock::Text(text) => ContentBlock::text(text.text.clone()),
        McpBlock::Image(image) => ContentBlock::image(image.data.clone(), image.mime_type.clone()),
        McpBlock::Audio(audio) => ContentBlock::audio(audio.data.clone(), audio.mime_type.clone()),
        McpBlock::ResourceLink(link) => ContentBlock::ResourceLink {
            uri: link.uri.clone(),
            name: link.name.clone(),
            mime_type: link.mime_type.clone(),
            description: link.description.clone(),
        },
        McpBlock::Resource(embedded) => resource(&embedded.resource),
        // A block kind newer than this crate: say so rather than dropping it silently.
        #[allow(unreachable_patterns, reason = "rmcp's ContentBlock is non_exhaustive")]
        other => ContentBlock::text(format!(
            "[a content block kun-tools cannot show: {}]",
            serde_json::to_value(other)
                .ok()
                .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
                .unwrap_or_else(|| "unknown".to_owned())
        )),
    }
}

fn resource(contents: &ResourceContents) -> ContentBlock {
    match contents {
        ResourceContents::TextResourceContents { uri, text, .. } => {
            ContentBlock::text(format!("[resource {uri}]\n{text}"))
        }
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            ..
        } => {
            let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
            if mime.starts_with("image/") {
                ContentBlock::image(blob.clone(), mime)
            } else if mime.starts_with("audio/") {
                ContentBlock::audio(blob.clone(), mime)
            } else {
                // Base64: four characters carry three bytes.
                let bytes = blob.trim_end_matches('=').len() * 3 / 4;
                ContentBlock::text(format!(
                    "[resource {uri} ({mime}, {bytes} bytes) not shown]"
                ))
            }
        }
        #[allow(
            unreachable_patterns,
            reason = "rmcp's ResourceContents is non_exhaustive"
        )]
        _ => ContentBlock::text("[an embedded resource kun-tools cannot show]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Resource;

    #[test]
    fn every_kind_of_block_passes_as_the_table_says() {
        let link = Resource::new("file:///ws/report.pdf", "report.pdf")
            .with_mime_type("application/pdf")
            .with_description("the weekly report");
        let table = [
            (McpBlock::text("hello"), ContentBlock::text("hello")),
            (
                McpBlock::image("iVBORw0KGgo=", "image/png"),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ),
            (
                McpBlock::audio("UklGRg==", "audio/wav"),
                ContentBlock::audio("UklGRg==", "audio/wav"),
            ),
            (
                McpBlock::resource_link(link),
                ContentBlock::ResourceLink {
                    uri: "file:///ws/report.pdf".into(),
                    name: "report.pdf".into(),
                    mime_type: Some("application/pdf".into()),
                    description: Some("the weekly report".into()),
                },
            ),
            (
                McpBlock::embedded_text("memo://1", "buy milk"),
                ContentBlock::text("[resource memo://1]\nbuy milk"),
            ),
            (
                McpBlock::resource(
                    ResourceContents::blob("iVBORw0KGgo=", "shot://1").with_mime_type("image/png"),
                ),
                ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ),
            (
                McpBlock::resource(
                    ResourceContents::blob("UklGRg==", "clip://1").with_mime_type("audio/wav"),
                ),
                ContentBlock::audio("UklGRg==", "audio/wav"),
            ),
            (
                McpBlock::resource(ResourceContents::blob("AAECAw==", "blob://1")),
                ContentBlock::text(
                    "[resource blob://1 (application/octet-stream, 4 bytes) not shown]",
                ),
            ),
        ];
        for (mcp, ours) in table {
            assert_eq!(blocks(std::slice::from_ref(&mcp)), vec![ours], "{mcp:?}");
        }
    }
}
