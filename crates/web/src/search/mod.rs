//! `web_search` and its engines: [`Searxng`], [`Brave`], [`Tavily`] behind the
//! [`kun_ports::WebSearchBackend`] port.
//!
//! | engine    | needs                               | request                                          |
//! |-----------|-------------------------------------|--------------------------------------------------|
//! | `searxng` | `url` of the instance               | `GET {url}/search?q=…&format=json`                |
//! | `brave`   | the key in `api_key_env` (default `BRAVE_API_KEY`); `url` optional | `GET {url}/res/v1/web/search?q=…&count=…` |
//! | `tavily`  | the key in `api_key_env` (default `TAVILY_API_KEY`); `url` optional | `POST {url}/search` |
//!
//! The engine's `url` is the user's own choice and is not put behind the address guard (a
//! searxng on `127.0.0.1` is the usual set-up). Without a usable configuration the search
//! provider is unavailable with the reason, and `web_search` is not advertised.

mod brave;
mod http;
mod searxng;
mod tavily;
mod tool;

pub use brave::{BRAVE_URL, Brave};
pub use http::{client, hit, plain_snippet};
pub use searxng::Searxng;
pub use tavily::{TAVILY_URL, Tavily};
pub use tool::{SearchArgs, SearchResults, WebSearchTool};

use kun_ports::WebSearchBackend;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// A search engine kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchEngine {
    /// A searxng instance (JSON API).
    Searxng,
    /// The Brave Search API.
    Brave,
    /// The Tavily API.
    Tavily,
}

impl SearchEngine {
    /// Its name in configuration.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Searxng => "searxng",
            Self::Brave => "brave",
            Self::Tavily => "tavily",
        }
    }

    /// The variable holding the key when `api_key_env` is not given.
    #[must_use]
    pub const fn default_key_variable(self) -> Option<&'static str> {
        match self {
            Self::Searxng => None,
            Self::Brave => Some("BRAVE_API_KEY"),
            Self::Tavily => Some("TAVILY_API_KEY"),
        }
    }
}

impl fmt::Display for SearchEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SearchEngine {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "searxng" => Ok(Self::Searxng),
            "brave" => Ok(Self::Brave),
            "tavily" => Ok(Self::Tavily),
            other => Err(format!(
                "unknown search backend `{other}`; expected searxng, brave or tavily"
            )),
        }
    }
}

/// `[web.search]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchConfig {
    /// Which engine.
    pub engine: SearchEngine,
    /// The endpoint (required for searxng; overrides the public API otherwise).
    pub url: Option<String>,
    /// The name of the environment variable holding the API key.
    pub api_key_env: Option<String>,
}

/// The backend for `config`, reading the API key through `env`; the reason when it cannot
/// be used.
///
/// ```
/// use kun_web::search::{SearchConfig, SearchEngine, backend};
/// use std::time::Duration;
/// let brave = SearchConfig { engine: SearchEngine::Brave, url: None, api_key_env: None };
/// let Err(reason) = backend(&brave, Duration::from_secs(5), "kun", &|_| None) else {
///     panic!("brave needs its key");
/// };
/// assert!(reason.contains("BRAVE_API_KEY"), "{reason}");
/// ```
///
/// # Errors
/// A searxng without `url`; a key variable that is unset or empty; TLS that cannot be set up.
pub fn backend(
    config: &SearchConfig,
    timeout: Duration,
    user_agent: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn WebSearchBackend>, String> {
    let key = || {
        let variable = config
            .api_key_env
            .as_deref()
            .or(config.engine.default_key_variable())
            .unwrap_or_default();
        env(variable)
            .filter(|value| !value.trim().is_empty())
            .ok_or_else(|| {
                format!(
                    "[web.search] backend = \"{}\" needs its API key in the environment variable \
                     {variable}, which is not set",
                    config.engine
                )
            })
    };
    let http = || client(timeout, user_agent);
    Ok(match config.engine {
        SearchEngine::Searxng => {
            let url = config
                .url
                .as_deref()
                .filter(|u| !u.trim().is_empty())
                .ok_or(
                    "[web.search] backend = \"searxng\" needs url (the instance, e.g. \
                 http://127.0.0.1:8888)",
                )?;
            Arc::new(Searxng::new(url, http()?))
        }
        SearchEngine::Brave => {
            let key = key()?;
            Arc::new(Brave::new(
                config.url.as_deref().unwrap_or(BRAVE_URL),
                key,
                http()?,
            ))
        }
        SearchEngine::Tavily => {
            let key = key()?;
            Arc::new(Tavily::new(
                config.url.as_deref().unwrap_or(TAVILY_URL),
                key,
                http()?,
            ))
        }
    })
}
