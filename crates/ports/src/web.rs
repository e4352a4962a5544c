//! Web search backends (`web_search`).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// One search hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    /// Title.
    pub title: String,
    /// URL.
    pub url: String,
    /// Snippet.
    pub snippet: String,
}

/// The backend failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("web search: {message}")]
pub struct WebSearchError {
    /// What failed.
    pub message: String,
    /// The backend said to slow down.
    pub rate_limited: bool,
}

/// A configured search engine.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait WebSearchBackend: Send + Sync {
    /// Searches; at most `limit` hits.
    ///
    /// # Errors
    /// When the backend fails.
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, WebSearchError>;
}
