//! Media generation backends (image, speech, music, video).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    /// An image.
    Image,
    /// Speech.
    Speech,
    /// Music.
    Music,
    /// Video.
    Video,
}

/// Generated media.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratedMedia {
    /// MIME type.
    pub mime_type: String,
    /// The bytes (stored in the artifact store by the tool).
    pub bytes: Vec<u8>,
}

/// The backend failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("media backend: {message}")]
pub struct MediaError {
    /// What failed.
    pub message: String,
    /// The backend said to slow down.
    pub rate_limited: bool,
}

/// An OpenAI-compatible generation endpoint.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait MediaBackend: Send + Sync {
    /// Generates media of `kind` from `prompt`.
    ///
    /// # Errors
    /// When the backend fails.
    async fn generate(&self, kind: MediaKind, prompt: &str) -> Result<GeneratedMedia, MediaError>;
}
