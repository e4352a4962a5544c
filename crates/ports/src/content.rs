//! What the model reads of a result: content blocks.
//!
//! A [`ToolResult`](crate::ToolResult) carries two views of one outcome: `output`, a JSON value
//! for programs (MCP `structuredContent`, the ledger, hooks), and `content`, the blocks the
//! model reads — a compact text rendering (numbered lines, `path:line:col:text` matches, a
//! unified diff), and media where the tool produced some (a screenshot, generated audio).
//!
//! An empty `content` means "no rendering": front ends then show
//! [`ToolResult::model_text`](crate::ToolResult::model_text), which renders the output
//! generically.
//!
//! ```
//! use kun_ports::ContentBlock;
//! let block = ContentBlock::text("   1│fn main() {}");
//! assert_eq!(block.as_text(), Some("   1│fn main() {}"));
//! assert_eq!(serde_json::to_value(&block).unwrap()["type"], "text");
//! ```

use serde::{Deserialize, Serialize};

/// One block of what the model reads: text, an image, audio, or a link to a resource.
///
/// The shape mirrors MCP's content blocks, so `serve` passes them through unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain UTF-8 text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 of the bytes.
        data: String,
        /// Its media type, e.g. `image/png`.
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 of the bytes.
        data: String,
        /// Its media type, e.g. `audio/wav`.
        mime_type: String,
    },
    /// A link to a resource (a file, a generated video) the client may fetch.
    ResourceLink {
        /// Where it is.
        uri: String,
        /// A short name.
        name: String,
        /// Its media type, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// What it is, when worth saying.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
}

impl ContentBlock {
    /// A text block.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image block from base64 data.
    #[must_use]
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from base64 data.
    #[must_use]
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// The text of a text block.
    #[must_use]
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            _ => None,
        }
    }
}
