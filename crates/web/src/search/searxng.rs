//! searxng's JSON API: `GET {url}/search?q=…&format=json` (the instance must list `json` in
//! `search.formats`).

use super::http::{hit, send};
use async_trait::async_trait;
use kun_ports::{SearchHit, WebSearchBackend, WebSearchError};
use serde::Deserialize;

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
    content: Option<String>,
}

/// A searxng instance.
#[derive(Debug, Clone)]
pub struct Searxng {
    base: String,
    http: reqwest::Client,
}

impl Searxng {
    /// The instance at `base` (e.g. `http://127.0.0.1:8888`).
    #[must_use]
    pub fn new(base: &str, http: reqwest::Client) -> Self {
        Self {
            base: base.trim_end_matches('/').to_owned(),
            http,
        }
    }
}

#[async_trait]
impl WebSearchBackend for Searxng {
    fn name(&self) -> &str {
        "searxng"
    }

    async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, WebSearchError> {
        let request = self
            .http
            .get(format!("{}/search", self.base))
            .query(&[("q", query), ("format", "json"), ("pageno", "1")])
            .header(reqwest::header::ACCEPT, "application/json");
        let answer: Answer = send(self.name(), request).await?;
        Ok(answer
            .results
            .iter()
            .filter_map(|i| hit(&i.title, &i.url, i.content.as_deref().unwrap_or_default()))
            .take(limit.max(1))
            .collect())
    }
}
