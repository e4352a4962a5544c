//! `[memory]`, `[web]` and `[web.search]`: their tables, their resolved settings, and how a
//! layer merges into them.
//!
//! A workspace's own `.kun/config.toml` may only narrow these keys; everything that widens
//! comes from the user's own files (user config, `--config`):
//!
//! | key                            | from a workspace config                  | why |
//! |--------------------------------|------------------------------------------|-----|
//! | `memory.path`                  | ignored (user config and `--config` only) | a repository must not point the memory at a file of its choosing |
//! | `web.allow_private_addresses`  | only `false`                             | `true` opens the SSRF guard |
//! | `web.timeout_seconds`          | only lower                               | |
//! | `web.max_bytes`                | only lower                               | |
//! | `web.user_agent`               | ignored                                  | the user's identity on the web |
//! | `web.search.*`                 | ignored                                  | `api_key_env` names a variable whose value is sent to `url`: a repository could send any secret of the environment anywhere |
//!
//! Every ignored value is logged as a warning naming the key and the file.

use super::{ConfigError, Source, line_of};
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

/// One layer's `[memory]` and `[web]`, merged by the rules of the module table.
pub(super) struct Layer<'a> {
    pub path: &'a Path,
    pub text: &'a str,
    pub source: &'a Source,
}

impl Layer<'_> {
    fn is_workspace(&self) -> bool {
        matches!(self.source, Source::Workspace(_))
    }

    fn ignored(&self, key: &str, why: &str) {
        tracing::warn!(
            key,
            file = %self.path.display(),
            "ignored `{key}` from the workspace config: {why}; set it in your user config"
        );
    }

    fn error(&self, key: &str, message: impl Into<String>) -> ConfigError {
        let leaf = key.rsplit('.').next().unwrap_or(key);
        ConfigError {
            file: self.path.to_path_buf(),
            line: line_of(self.text, leaf),
            key: Some(key.to_owned()),
            message: message.into(),
        }
    }

    /// Merges `[memory]`; returns the keys applied.
    pub fn memory(
        &self,
        table: Option<MemoryTable>,
        into: &mut MemorySettings,
    ) -> Vec<&'static str> {
        let Some(path) = table.and_then(|t| t.path) else {
            return Vec::new();
        };
        if self.is_workspace() {
            self.ignored("memory.path", "a workspace cannot choose the memory file");
            return Vec::new();
        }
        let base = self.path.parent().unwrap_or(Path::new("."));
        into.path = Some(if path.is_absolute() {
            path
        } else {
            base.join(path)
        });
        vec!["memory.path"]
    }

    /// Merges `[web]` and `[web.search]`; returns the keys applied.
    ///
    /// # Errors
    /// A zero limit, an unknown backend, a `[web.search]` without a backend.
    pub fn web(
        &self,
        table: Option<WebTable>,
        into: &mut WebSettings,
    ) -> Result<Vec<&'static str>, ConfigError> {
        let Some(table) = table else {
            return Ok(Vec::new());
        };
        let mut applied = Vec::new();
        if let Some(allow) = table.allow_private_addresses {
            if self.is_workspace() && allow {
                self.ignored(
                    "web.allow_private_addresses",
                    "a workspace may only turn it off",
                );
            } else {
                into.allow_private_addresses = allow;
                applied.push("web.allow_private_addresses");
            }
        }
        for (key, value, slot, default) in [
            (
                "web.timeout_seconds",
                table.timeout_seconds,
                &mut into.timeout_seconds,
                30,
            ),
            (
                "web.max_bytes",
                table.max_bytes,
                &mut into.max_bytes,
                u32::try_from(kun_web::DEFAULT_MAX_BYTES).unwrap_or(u32::MAX),
            ),
        ] {
            let Some(value) = value else { continue };
            if value == 0 {
                return Err(self.error(key, "must be at least 1"));
            }
            if self.is_workspace() && value > slot.unwrap_or(default) {
                self.ignored(key, "a workspace may only lower it");
            } else {
                *slot = Some(value);
                applied.push(key);
            }
        }
        if let Some(agent) = table.user_agent {
            if self.is_workspace() {
                self.ignored("web.user_agent", "a workspace cannot change it");
            } else {
                into.user_agent = Some(agent);
                applied.push("web.user_agent");
            }
        }
        if let Some(search) = table.search {
            if self.is_workspace() {
                self.ignored(
                    "web.search",
                    "a workspace cannot choose the search engine or its key",
                );
            } else {
                let backend = search.backend.as_deref().ok_or_else(|| {
                    self.error(
                        "web.search.backend",
                        "[web.search] needs backend = \"searxng\", \"brave\" or \"tavily\"",
                    )
                })?;
                let engine: SearchEngine = backend
                    .parse()
                    .map_err(|message: String| self.error("web.search.backend", message))?;
                into.search = Some(SearchConfig {
                    engine,
                    url: search.url,
                    api_key_env: search.api_key_env,
                });
                applied.push("web.search");
            }
        }
        Ok(applied)
    }
}
