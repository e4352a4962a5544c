//! What every engine shares: one HTTP client, and how an answer's status becomes a
//! [`WebSearchError`].
//!
//! | answer                          | error                                  |
//! |---------------------------------|----------------------------------------|
//! | 429                             | `RateLimited` with `Retry-After`        |
//! | 503 with `Retry-After`          | `RateLimited` with its delay            |
//! | other 4xx (401, 403, 422 …)     | `Rejected { status }`                   |
//! | 5xx, connection failure         | `Failed`                                |
//! | time limit                      | `Timeout`                               |
//! | 2xx that is not the engine's JSON | `BadResponse`                         |

use crate::fetch::retry_after_seconds;
use kun_ports::{WebSearchError, WebSearchErrorKind};
use serde::de::DeserializeOwned;
use std::time::Duration;

/// The most bytes of an engine's answer that are read.
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// An HTTP client for search engines (the user's own endpoints: not behind the address
/// guard).
///
/// # Errors
/// When TLS cannot be set up.
pub fn client(timeout: Duration, user_agent: &str) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .tls_backend_preconfigured(crate::tls::client_config()?)
        .timeout(timeout)
        .user_agent(user_agent)
        .build()
        .map_err(|err| format!("the HTTP client for web search cannot be built: {err}"))
}

/// Sends `request` and parses a 2xx answer as `T`.
pub async fn send<T: DeserializeOwned>(
    engine: &str,
    request: reqwest::RequestBuilder,
) -> Result<T, WebSearchError> {
    let response = request
        .send()
        .await
        .map_err(|err| transport(engine, &err))?;
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(retry_after_seconds);
    if status == 429 || (status == 503 && retry_after.is_some()) {
        return Err(WebSearchError::new(
            WebSearchErrorKind::RateLimited {
                retry_after_seconds: retry_after,
            },
            format!("{engine} is rate limiting requests (HTTP {status})"),
        ));
    }
    if (400..500).contains(&status) {
        let hint = match status {
            401 | 403 => ": check the API key (and, for searxng, that the JSON format is enabled)",
            402 => ": the plan's quota is used up",
            _ => "",
        };
        return Err(WebSearchError::new(
            WebSearchErrorKind::Rejected { status },
            format!("{engine} refused the request (HTTP {status}){hint}"),
        ));
    }
    if !(200..300).contains(&status) {
        return Err(WebSearchError::new(
            WebSearchErrorKind::Failed,
            format!("{engine} failed (HTTP {status}); try again later"),
        ));
    }
    let body = read_capped(response)
        .await
        .map_err(|err| transport(engine, &err))?;
    serde_json::from_slice(&body).map_err(|err| {
        WebSearchError::new(
            WebSearchErrorKind::BadResponse,
            format!("{engine} answered something that is not its search response: {err}"),
        )
    })
}

async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_ANSWER_BYTES {
            break;
        }
    }
    Ok(body)
}

fn transport(engine: &str, err: &reqwest::Error) -> WebSearchError {
    if err.is_timeout() {
        return WebSearchError::new(
            WebSearchErrorKind::Timeout,
            format!("{engine} did not answer in time"),
        );
    }
    let mut message = format!("{engine} cannot be reached: {err}");
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    WebSearchError::new(WebSearchErrorKind::Failed, message)
}

/// A snippet as plain text: tags removed, common entities decoded, whitespace collapsed.
///
/// ```
/// use kun_web::search::plain_snippet;
/// assert_eq!(plain_snippet("<strong>Tokio</strong> &amp; async&nbsp;Rust"), "Tokio & async Rust");
/// ```
#[must_use]
pub fn plain_snippet(html: &str) -> String {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    let decoded = [
        ("&nbsp;", " "),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&quot;", "\""),
        ("&#39;", "'"),
        ("&#x27;", "'"),
        ("&apos;", "'"),
        ("&amp;", "&"),
    ]
    .iter()
    .fold(text, |t, (entity, plain)| t.replace(entity, plain));
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A hit from an engine's fields: `None` without an http(s) URL; an empty title becomes the
/// URL.
#[must_use]
pub fn hit(title: &str, url: &str, snippet: &str) -> Option<kun_ports::SearchHit> {
    let url = url.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return None;
    }
    let title = plain_snippet(title);
    Some(kun_ports::SearchHit {
        title: if title.is_empty() {
            url.to_owned()
        } else {
            title
        },
        url: url.to_owned(),
        snippet: plain_snippet(snippet),
    })
}
