//! What the adapter needs to know about each MCP server, and how MCP tools are presented.
//!
//! These are plain values: the assembly root maps `[mcp_servers.NAME]` tables and
//! `.mcp.json` `mcpServers` entries onto [`McpServerConfig`], and `[mcp]` onto
//! [`SearchSettings`]. [`McpServerConfig::validate`] reports what cannot work, naming the server
//! and the field, before anything is started.
//!
//! ```
//! use kun_mcp::{McpServerConfig, TrustScope};
//! let config = McpServerConfig::stdio("github", "github-mcp-server")
//!     .with_args(["stdio"])
//!     .with_trust(TrustScope::Workspace, ["/work/project"]);
//! assert!(config.validate().is_ok());
//! assert!(config.enabled);
//! ```

use crate::trust::{DefinedBy, DefinitionId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// How long a server may take to start and answer `initialize`: 30 s.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long one tool call may take: 120 s.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// How the adapter reaches a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum TransportConfig {
    /// A child process speaking MCP on stdin/stdout. It runs in its own session and process
    /// group (not confined: MCP servers are the user's own programs), and the
    /// whole group is killed with the connection.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// The server's own environment variables, added to the allow-listed base
        /// (`PATH`, `HOME`, `LANG`, `LC_*`, …; see `kun_ports::process`): nothing else of ours
        /// reaches it.
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// The working directory (the current one when absent).
        #[serde(default)]
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP endpoint.
    StreamableHttp {
        /// The endpoint, `http://` or `https://` (the latter needs the `rustls` feature).
        url: String,
        /// Extra request headers (for example `Authorization`).
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

impl TransportConfig {
    /// A short description for diagnostics: the command line or the URL (never headers or
    /// environment values, which may hold secrets).
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Self::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for arg in args {
                    line.push(' ');
                    line.push_str(arg);
                }
                line
            }
            Self::StreamableHttp { url, .. } => url.clone(),
        }
    }

    /// `stdio` or `streamable_http`.
    #[must_use]
    pub const fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::StreamableHttp { .. } => "streamable_http",
        }
    }
}

/// Where a server the **user** defined is trusted (`trust_scope` in its entry). A workspace
/// definition's scope is ignored: see [`trust`](crate::trust).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustScope {
    /// Trusted in every workspace.
    #[default]
    User,
    /// Trusted only inside `trusted_workspace_roots` (with none, nowhere).
    Workspace,
}

/// When to reconnect after a server dies or fails to start: exponential backoff from
/// `initial_delay`, doubling up to `max_delay`, for at most `max_attempts` attempts in a row.
/// A successful connection resets the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReconnectPolicy {
    /// The delay before the first retry.
    pub initial_delay: Duration,
    /// The longest delay between two attempts.
    pub max_delay: Duration,
    /// How many failed attempts in a row before giving up (0: never retry).
    pub max_attempts: u32,
}

impl ReconnectPolicy {
    /// The delay before retry number `attempt` (1-based): `initial · 2^(attempt-1)`, capped.
    ///
    /// ```
    /// use std::time::Duration;
    /// let policy = kun_mcp::ReconnectPolicy::default();
    /// assert_eq!(policy.delay(1), Duration::from_secs(1));
    /// assert_eq!(policy.delay(3), Duration::from_secs(4));
    /// assert_eq!(policy.delay(30), Duration::from_secs(30));
    /// ```
    #[must_use]
    pub fn delay(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(20);
        self.initial_delay
            .saturating_mul(1 << exponent)
            .min(self.max_delay)
    }
}

impl Default for ReconnectPolicy {
    /// 1 s, 2 s, 4 s, … up to 30 s; six attempts.
    fn default() -> Self {
        Self {
            initial_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            max_attempts: 6,
        }
    }
}

/// One MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerConfig {
    /// The server's name as configured (the key of `mcpServers` / `[mcp_servers.NAME]`).
    pub name: String,
    /// How to reach it.
    pub transport: TransportConfig,
    /// The user's switch; a disabled server is listed in diagnostics as disabled and never
    /// started.
    pub enabled: bool,
    /// Who wrote the definition (see [`trust`](crate::trust)).
    #[serde(default)]
    pub defined_by: DefinedBy,
    /// Where a user definition is trusted.
    pub trust_scope: TrustScope,
    /// Where a user definition with `trust_scope = workspace` is trusted.
    pub trusted_workspace_roots: Vec<PathBuf>,
    /// Where the server is visible at all (empty: everywhere).
    pub workspace_roots: Vec<PathBuf>,
    /// How long starting and the `initialize` handshake may take.
    pub startup_timeout: Duration,
    /// How long one tool call may take.
    pub call_timeout: Duration,
    /// When to reconnect.
    pub reconnect: ReconnectPolicy,
    /// Where a stdio server starts when its definition names no `cwd`: the workspace, as
    /// Claude Code and Codex do, so `command = "./tools/server"` means the workspace's file.
    /// Not part of the definition (a pinned definition stays pinned in every workspace).
    #[serde(default)]
    pub default_cwd: Option<PathBuf>,
}

impl McpServerConfig {
    /// A stdio server with the defaults: enabled, user-trusted, visible everywhere.
    #[must_use]
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> Self {
        Self::with_transport(
            name,
            TransportConfig::Stdio {
                command: command.into(),
                args: Vec::new(),
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    /// A streamable-HTTP server with the defaults.
    #[must_use]
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::with_transport(
            name,
            TransportConfig::StreamableHttp {
                url: url.into(),
                headers: BTreeMap::new(),
            },
        )
    }

    /// A server reached through `transport`, with the defaults.
    #[must_use]
    pub fn with_transport(name: impl Into<String>, transport: TransportConfig) -> Self {
        Self {
            name: name.into(),
            transport,
            enabled: true,
            defined_by: DefinedBy::User,
            trust_scope: TrustScope::User,
            trusted_workspace_roots: Vec::new(),
            workspace_roots: Vec::new(),
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            reconnect: ReconnectPolicy::default(),
            default_cwd: None,
        }
    }

    /// Sets the stdio arguments (ignored for HTTP servers).
    #[must_use]
    pub fn with_args<S: Into<String>>(mut self, new_args: impl IntoIterator<Item = S>) -> Self {
        if let TransportConfig::Stdio { args, .. } = &mut self.transport {
            *args = new_args.into_iter().map(Into::into).collect();
        }
        self
    }

    /// Adds a stdio environment variable (ignored for HTTP servers).
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let TransportConfig::Stdio { env, .. } = &mut self.transport {
            env.insert(key.into(), value.into());
        }
        self
    }

    /// Adds an HTTP header (ignored for stdio servers).
    #[must_use]
    pub fn with_header(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        if let TransportConfig::StreamableHttp { headers, .. } = &mut self.transport {
            headers.insert(key.into(), value.into());
        }
        self
    }

    /// Sets the trust scope and the roots a workspace-scoped server is trusted in.
    #[must_use]
    pub fn with_trust<P: Into<PathBuf>>(
        mut self,
        scope: TrustScope,
        roots: impl IntoIterator<Item = P>,
    ) -> Self {
        self.trust_scope = scope;
        self.trusted_workspace_roots = roots.into_iter().map(Into::into).collect();
        self
    }

    /// Says who wrote the definition (the user by default).
    #[must_use]
    pub const fn defined_by(mut self, by: DefinedBy) -> Self {
        self.defined_by = by;
        self
    }

    /// The id of this exact definition, `<name>:<hash>` (see [`DefinitionId`]).
    #[must_use]
    pub fn definition_id(&self) -> DefinitionId {
        DefinitionId::of(self)
    }

    /// Restricts where the server is visible.
    #[must_use]
    pub fn visible_in<P: Into<PathBuf>>(mut self, roots: impl IntoIterator<Item = P>) -> Self {
        self.workspace_roots = roots.into_iter().map(Into::into).collect();
        self
    }

    /// Turns the server off (or on).
    #[must_use]
    pub const fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Sets both timeouts.
    #[must_use]
    pub const fn with_timeouts(mut self, startup: Duration, call: Duration) -> Self {
        self.startup_timeout = startup;
        self.call_timeout = call;
        self
    }

    /// Sets the reconnect policy.
    #[must_use]
    pub const fn with_reconnect(mut self, reconnect: ReconnectPolicy) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// The provider id of this server: `mcp:<name>`.
    #[must_use]
    pub fn provider_id(&self) -> String {
        format!("mcp:{}", self.name)
    }

    /// Checks what can be checked without starting anything.
    ///
    /// # Errors
    /// The first problem found, naming the server and the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fail = |field: &'static str, message: String| {
            Err(ConfigError {
                server: self.name.clone(),
                field,
                message,
            })
        };
        if self.name.trim().is_empty() {
            return fail("name", "a server needs a non-empty name".to_owned());
        }
        match &self.transport {
            TransportConfig::Stdio { command, .. } if command.trim().is_empty() => {
                return fail(
                    "command",
                    "a stdio server needs the program to run in `command`".to_owned(),
                );
            }
            TransportConfig::StreamableHttp { url, .. }
                if !(url.starts_with("http://") || url.starts_with("https://")) =>
            {
                return fail("url", format!("`{url}` is not an http:// or https:// URL"));
            }
            TransportConfig::StreamableHttp { headers, .. } => {
                for (name, value) in headers {
                    if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                        return fail(
                            "headers",
                            format!("`{name}` is not a valid HTTP header name"),
                        );
                    }
                    if reqwest::header::HeaderValue::from_str(value).is_err() {
                        return fail(
                            "headers",
                            format!("the value of `{name}` is not a valid HTTP header value"),
                        );
                    }
                }
            }
            TransportConfig::Stdio { .. } => {}
        }
        if self.startup_timeout.is_zero() {
            return fail("startup_timeout", "must be longer than zero".to_owned());
        }
        if self.call_timeout.is_zero() {
            return fail("call_timeout", "must be longer than zero".to_owned());
        }
        Ok(())
    }
}

/// A server configuration that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("MCP server `{server}`: `{field}`: {message}")]
pub struct ConfigError {
    /// The server's name.
    pub server: String,
    /// The offending field.
    pub field: &'static str,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// How MCP tools reach the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// Every MCP tool is listed with its schema.
    Direct,
    /// The catalog lists `mcp_search`, `mcp_describe` and `mcp_call` instead; the MCP tools
    /// stay registered (hidden) so their own gates still apply.
    Search,
    /// Search when the connected servers offer at least `threshold` tools, direct otherwise.
    #[default]
    Auto,
}

impl SearchMode {
    /// The name used in configuration.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::Search => "search",
            Self::Auto => "auto",
        }
    }
}

impl fmt::Display for SearchMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SearchMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "direct" => Ok(Self::Direct),
            "search" => Ok(Self::Search),
            "auto" => Ok(Self::Auto),
            other => Err(format!(
                "unknown MCP search mode `{other}`; use `direct`, `search` or `auto`"
            )),
        }
    }
}

/// `[mcp]`: search mode and its knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchSettings {
    /// Direct, search or auto.
    pub mode: SearchMode,
    /// In auto mode, the tool count from which search is used.
    pub threshold: usize,
    /// Results `mcp_search` returns when the model does not ask for a number.
    pub top_k: usize,
    /// The most results one search may return.
    pub top_k_max: usize,
}

impl Default for SearchSettings {
    /// Auto from 40 tools, 5 results by default, at most 20.
    fn default() -> Self {
        Self {
            mode: SearchMode::Auto,
            threshold: 40,
            top_k: 5,
            top_k_max: 20,
        }
    }
}

impl SearchSettings {
    /// Whether search mode is on for `tool_count` tools across the connected servers.
    ///
    /// ```
    /// use kun_mcp::{SearchMode, SearchSettings};
    /// let auto = SearchSettings { threshold: 10, ..SearchSettings::default() };
    /// assert!(!auto.uses_search(9));
    /// assert!(auto.uses_search(10));
    /// let direct = SearchSettings { mode: SearchMode::Direct, ..auto };
    /// assert!(!direct.uses_search(1000));
    /// ```
    #[must_use]
    pub const fn uses_search(&self, tool_count: usize) -> bool {
        match self.mode {
            SearchMode::Direct => false,
            SearchMode::Search => true,
            SearchMode::Auto => tool_count >= self.threshold,
        }
    }

    /// The number of results for a requested `top_k` (absent or zero: the default; capped).
    #[must_use]
    pub fn results_for(&self, requested: Option<u64>) -> usize {
        let max = self.top_k_max.max(1);
        match requested {
            None | Some(0) => self.top_k.clamp(1, max),
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX).min(max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_server_and_field() {
        let empty = McpServerConfig::stdio("fs", "  ");
        let err = empty.validate().unwrap_err();
        assert_eq!(err.field, "command");
        assert!(
            err.to_string().starts_with("MCP server `fs`: `command`"),
            "{err}"
        );

        let bad_url = McpServerConfig::http("remote", "ftp://example.com");
        assert_eq!(bad_url.validate().unwrap_err().field, "url");

        let zero =
            McpServerConfig::stdio("t", "x").with_timeouts(Duration::ZERO, Duration::from_secs(1));
        assert_eq!(zero.validate().unwrap_err().field, "startup_timeout");

        let header =
            McpServerConfig::http("h", "http://localhost/mcp").with_header("bad header", "x");
        assert_eq!(header.validate().unwrap_err().field, "headers");
        let value =
            McpServerConfig::http("h", "http://localhost/mcp").with_header("X-A", "line\nbreak");
        assert_eq!(value.validate().unwrap_err().field, "headers");

        let unnamed = McpServerConfig::stdio(" ", "x");
        assert_eq!(unnamed.validate().unwrap_err().field, "name");
    }

    #[test]
    fn describe_never_shows_secrets() {
        let server = McpServerConfig::stdio("gh", "gh-mcp")
            .with_args(["--stdio"])
            .with_env("GITHUB_TOKEN", "secret");
        assert_eq!(server.transport.describe(), "gh-mcp --stdio");
        let http = McpServerConfig::http("h", "http://localhost:1/mcp")
            .with_header("Authorization", "Bearer secret");
        assert_eq!(http.transport.describe(), "http://localhost:1/mcp");
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let policy = ReconnectPolicy {
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
            max_attempts: 3,
        };
        let delays: Vec<u128> = (1..=5).map(|n| policy.delay(n).as_millis()).collect();
        assert_eq!(delays, [100, 200, 400, 500, 500]);
        assert_eq!(policy.delay(u32::MAX), Duration::from_millis(500));
    }

    #[test]
    fn search_mode_parses_and_top_k_is_bounded() {
        assert_eq!("search".parse::<SearchMode>().unwrap(), SearchMode::Search);
        assert!(
            "many"
                .parse::<SearchMode>()
                .unwrap_err()
                .contains("`direct`")
        );
        let settings = SearchSettings::default();
        assert_eq!(settings.results_for(None), 5);
        assert_eq!(settings.results_for(Some(0)), 5);
        assert_eq!(settings.results_for(Some(3)), 3);
        assert_eq!(settings.results_for(Some(1_000)), 20);
    }
}
