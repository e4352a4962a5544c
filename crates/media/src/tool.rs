//! The `generate_*` tools: one per [`MediaKind`], each over a [`MediaBackend`], storing what
//! it generates in the artifact store.
//!
//! A result carries the artifact (id, file path, media type, size, blake3 hash) for programs
//! and a short text for the model, followed by the media itself: an image or audio block
//! (up to 8 MiB), or a link to the file (video, and anything larger). Long jobs report
//! progress as `{progress, total, message}` updates (MCP progress notifications in `serve`).
//!
//! An abort of the turn stops the backend at once; the host then ends the call as aborted.
//!
//! | backend error | result code |
//! |---|---|
//! | rate limited | `rate_limited` (with `retry_after_seconds`) |
//! | timed out | `tool_timeout` |
//! | any other | `tool_execution_failed`, saying what the service said |

use async_trait::async_trait;
use base64::Engine as _;
use kun_ports::{
    ArtifactStore, ContentBlock, ErrorCode, MediaBackend, MediaError, MediaKind, MediaOptions,
    MediaProgress, MediaRequest, ToolContext, ToolFailure, ToolPolicy, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::marker::PhantomData;
use std::sync::Arc;

/// The largest media inlined into the result; larger ones are linked.
pub const MAX_INLINE_BYTES: usize = 8 * 1024 * 1024;

/// The longest prompt, in characters.
const MAX_PROMPT_CHARS: usize = 32_000;

/// An audio format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AudioFormat {
    /// WAV (the default).
    Wav,
    /// MP3.
    Mp3,
    /// Opus.
    Opus,
    /// AAC.
    Aac,
    /// FLAC.
    Flac,
}

impl AudioFormat {
    const fn as_str(self) -> &'static str {
        match self {
            Self::Wav => "wav",
            Self::Mp3 => "mp3",
            Self::Opus => "opus",
            Self::Aac => "aac",
            Self::Flac => "flac",
        }
    }
}

/// The arguments of one `generate_*` tool.
pub trait MediaArgs: DeserializeOwned + JsonSchema + Send + 'static {
    /// What the tool generates.
    const KIND: MediaKind;
    /// The tool's description.
    const DESCRIPTION: &'static str;
    /// The prompt (or text) and options.
    fn into_request(self) -> (String, MediaOptions);
}

/// Arguments of `generate_image`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageArgs {
    /// What the image shows.
    pub prompt: String,
    /// Its size, such as `1024x1024`.
    #[serde(default)]
    pub size: Option<String>,
}

impl MediaArgs for ImageArgs {
    const KIND: MediaKind = MediaKind::Image;
    const DESCRIPTION: &'static str = "Generate an image from a prompt. The image is saved as a \
        file and shown to you; describe subject, style and composition.";
    fn into_request(self) -> (String, MediaOptions) {
        let options = MediaOptions {
            size: self.size,
            ..MediaOptions::default()
        };
        (self.prompt, options)
    }
}

/// Arguments of `generate_speech`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpeechArgs {
    /// The text to say.
    pub text: String,
    /// The voice (the configured one when absent).
    #[serde(default)]
    pub voice: Option<String>,
    /// The audio format (wav when absent).
    #[serde(default)]
    pub format: Option<AudioFormat>,
}

impl MediaArgs for SpeechArgs {
    const KIND: MediaKind = MediaKind::Speech;
    const DESCRIPTION: &'static str = "Turn text into spoken audio. The audio is saved as a file.";
    fn into_request(self) -> (String, MediaOptions) {
        let options = MediaOptions {
            voice: self.voice,
            format: self.format.map(|f| f.as_str().to_owned()),
            ..MediaOptions::default()
        };
        (self.text, options)
    }
}

/// Arguments of `generate_music`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MusicArgs {
    /// What the music sounds like.
    pub prompt: String,
    /// Its length in seconds.
    #[serde(default)]
    pub seconds: Option<u32>,
    /// The audio format (wav when absent).
    #[serde(default)]
    pub format: Option<AudioFormat>,
}

impl MediaArgs for MusicArgs {
    const KIND: MediaKind = MediaKind::Music;
    const DESCRIPTION: &'static str =
        "Generate music from a prompt (style, instruments, mood). The audio is saved as a file.";
    fn into_request(self) -> (String, MediaOptions) {
        let options = MediaOptions {
            seconds: self.seconds,
            format: self.format.map(|f| f.as_str().to_owned()),
            ..MediaOptions::default()
        };
        (self.prompt, options)
    }
}

/// Arguments of `generate_video`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VideoArgs {
    /// What the video shows.
    pub prompt: String,
    /// Its size, such as `1280x720`.
    #[serde(default)]
    pub size: Option<String>,
    /// Its length in seconds.
    #[serde(default)]
    pub seconds: Option<u32>,
}

impl MediaArgs for VideoArgs {
    const KIND: MediaKind = MediaKind::Video;
    const DESCRIPTION: &'static str = "Generate a short video from a prompt. This takes \
        minutes; progress is reported. The video is saved as a file and linked.";
    fn into_request(self) -> (String, MediaOptions) {
        let options = MediaOptions {
            size: self.size,
            seconds: self.seconds,
            ..MediaOptions::default()
        };
        (self.prompt, options)
    }
}

/// What a `generate_*` tool returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MediaOutput {
    /// The artifact holding the media.
    pub artifact_id: String,
    /// Its file, when the artifact store keeps files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The media type, such as `image/png`.
    pub media_type: String,
    /// Its size in bytes.
    pub byte_size: u64,
    /// The blake3 hash of the bytes, hex.
    pub blake3: String,
    /// The model that generated it.
    pub model: String,
    /// The prompt as the service rewrote it, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revised_prompt: Option<String>,
    /// The bytes, for the media block (not part of the structured output).
    #[serde(skip)]
    #[schemars(skip)]
    pub bytes: Vec<u8>,
}

/// A `generate_*` tool (see the module docs).
pub struct GenerateMedia<A> {
    spec: ToolSpec,
    backend: Option<Arc<dyn MediaBackend>>,
    artifacts: Arc<dyn ArtifactStore>,
    model: String,
    args: PhantomData<fn() -> A>,
}

impl<A: MediaArgs> GenerateMedia<A> {
    /// The tool over `backend` (`None` when unconfigured: its provider is then unavailable
    /// and the tool never runs), storing into `artifacts`.
    #[must_use]
    pub fn new(
        backend: Option<Arc<dyn MediaBackend>>,
        artifacts: Arc<dyn ArtifactStore>,
        model: impl Into<String>,
    ) -> Self {
        let spec = ToolSpec::typed::<A, MediaOutput>(A::KIND.tool_name(), A::DESCRIPTION)
            .with_policy(ToolPolicy::OnRequest);
        Self {
            spec,
            backend,
            artifacts,
            model: model.into(),
            args: PhantomData,
        }
    }
}

/// Progress of a generation as the tool's streaming updates.
struct Report<'a>(ToolContext<'a>);

impl MediaProgress for Report<'_> {
    fn report(&self, fraction: f64, message: &str) {
        self.0.report(&json!({
            "progress": (fraction.clamp(0.0, 1.0) * 100.0).round(),
            "total": 100,
            "message": message,
        }));
    }
}

fn failure(kind: MediaKind, err: MediaError) -> ToolFailure {
    let what = kind.tool_name();
    match err {
        MediaError::RateLimited {
            retry_after_seconds,
            message,
        } => {
            let wait = retry_after_seconds
                .map(|s| format!("wait {s} s, then retry"))
                .unwrap_or_else(|| "wait a minute, then retry".to_owned());
            let failure = ToolFailure::coded(
                ErrorCode::RateLimited,
                format!("{what}: the service is rate limiting requests ({message}); {wait}"),
            );
            match retry_after_seconds {
                Some(seconds) => failure.with("retry_after_seconds", seconds),
                None => failure,
            }
        }
        MediaError::Timeout(message) => ToolFailure::coded(
            ErrorCode::ToolTimeout,
            format!("{what} timed out: {message}; try again later or ask for less"),
        ),
        MediaError::Status { status, message } => ToolFailure::new(format!(
            "{what}: the service answered HTTP {status}: {message}"
        ))
        .with("status", status),
        MediaError::TooLarge { limit } => ToolFailure::new(format!(
            "{what}: the response is larger than the limit of {limit} bytes; nothing was kept. \
             Ask for a smaller result"
        ))
        .with("limit_bytes", limit),
        other => ToolFailure::new(format!("{what}: {other}")),
    }
}

#[async_trait]
impl<A: MediaArgs> TypedTool for GenerateMedia<A> {
    type Args = A;
    type Output = MediaOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &MediaOutput) -> String {
        let what = match A::KIND {
            MediaKind::Image => "an image",
            MediaKind::Speech => "speech",
            MediaKind::Music => "music",
            MediaKind::Video => "a video",
        };
        let place = output
            .path
            .as_ref()
            .map_or_else(|| format!("artifact {}", output.artifact_id), Clone::clone);
        let mut text = format!(
            "Generated {what} ({}, {} bytes): {place}",
            output.media_type, output.byte_size
        );
        if let Some(revised) = &output.revised_prompt {
            text.push_str("\nRevised prompt: ");
            text.push_str(revised);
        }
        text
    }

    fn media(&self, output: &MediaOutput) -> Vec<ContentBlock> {
        let inline = output.bytes.len() <= MAX_INLINE_BYTES && !output.bytes.is_empty();
        let encoded = || base64::engine::general_purpose::STANDARD.encode(&output.bytes);
        match A::KIND {
            MediaKind::Image if inline => vec![ContentBlock::image(encoded(), &output.media_type)],
            MediaKind::Speech | MediaKind::Music if inline => {
                vec![ContentBlock::audio(encoded(), &output.media_type)]
            }
            _ => output
                .path
                .as_ref()
                .map(|path| ContentBlock::ResourceLink {
                    uri: format!("file://{path}"),
                    name: std::path::Path::new(path).file_name().map_or_else(
                        || output.artifact_id.clone(),
                        |n| n.to_string_lossy().into_owned(),
                    ),
                    mime_type: Some(output.media_type.clone()),
                    description: Some(format!(
                        "{} generated by {}",
                        A::KIND.as_str(),
                        output.model
                    )),
                })
                .into_iter()
                .collect(),
        }
    }

    async fn run(&self, args: A, ctx: ToolContext<'_>) -> Result<MediaOutput, ToolFailure> {
        let Some(backend) = &self.backend else {
            return Err(ToolFailure::new(format!(
                "{} is not configured; add [media.{}] to the user config",
                A::KIND.tool_name(),
                A::KIND.as_str()
            )));
        };
        let (prompt, options) = args.into_request();
        let prompt = prompt.trim().to_owned();
        if prompt.is_empty() || prompt.chars().count() > MAX_PROMPT_CHARS {
            return Err(ToolFailure::invalid(format!(
                "the prompt must be 1 to {MAX_PROMPT_CHARS} characters"
            )));
        }
        if options.seconds == Some(0) {
            return Err(ToolFailure::invalid("seconds must be at least 1"));
        }
        let request = MediaRequest {
            kind: A::KIND,
            prompt,
            options,
        };
        let progress = Report(ctx);
        let media = match backend.generate(&request, &progress, ctx.turn.abort).await {
            Ok(media) => media,
            Err(MediaError::Aborted) if ctx.is_aborted() => {
                // The host watches the same signal and ends the call as aborted (an `Err`,
                // not a result); yield to it rather than report a failure.
                std::future::pending::<()>().await;
                return Err(failure(A::KIND, MediaError::Aborted));
            }
            Err(err) => return Err(failure(A::KIND, err)),
        };
        if !A::KIND.accepts_media_type(&media.media_type) {
            return Err(ToolFailure::new(format!(
                "{}: the service sent {}, not {} media",
                A::KIND.tool_name(),
                media.media_type,
                A::KIND.as_str()
            )));
        }
        let extension = media.media_type.split_once('/').map_or("bin", |(_, sub)| {
            sub.split(['+', ';']).next().unwrap_or("bin")
        });
        let stored = self
            .artifacts
            .put(&format!("{}.{extension}", A::KIND.as_str()), &media.bytes)
            .map_err(|err| ToolFailure::new(format!("the media could not be stored: {err}")))?;
        Ok(MediaOutput {
            artifact_id: stored.id,
            path: stored.path.map(|p| p.display().to_string()),
            media_type: media.media_type,
            byte_size: stored.byte_size,
            blake3: blake3::hash(&media.bytes).to_hex().to_string(),
            model: self.model.clone(),
            revised_prompt: media.revised_prompt,
            bytes: media.bytes,
        })
    }
}
