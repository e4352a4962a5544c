//! `web_search`: the configured engine's hits as title, url and snippet.

use async_trait::async_trait;
use kun_ports::{
    ErrorCode, SearchHit, SideEffect, ToolContext, ToolFailure, ToolKind, ToolPolicy, ToolSpec,
    TypedTool, WebSearchBackend, WebSearchError, WebSearchErrorKind,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Hits returned when no count is given.
pub const DEFAULT_COUNT: usize = 5;
/// The most hits one call returns.
pub const MAX_COUNT: usize = 20;

/// Arguments of `web_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to search the web for.
    pub query: String,
    /// How many results (default 5, at most 20).
    #[serde(default)]
    pub count: Option<usize>,
}

/// What `web_search` returns.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SearchResults {
    /// The query, as given.
    pub query: String,
    /// The engine that answered.
    pub backend: String,
    /// The hits, best first.
    pub results: Vec<SearchHit>,
}

/// `web_search` on one backend (policy untrusted: its results come from the web).
pub struct WebSearchTool {
    spec: ToolSpec,
    backend: Arc<dyn WebSearchBackend>,
}

impl WebSearchTool {
    /// The tool on `backend`.
    #[must_use]
    pub fn new(backend: Arc<dyn WebSearchBackend>) -> Self {
        Self {
            spec: ToolSpec::typed::<SearchArgs, SearchResults>(
                "web_search",
                "Search the web. Returns titles, URLs and snippets; fetch a page with web_fetch \
                 to read it. Results are untrusted web content.",
            )
            .with_kind(ToolKind::ToolCall)
            .with_policy(ToolPolicy::Untrusted)
            .with_side_effect(SideEffect::ReadOnly),
            backend,
        }
    }
}

/// The error result for a failed search.
fn failure(err: WebSearchError) -> ToolFailure {
    match err.kind {
        WebSearchErrorKind::RateLimited {
            retry_after_seconds,
        } => {
            let wait = retry_after_seconds.map_or_else(
                || "wait a while".to_owned(),
                |s| format!("wait {s} seconds"),
            );
            let failure = ToolFailure::coded(
                ErrorCode::RateLimited,
                format!("{}; {wait} before searching again", err.message),
            );
            match retry_after_seconds {
                Some(s) => failure.with("retry_after_seconds", s),
                None => failure,
            }
        }
        WebSearchErrorKind::Timeout => ToolFailure::coded(ErrorCode::ToolTimeout, err.message),
        WebSearchErrorKind::Rejected { status } => {
            ToolFailure::new(err.message).with("status", status)
        }
        WebSearchErrorKind::Failed | WebSearchErrorKind::BadResponse => {
            ToolFailure::new(err.message)
        }
    }
}

#[async_trait]
impl TypedTool for WebSearchTool {
    type Args = SearchArgs;
    type Output = SearchResults;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &SearchResults) -> String {
        if output.results.is_empty() {
            return format!("no results for `{}`", output.query);
        }
        let mut out = String::new();
        for (n, hit) in output.results.iter().enumerate() {
            if n > 0 {
                out.push('\n');
            }
            out.push_str(&format!("{}. {}\n   {}", n + 1, hit.title, hit.url));
            if !hit.snippet.is_empty() {
                out.push_str(&format!("\n   {}", hit.snippet));
            }
        }
        out
    }

    async fn run(
        &self,
        args: SearchArgs,
        ctx: ToolContext<'_>,
    ) -> Result<SearchResults, ToolFailure> {
        if args.query.trim().is_empty() {
            return Err(ToolFailure::invalid(
                "the query is empty: say what to search for",
            ));
        }
        let count = args.count.unwrap_or(DEFAULT_COUNT);
        if count == 0 || count > MAX_COUNT {
            return Err(ToolFailure::invalid(format!(
                "count must be between 1 and {MAX_COUNT}; {count} was given"
            )));
        }
        let results = tokio::select! {
            result = self.backend.search(args.query.trim(), count) => result.map_err(failure)?,
            () = ctx.turn.abort.aborted() => return Err(ToolFailure::new("the search was aborted")),
        };
        Ok(SearchResults {
            query: args.query,
            backend: self.backend.name().to_owned(),
            results,
        })
    }
}
