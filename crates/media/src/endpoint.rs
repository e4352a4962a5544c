//! An endpoint's configuration, and the HTTP client every backend shares (rustls with the
//! operating system's verifier; native TLS is never used).

use std::sync::Arc;
use std::time::Duration;

/// The largest response kept by default (images, audio): 64 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// How long one request may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a video job may take by default, polls included.
pub const DEFAULT_JOB_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How often a video job is polled by default.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(5);

/// One configured OpenAI-compatible endpoint (`[media.image]`, `[media.speech]`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The API root, including the version (`https://api.openai.com/v1`).
    pub base_url: String,
    /// The model to ask for.
    pub model: String,
    /// The API key sent as a bearer token, read from the environment at start-up (`None`: no
    /// `Authorization` header, for local servers).
    pub api_key: Option<String>,
    /// The voice of speech (speech endpoints).
    pub voice: Option<String>,
    /// The largest response kept.
    pub max_bytes: u64,
    /// How long one request may take.
    pub timeout: Duration,
    /// How long a whole video job may take.
    pub job_timeout: Duration,
    /// How often a video job is polled.
    pub poll_interval: Duration,
}

impl Endpoint {
    /// An endpoint with the default limits.
    #[must_use]
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            voice: None,
            max_bytes: DEFAULT_MAX_BYTES,
            timeout: DEFAULT_TIMEOUT,
            job_timeout: DEFAULT_JOB_TIMEOUT,
            poll_interval: DEFAULT_POLL_INTERVAL,
        }
    }

    /// `base_url` joined with `path` (`/images/generations`).
    #[must_use]
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url.trim_end_matches('/'))
    }
}

/// The HTTP client: rustls (aws-lc-rs) with the platform verifier, HTTP/1.1.
///
/// # Errors
/// When TLS cannot be set up (no certificate store) or the client cannot be built.
pub fn http_client() -> Result<reqwest::Client, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = rustls_platform_verifier::Verifier::new(Arc::clone(&provider))
        .map_err(|err| format!("TLS certificate verification cannot be set up: {err}"))?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|err| format!("TLS cannot be set up: {err}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    reqwest::Client::builder()
        .use_preconfigured_tls(config)
        .build()
        .map_err(|err| format!("the HTTP client cannot be built: {err}"))
}
