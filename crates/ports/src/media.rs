//! Media generation backends: image, speech, music, video.
//!
//! A [`MediaBackend`] turns a [`MediaRequest`] into [`GeneratedMedia`] (bytes and a media
//! type), reporting progress for long jobs and stopping when the turn is aborted. The
//! `generate_*` tools store the bytes in the artifact store and hand the model a reference
//! (and, in `serve`, the media itself).
//!
//! ```
//! use kun_ports::{MediaKind, ProviderKind};
//! assert_eq!(MediaKind::Speech.tool_name(), "generate_speech");
//! assert_eq!(MediaKind::Music.provider_kind(), ProviderKind::Audio);
//! assert!(MediaKind::Video.accepts_media_type("video/mp4"));
//! assert!(!MediaKind::Image.accepts_media_type("text/html"));
//! ```

use crate::{AbortSignal, ProviderKind};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    /// An image.
    Image,
    /// Speech from text.
    Speech,
    /// Music.
    Music,
    /// A video.
    Video,
}

impl MediaKind {
    /// Every kind, in catalog order.
    pub const ALL: [Self; 4] = [Self::Image, Self::Speech, Self::Music, Self::Video];

    /// The config section and short name: `image`, `speech`, `music`, `video`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Speech => "speech",
            Self::Music => "music",
            Self::Video => "video",
        }
    }

    /// The tool that generates it.
    #[must_use]
    pub const fn tool_name(self) -> &'static str {
        match self {
            Self::Image => "generate_image",
            Self::Speech => "generate_speech",
            Self::Music => "generate_music",
            Self::Video => "generate_video",
        }
    }

    /// The provider kind of its tool (`image`, `audio` or `video`: network-backed).
    #[must_use]
    pub const fn provider_kind(self) -> ProviderKind {
        match self {
            Self::Image => ProviderKind::Image,
            Self::Speech | Self::Music => ProviderKind::Audio,
            Self::Video => ProviderKind::Video,
        }
    }

    /// Whether a response's media type is of this kind's family (`image/*`, `audio/*`,
    /// `video/*`).
    #[must_use]
    pub fn accepts_media_type(self, media_type: &str) -> bool {
        let family = match self {
            Self::Image => "image/",
            Self::Speech | Self::Music => "audio/",
            Self::Video => "video/",
        };
        media_type
            .get(..family.len())
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case(family))
    }
}

/// Options a request may carry; each backend uses the ones its endpoint knows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaOptions {
    /// Image or video size, such as `1024x1024`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// The voice of speech.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voice: Option<String>,
    /// The output format (`png`, `wav`, `mp3`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The length of music or video, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<u32>,
}

/// One generation request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaRequest {
    /// What to generate.
    pub kind: MediaKind,
    /// The prompt (for speech: the text to say).
    pub prompt: String,
    /// Options.
    #[serde(default)]
    pub options: MediaOptions,
}

/// What a backend produced.
#[derive(Clone, PartialEq, Eq)]
pub struct GeneratedMedia {
    /// The media type, such as `image/png`.
    pub media_type: String,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The prompt as the backend rewrote it, when it says.
    pub revised_prompt: Option<String>,
}

impl std::fmt::Debug for GeneratedMedia {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GeneratedMedia")
            .field("media_type", &self.media_type)
            .field("bytes", &self.bytes.len())
            .field("revised_prompt", &self.revised_prompt)
            .finish()
    }
}

/// Why generation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediaError {
    /// The service asked to slow down (HTTP 429).
    #[error("the service is rate limiting requests: {message}")]
    RateLimited {
        /// How long it asked to wait, when it said.
        retry_after_seconds: Option<u64>,
        /// What it said.
        message: String,
    },
    /// The service answered with an error status.
    #[error("the service answered HTTP {status}: {message}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// What it said (shortened).
        message: String,
    },
    /// A long job (video) was accepted, then failed.
    #[error("the generation job failed: {0}")]
    JobFailed(String),
    /// The response was larger than the configured limit; nothing was kept.
    #[error("the response is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The response does not have the endpoint's shape.
    #[error("the response is not what the endpoint should send: {0}")]
    Malformed(String),
    /// The service could not be reached.
    #[error("the service cannot be reached: {0}")]
    Unreachable(String),
    /// The request or the job took longer than allowed.
    #[error("the generation timed out: {0}")]
    Timeout(String),
    /// The turn was aborted; the backend stopped.
    #[error("the generation was aborted")]
    Aborted,
}

/// Receives progress of a long generation.
pub trait MediaProgress: Send + Sync {
    /// `fraction` in `0.0..=1.0`, never decreasing within one generation; `message` says what
    /// is happening.
    fn report(&self, fraction: f64, message: &str);
}

/// Progress nobody listens to.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoMediaProgress;

impl MediaProgress for NoMediaProgress {
    fn report(&self, _fraction: f64, _message: &str) {}
}

/// An endpoint that generates one kind of media.
///
/// Invariants every adapter keeps (checked by `testkit::media_backend_contract`): a success
/// has bytes and a media type of the request's family; progress fractions stay in
/// `0.0..=1.0` and never decrease; an aborted turn ends the call with
/// [`MediaError::Aborted`] promptly, without waiting for the service.
#[async_trait]
pub trait MediaBackend: Send + Sync {
    /// Generates what `request` asks for.
    ///
    /// # Errors
    /// A [`MediaError`] saying what failed.
    async fn generate(
        &self,
        request: &MediaRequest,
        progress: &dyn MediaProgress,
        abort: &AbortSignal,
    ) -> Result<GeneratedMedia, MediaError>;
}
