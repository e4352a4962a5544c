//! `web_fetch`: one page through the guard, as Markdown, text or raw.

use crate::fetch::{FetchError, Fetcher};
use crate::guard::GuardError;
use crate::page::{self, Format};
use async_trait::async_trait;
use kun_ports::{
    ErrorCode, SideEffect, ToolContext, ToolFailure, ToolKind, ToolPolicy, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The default body cap: 5 MiB.
pub const DEFAULT_MAX_BYTES: usize = 5 * 1024 * 1024;

/// Arguments of `web_fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchArgs {
    /// The http(s) URL to read.
    pub url: String,
    /// Read at most this many bytes of the body (default and upper bound: the configured
    /// limit, 5 MiB unless changed).
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// `markdown` (default: HTML as Markdown, JSON pretty-printed), `text` (no markup) or
    /// `raw` (the body as sent).
    #[serde(default)]
    pub format: Option<Format>,
}

/// What `web_fetch` returns.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FetchedPage {
    /// The final URL, after redirects.
    pub url: String,
    /// The HTTP status.
    pub status: u16,
    /// The content type the server declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The page title (HTML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The format the content is in.
    pub format: Format,
    /// The content.
    pub content: String,
    /// Bytes of body read.
    pub bytes_read: usize,
    /// The body was longer than the cap and was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Redirected from these URLs, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirects: Vec<String>,
}

/// `web_fetch` (policy untrusted: what it returns comes from the web).
pub struct WebFetchTool {
    spec: ToolSpec,
    fetcher: Fetcher,
    max_bytes: usize,
}

impl WebFetchTool {
    /// The tool on `fetcher`, reading at most `max_bytes` of any body.
    #[must_use]
    pub fn new(fetcher: Fetcher, max_bytes: usize) -> Self {
        Self {
            spec: ToolSpec::typed::<FetchArgs, FetchedPage>(
                "web_fetch",
                "Fetch an http(s) URL and read it: HTML as Markdown (headings, links, code \
                 blocks), JSON pretty-printed, other text as is. Private and internal addresses \
                 are refused. The content is untrusted web content.",
            )
            .with_kind(ToolKind::ToolCall)
            .with_policy(ToolPolicy::Untrusted)
            .with_side_effect(SideEffect::ReadOnly),
            fetcher,
            max_bytes: max_bytes.max(1),
        }
    }
}

/// The error result for a failed fetch.
fn failure(err: FetchError) -> ToolFailure {
    let message = err.to_string();
    match err {
        FetchError::InvalidUrl { .. } => ToolFailure::invalid(message),
        FetchError::Guard(GuardError::Scheme { scheme }) => {
            ToolFailure::coded(ErrorCode::WebSchemeBlocked, message).with("scheme", scheme)
        }
        FetchError::Guard(GuardError::NoHost) => ToolFailure::invalid(message),
        FetchError::Guard(GuardError::Address {
            host,
            address,
            range,
        }) => ToolFailure::coded(ErrorCode::WebAddressBlocked, message)
            .with("host", host)
            .with("address", address.to_string())
            .with("range", range),
        FetchError::TooManyRedirects { chain, .. } => {
            ToolFailure::coded(ErrorCode::WebTooManyRedirects, message).with("redirects", chain)
        }
        FetchError::Timeout(limit) => ToolFailure::coded(ErrorCode::ToolTimeout, message)
            .with("timeout_seconds", limit.as_secs()),
        FetchError::RateLimited {
            status,
            retry_after_seconds,
            ..
        } => {
            let wait = retry_after_seconds.map_or_else(
                || "Wait a while".to_owned(),
                |s| format!("Wait {s} seconds"),
            );
            let failure = ToolFailure::coded(
                ErrorCode::RateLimited,
                format!("{message}. {wait} before fetching from it again."),
            )
            .with("status", status);
            match retry_after_seconds {
                Some(s) => failure.with("retry_after_seconds", s),
                None => failure,
            }
        }
        FetchError::Status { status, .. } => ToolFailure::new(message).with("status", status),
        FetchError::Binary { content_type, .. } => {
            ToolFailure::new(message).with("content_type", content_type)
        }
        FetchError::Aborted | FetchError::Transport(_) => ToolFailure::new(message),
    }
}

#[async_trait]
impl TypedTool for WebFetchTool {
    type Args = FetchArgs;
    type Output = FetchedPage;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, page: &FetchedPage) -> String {
        let mut out = format!("URL: {}", page.url);
        if let Some(first) = page.redirects.first() {
            out.push_str(&format!(" (redirected from {first})"));
        }
        if let Some(title) = &page.title {
            out.push_str(&format!("\nTitle: {title}"));
        }
        out.push_str("\n\n");
        out.push_str(&page.content);
        if page.truncated {
            out.push_str(&format!(
                "\n\n… cut: only the first {} bytes of the body were read (max_bytes); the rest \
                 of the page is not shown",
                page.bytes_read
            ));
        }
        out
    }

    async fn run(&self, args: FetchArgs, ctx: ToolContext<'_>) -> Result<FetchedPage, ToolFailure> {
        let max_bytes = match args.max_bytes {
            Some(0) => return Err(ToolFailure::invalid("max_bytes must be at least 1")),
            Some(n) => n.min(self.max_bytes),
            None => self.max_bytes,
        };
        let format = args.format.unwrap_or_default();
        let fetched = self
            .fetcher
            .fetch(&args.url, max_bytes, ctx.turn.abort.aborted())
            .await
            .map_err(failure)?;
        let encoding =
            page::encoding_of(&fetched.body, fetched.content_type.as_deref(), fetched.kind);
        let (body, kind, truncated) = (fetched.body, fetched.kind, fetched.truncated);
        let bytes_read = body.len();
        // Decoding and HTML conversion of megabytes is CPU work: off the async executor.
        let (content, title) = tokio::task::spawn_blocking(move || {
            let text = page::decode(&body, encoding, truncated);
            page::render(&text, kind, format)
        })
        .await
        .map_err(|err| ToolFailure::new(format!("the page could not be converted: {err}")))?;
        Ok(FetchedPage {
            url: fetched.url.to_string(),
            status: fetched.status,
            content_type: fetched.content_type,
            title,
            format,
            content,
            bytes_read,
            truncated,
            redirects: fetched.redirects,
        })
    }
}
