//! `[memory]`, `[web]` and `[web.search]`: their tables, their resolved settings, and how a
//! layer merges into them.
//!
//! Their rules are in [`super::narrowing::RULES`]:
//!
//! | key                            | rule        | why |
//! |--------------------------------|-------------|-----|
//! | `memory.path`                  | user-only   | a repository must not point the memory at a file of its choosing |
//! | `web.allow_private_addresses`  | only off    | `true` opens the SSRF guard |
//! | `web.timeout_seconds`          | lower       | |
//! | `web.max_bytes`                | lower       | |
//! | `web.user_agent`               | user-only   | the user's identity on the web |
//! | `web.search` (all of it)       | user-only   | `api_key_env` names a variable whose value is sent to `url`: a repository could send any secret of the environment anywhere |

use super::{ConfigError, line_of};
use kun_web::{PrivateAddresses, SearchConfig, SearchEngine, WebOptions};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `[memory]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryTable {
    /// The SQLite file (default `$XDG_DATA_HOME/kun/memory.sqlite`); relative to the
    /// configuration file's directory.
    pub path: Option<PathBuf>,
}

/// `[web.search]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearchTable {
    /// `searxng`, `brave` or `tavily`.
    pub backend: Option<String>,
    /// The engine's endpoint (required for searxng).
    pub url: Option<String>,
    /// The name of the environment variable holding the API key (brave, tavily).
    pub api_key_env: Option<String>,
}

/// `[web]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WebTable {
    /// Let `web_fetch` reach private, loopback and link-local addresses.
    pub allow_private_addresses: Option<bool>,
    /// Time limit of one fetch or search.
    pub timeout_seconds: Option<u32>,
    /// The `User-Agent` sent.
    pub user_agent: Option<String>,
    /// The most bytes of a body `web_fetch` reads.
    pub max_bytes: Option<u32>,
    /// `[web.search]`.
    pub search: Option<WebSearchTable>,
}

/// The resolved `[memory]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MemorySettings {
    /// The file; `None`: the default in the user data directory.
    pub path: Option<PathBuf>,
}

impl MemorySettings {
    /// The file in effect: `[memory] path`, else the default; `None` without a home or data
    /// directory.
    #[must_use]
    pub fn file(&self) -> Option<PathBuf> {
        self.path.clone().or_else(kun_memory::default_memory_path)
    }
}

/// The resolved `[web]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct WebSettings {
    /// `web.allow_private_addresses`.
    pub allow_private_addresses: bool,
    /// `web.timeout_seconds`.
    pub timeout_seconds: Option<u32>,
    /// `web.user_agent`.
    pub user_agent: Option<String>,
    /// `web.max_bytes`.
    pub max_bytes: Option<u32>,
    /// `[web.search]`, when configured.
    #[serde(skip)]
    pub search: Option<SearchConfig>,
}

impl WebSettings {
    /// The options of the web tools.
    #[must_use]
    pub fn options(&self) -> WebOptions {
        let defaults = WebOptions::default();
        WebOptions {
            private_addresses: if self.allow_private_addresses {
                PrivateAddresses::Allowed
            } else {
                PrivateAddresses::Blocked
            },
            timeout: self
                .timeout_seconds
                .map_or(defaults.timeout, |s| Duration::from_secs(u64::from(s))),
            user_agent: self.user_agent.clone().unwrap_or(defaults.user_agent),
            max_bytes: self.max_bytes.map_or(defaults.max_bytes, |n| n as usize),
        }
    }
}

/// A `[memory] path` as written in `file`: relative paths are relative to its directory.
#[must_use]
pub(super) fn memory_path(file: &Path, path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        path
    } else {
        file.parent().unwrap_or(Path::new(".")).join(path)
    }
}

/// Checks `[web]` of one file and parses `[web.search]`.
///
/// # Errors
/// A zero limit, an unknown backend, a `[web.search]` without a backend.
pub(super) fn check_web(
    table: Option<&WebTable>,
    path: &Path,
    text: &str,
) -> Result<Option<SearchConfig>, ConfigError> {
    let error = |key: &str, message: String| {
        let leaf = key.rsplit('.').next().unwrap_or(key);
        ConfigError {
            file: path.to_path_buf(),
            line: line_of(text, leaf),
            key: Some(key.to_owned()),
            message,
        }
    };
    let Some(table) = table else { return Ok(None) };
    for (key, value) in [
        ("web.timeout_seconds", table.timeout_seconds),
        ("web.max_bytes", table.max_bytes),
    ] {
        if value == Some(0) {
            return Err(error(key, "must be at least 1".to_owned()));
        }
    }
    let Some(search) = &table.search else {
        return Ok(None);
    };
    let backend = search.backend.as_deref().ok_or_else(|| {
        error(
            "web.search.backend",
            "[web.search] needs backend = \"searxng\", \"brave\" or \"tavily\"".to_owned(),
        )
    })?;
    let engine: SearchEngine = backend
        .parse()
        .map_err(|message: String| error("web.search.backend", message))?;
    Ok(Some(SearchConfig {
        engine,
        url: search.url.clone(),
        api_key_env: search.api_key_env.clone(),
    }))
}
