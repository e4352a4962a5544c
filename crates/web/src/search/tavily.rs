//! The Tavily search API: `POST {url}/search` with a JSON body and the key as a bearer token.

use super::http::{hit, send};
use async_trait::async_trait;
use kun_ports::{SearchHit, WebSearchBackend, WebSearchError};
use serde::Deserialize;
use serde_json::json;

/// Tavily's public endpoint.
pub const TAVILY_URL: &str = "https://api.tavily.com";
/// The most results one Tavily request returns.
const MAX_RESULTS: usize = 20;

#[derive(Deserialize)]
struct Answer {
    results: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    content: String,
}

/// The Tavily search API.
#[derive(Clone)]
pub struct Tavily {
    base: String,
    key: String,
    http: reqwest::Client,
}

impl std::fmt::Debug for Tavily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tavily")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Tavily {
    /// Tavily at `base` (normally [`TAVILY_URL`]) with this API key.
    #[must_use]
    pub fn new(base: &str, key: String, http: reqwest::Client) -> Self {
        Self {
            base: base.trim_end_matches('/').to_owned(),
            key,
            http,
        }
    }
}

#[async_trait]
impl WebSearchBackend for Tavily {
    fn name(&self) -> &str {
        "tavily"
    }

    async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, WebSearchError> {
        let body = json!({
            "query": query,
            "max_results": limit.clamp(1, MAX_RESULTS),
            "search_depth": "basic",
        });
        let request = self
            .http
            .post(format!("{}/search", self.base))
            .bearer_auth(&self.key)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_string());
        let answer: Answer = send(self.name(), request).await?;
        Ok(answer
            .results
            .iter()
            .filter_map(|i| hit(&i.title, &i.url, &i.content))
            .take(limit.max(1))
            .collect())
    }
}
