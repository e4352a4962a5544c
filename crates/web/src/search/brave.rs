//! The Brave Search API: `GET {url}/res/v1/web/search?q=…&count=…` with the key in
//! `X-Subscription-Token`.

use super::http::{hit, send};
use async_trait::async_trait;
use kun_ports::{SearchHit, WebSearchBackend, WebSearchError};
use serde::Deserialize;

/// Brave's public endpoint.
pub const BRAVE_URL: &str = "https://api.search.brave.com";
/// The most results one Brave request returns.
const MAX_COUNT: usize = 20;

#[derive(Deserialize)]
struct Answer {
    /// Always `search`; its presence tells a search answer from anything else.
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    web: Option<Web>,
}

#[derive(Deserialize)]
struct Web {
    #[serde(default)]
    results: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    description: String,
}

/// The Brave Search API.
#[derive(Clone)]
pub struct Brave {
    base: String,
    key: String,
    http: reqwest::Client,
}

impl std::fmt::Debug for Brave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Brave")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Brave {
    /// Brave at `base` (normally [`BRAVE_URL`]) with this subscription key.
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
impl WebSearchBackend for Brave {
    fn name(&self) -> &str {
        "brave"
    }

    async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, WebSearchError> {
        let count = limit.clamp(1, MAX_COUNT).to_string();
        let request = self
            .http
            .get(format!("{}/res/v1/web/search", self.base))
            .query(&[("q", query), ("count", count.as_str())])
            .header(reqwest::header::ACCEPT, "application/json")
            .header("X-Subscription-Token", &self.key);
        let answer: Answer = send(self.name(), request).await?;
        if answer.kind != "search" {
            return Err(WebSearchError::new(
                kun_ports::WebSearchErrorKind::BadResponse,
                format!("brave answered a `{}` instead of a search", answer.kind),
            ));
        }
        Ok(answer
            .web
            .map(|web| web.results)
            .unwrap_or_default()
            .iter()
            .filter_map(|i| hit(&i.title, &i.url, &i.description))
            .take(limit.max(1))
            .collect())
    }
}
