//! Web search backends (`web_search`): a configured engine (searxng, Brave, Tavily, …) behind
//! one trait. The contract suite is `kun_ports::testkit::web_search_backend_contract`.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One search hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchHit {
    /// The page's title.
    pub title: String,
    /// The page's address (`http` or `https`).
    pub url: String,
    /// A short extract, as plain text (may be empty).
    pub snippet: String,
}

/// What went wrong with a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WebSearchErrorKind {
    /// The engine asked us to slow down (HTTP 429, or 503 with `Retry-After`).
    RateLimited {
        /// How long it asked us to wait, in whole seconds, when it said.
        retry_after_seconds: Option<u64>,
    },
    /// The engine took longer than the time limit.
    Timeout,
    /// The engine refused the request (bad key, quota, forbidden): another try will not help
    /// until the configuration changes.
    Rejected {
        /// The HTTP status.
        status: u16,
    },
    /// The engine failed (a 5xx) or could not be reached.
    Failed,
    /// The engine answered something that is not its documented response.
    BadResponse,
}

/// The backend failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSearchError {
    /// What went wrong.
    pub kind: WebSearchErrorKind,
    /// Details, in plain words.
    pub message: String,
}

impl WebSearchError {
    /// An error of `kind`.
    #[must_use]
    pub fn new(kind: WebSearchErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// Whether the engine asked us to slow down.
    #[must_use]
    pub const fn is_rate_limited(&self) -> bool {
        matches!(self.kind, WebSearchErrorKind::RateLimited { .. })
    }
}

impl fmt::Display for WebSearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "web search: {}", self.message)
    }
}

impl std::error::Error for WebSearchError {}

/// A configured search engine.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait WebSearchBackend: Send + Sync {
    /// The engine's name, for diagnostics (`searxng`, `brave`, `tavily`).
    fn name(&self) -> &str;

    /// Searches; at most `limit` hits (at least one is asked for), best first.
    ///
    /// # Errors
    /// When the engine fails; see [`WebSearchErrorKind`].
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, WebSearchError>;
}
