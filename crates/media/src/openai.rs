//! The OpenAI-compatible [`MediaBackend`]: one endpoint shape per kind.
//!
//! | kind | requests | response |
//! |---|---|---|
//! | image | `POST /images/generations {model, prompt, n: 1, size?, response_format: "b64_json"}` | `{data: [{b64_json, revised_prompt?}]}` |
//! | speech | `POST /audio/speech {model, input, voice, response_format}` | the audio bytes |
//! | music | `POST /audio/speech` of the configured music endpoint, same shape (`input` is the prompt) | the audio bytes |
//! | video | `POST /videos {model, prompt, size?, seconds?}` → `GET /videos/{id}` until `completed` (progress reported) → `GET /videos/{id}/content` | the video bytes |
//!
//! | the service | the error |
//! |---|---|
//! | 429 (with `Retry-After` seconds, when sent) | [`MediaError::RateLimited`] |
//! | any other non-2xx | [`MediaError::Status`] with its message |
//! | a video job `failed` (or `cancelled`) | [`MediaError::JobFailed`] with the service's reason |
//! | a body over `max_bytes` (by `Content-Length`, or while streaming) | [`MediaError::TooLarge`]; nothing is kept |
//! | a body that does not have the shape above | [`MediaError::Malformed`] |
//! | no connection; too slow | [`MediaError::Unreachable`]; [`MediaError::Timeout`] |
//! | the turn is aborted | [`MediaError::Aborted`], at once |

use crate::endpoint::Endpoint;
use async_trait::async_trait;
use base64::Engine as _;
use kun_ports::{
    AbortSignal, GeneratedMedia, MediaBackend, MediaError, MediaKind, MediaProgress, MediaRequest,
};
use reqwest::{Response, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use std::future::Future;
use std::time::Instant;

/// How much of an error body is quoted.
const QUOTED: usize = 300;

/// A backend for one kind at one endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiMediaBackend {
    kind: MediaKind,
    endpoint: Endpoint,
    client: reqwest::Client,
}

impl OpenAiMediaBackend {
    /// A backend generating `kind` at `endpoint` with `client`.
    #[must_use]
    pub const fn new(kind: MediaKind, endpoint: Endpoint, client: reqwest::Client) -> Self {
        Self {
            kind,
            endpoint,
            client,
        }
    }

    /// The endpoint.
    #[must_use]
    pub const fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn post(&self, path: &str, body: &Value) -> reqwest::RequestBuilder {
        let request = self
            .client
            .post(self.endpoint.url(path))
            .timeout(self.endpoint.timeout)
            .json(body);
        self.authorised(request)
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        let request = self
            .client
            .get(self.endpoint.url(path))
            .timeout(self.endpoint.timeout);
        self.authorised(request)
    }

    fn authorised(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.endpoint.api_key {
            Some(key) => request.bearer_auth(key),
            None => request,
        }
    }

    /// Sends a request and checks the status.
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Response, MediaError> {
        let response = request.send().await.map_err(transport)?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(&response);
        let text = read_limited(response, 64 * 1024)
            .await
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        let message = error_message(&text);
        if status == StatusCode::TOO_MANY_REQUESTS {
            return Err(MediaError::RateLimited {
                retry_after_seconds: retry_after,
                message,
            });
        }
        Err(MediaError::Status {
            status: status.as_u16(),
            message,
        })
    }

    async fn json<T: for<'de> Deserialize<'de>>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, MediaError> {
        let response = self.send(request).await?;
        let bytes = read_limited(response, self.endpoint.max_bytes).await?;
        serde_json::from_slice(&bytes).map_err(|err| MediaError::Malformed(err.to_string()))
    }

    async fn image(&self, request: &MediaRequest) -> Result<GeneratedMedia, MediaError> {
        #[derive(Deserialize)]
        struct Item {
            b64_json: Option<String>,
            revised_prompt: Option<String>,
        }
        #[derive(Deserialize)]
        struct Reply {
            data: Vec<Item>,
        }
        let mut body = json!({
            "model": self.endpoint.model,
            "prompt": request.prompt,
            "n": 1,
            "response_format": "b64_json",
        });
        if let Some(size) = &request.options.size {
            body["size"] = json!(size);
        }
        let reply: Reply = self.json(self.post("/images/generations", &body)).await?;
        let item = reply.data.into_iter().next().ok_or_else(|| {
            MediaError::Malformed("`data` is empty: the service returned no image".to_owned())
        })?;
        let encoded = item.b64_json.ok_or_else(|| {
            MediaError::Malformed(
                "the image has no `b64_json` (the endpoint must support response_format \
                 b64_json)"
                    .to_owned(),
            )
        })?;
        if encoded.len() as u64 > self.endpoint.max_bytes.saturating_mul(4) / 3 + 4 {
            return Err(MediaError::TooLarge {
                limit: self.endpoint.max_bytes,
            });
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded.trim())
            .map_err(|err| MediaError::Malformed(format!("`b64_json` is not base64: {err}")))?;
        let media_type = sniff_image(&bytes).ok_or_else(|| {
            MediaError::Malformed("the image is not PNG, JPEG, GIF or WebP".to_owned())
        })?;
        Ok(GeneratedMedia {
            media_type: media_type.to_owned(),
            bytes,
            revised_prompt: item.revised_prompt,
        })
    }

    async fn audio(&self, request: &MediaRequest) -> Result<GeneratedMedia, MediaError> {
        let format = request
            .options
            .format
            .clone()
            .unwrap_or_else(|| "wav".to_owned());
        let mut body = json!({
            "model": self.endpoint.model,
            "input": request.prompt,
            "response_format": format,
        });
        let voice = request
            .options
            .voice
            .clone()
            .or_else(|| self.endpoint.voice.clone());
        if let Some(voice) = voice {
            body["voice"] = json!(voice);
        } else if self.kind == MediaKind::Speech {
            body["voice"] = json!("alloy");
        }
        if let Some(seconds) = request.options.seconds {
            body["seconds"] = json!(seconds);
        }
        let response = self.send(self.post("/audio/speech", &body)).await?;
        let declared = content_type(&response);
        let bytes = read_limited(response, self.endpoint.max_bytes).await?;
        let media_type = declared
            .filter(|t| MediaKind::Speech.accepts_media_type(t))
            .unwrap_or_else(|| audio_type(&format).to_owned());
        if bytes.is_empty() {
            return Err(MediaError::Malformed("the audio is empty".to_owned()));
        }
        Ok(GeneratedMedia {
            media_type,
            bytes,
            revised_prompt: None,
        })
    }

    async fn video(
        &self,
        request: &MediaRequest,
        progress: &dyn MediaProgress,
    ) -> Result<GeneratedMedia, MediaError> {
        #[derive(Deserialize)]
        struct Job {
            id: String,
            status: String,
            #[serde(default)]
            progress: Option<f64>,
            #[serde(default)]
            error: Option<Value>,
        }
        let mut body = json!({"model": self.endpoint.model, "prompt": request.prompt});
        if let Some(size) = &request.options.size {
            body["size"] = json!(size);
        }
        if let Some(seconds) = request.options.seconds {
            body["seconds"] = json!(seconds.to_string());
        }
        let mut job: Job = self.json(self.post("/videos", &body)).await?;
        if job.id.is_empty() || job.id.contains(['/', '?', '#']) {
            return Err(MediaError::Malformed(format!(
                "the job id {:?} is not usable",
                job.id
            )));
        }
        let started = Instant::now();
        let mut reported = 0.0_f64;
        loop {
            let fraction = job
                .progress
                .map_or(reported, |p| (p / 100.0).clamp(0.0, 1.0));
            if fraction >= reported {
                reported = fraction;
            }
            match job.status.as_str() {
                "completed" | "succeeded" => break,
                "failed" | "cancelled" | "canceled" | "error" => {
                    let reason = job
                        .error
                        .as_ref()
                        .map(|e| {
                            e.get("message")
                                .and_then(Value::as_str)
                                .map_or_else(|| e.to_string(), str::to_owned)
                        })
                        .unwrap_or_else(|| format!("status {}", job.status));
                    return Err(MediaError::JobFailed(reason));
                }
                _ => {}
            }
            progress.report(
                reported * 0.95,
                &format!("video job {}: {}", job.id, job.status),
            );
            if started.elapsed() > self.endpoint.job_timeout {
                return Err(MediaError::Timeout(format!(
                    "the video job {} did not finish within {} s",
                    job.id,
                    self.endpoint.job_timeout.as_secs()
                )));
            }
            tokio::time::sleep(self.endpoint.poll_interval).await;
            job = self.json(self.get(&format!("/videos/{}", job.id))).await?;
        }
        progress.report(0.95, "downloading the video");
        let response = self
            .send(self.get(&format!("/videos/{}/content", job.id)))
            .await?;
        let declared = content_type(&response);
        let bytes = read_limited(response, self.endpoint.max_bytes).await?;
        progress.report(1.0, "done");
        Ok(GeneratedMedia {
            media_type: declared
                .filter(|t| MediaKind::Video.accepts_media_type(t))
                .unwrap_or_else(|| "video/mp4".to_owned()),
            bytes,
            revised_prompt: None,
        })
    }
}

#[async_trait]
impl MediaBackend for OpenAiMediaBackend {
    async fn generate(
        &self,
        request: &MediaRequest,
        progress: &dyn MediaProgress,
        abort: &AbortSignal,
    ) -> Result<GeneratedMedia, MediaError> {
        if abort.is_aborted() {
            return Err(MediaError::Aborted);
        }
        let kind = request.kind;
        let work = async {
            match kind {
                MediaKind::Image => self.image(request).await,
                MediaKind::Speech | MediaKind::Music => self.audio(request).await,
                MediaKind::Video => self.video(request, progress).await,
            }
        };
        abortable(work, abort).await
    }
}

async fn abortable<T>(
    work: impl Future<Output = Result<T, MediaError>>,
    abort: &AbortSignal,
) -> Result<T, MediaError> {
    tokio::select! {
        biased;
        () = abort.aborted() => Err(MediaError::Aborted),
        result = work => result,
    }
}

fn transport(err: reqwest::Error) -> MediaError {
    if err.is_timeout() {
        MediaError::Timeout(err.to_string())
    } else {
        MediaError::Unreachable(err.to_string())
    }
}

/// Reads the body, refusing more than `limit` bytes (by `Content-Length` first).
async fn read_limited(mut response: Response, limit: u64) -> Result<Vec<u8>, MediaError> {
    if response.content_length().is_some_and(|n| n > limit) {
        return Err(MediaError::TooLarge { limit });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if body.len() as u64 + chunk.len() as u64 > limit {
            return Err(MediaError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `Retry-After` in whole seconds (an HTTP date is not honoured).
fn retry_after(response: &Response) -> Option<u64> {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn content_type(response: &Response) -> Option<String> {
    let value = response.headers().get(reqwest::header::CONTENT_TYPE)?;
    let text = value.to_str().ok()?;
    Some(
        text.split(';')
            .next()
            .unwrap_or(text)
            .trim()
            .to_ascii_lowercase(),
    )
}

/// The service's message: `error.message` of a JSON body, else the text, shortened.
fn error_message(text: &str) -> String {
    let from_json = serde_json::from_str::<Value>(text).ok().and_then(|v| {
        v.get("error")
            .and_then(|e| e.get("message").or(Some(e)))
            .and_then(|m| m.as_str().map(str::to_owned))
    });
    let message = from_json.unwrap_or_else(|| text.trim().to_owned());
    let mut short: String = message
        .chars()
        .filter(|c| !c.is_control())
        .take(QUOTED)
        .collect();
    if message.chars().count() > QUOTED {
        short.push('…');
    }
    if short.is_empty() {
        "no message".to_owned()
    } else {
        short
    }
}

/// The media type of an image from its first bytes.
fn sniff_image(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF8") {
        Some("image/gif")
    } else if bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// The media type of an audio format name.
fn audio_type(format: &str) -> &'static str {
    match format {
        "mp3" => "audio/mpeg",
        "opus" => "audio/opus",
        "aac" => "audio/aac",
        "flac" => "audio/flac",
        "pcm" => "audio/L16",
        _ => "audio/wav",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_are_short_and_plain() {
        assert_eq!(
            error_message(r#"{"error": {"message": "bad prompt"}}"#),
            "bad prompt"
        );
        assert_eq!(error_message(r#"{"error": "quota"}"#), "quota");
        assert_eq!(error_message("oops\u{1b}[2J"), "oops[2J");
        assert_eq!(error_message(""), "no message");
        assert!(error_message(&"x".repeat(1000)).ends_with('…'));
    }

    #[test]
    fn images_are_recognised_by_their_bytes() {
        assert_eq!(sniff_image(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(sniff_image(&[0xff, 0xd8, 0xff, 0xe0]), Some("image/jpeg"));
        assert_eq!(sniff_image(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(sniff_image(b"<html>"), None);
    }
}
