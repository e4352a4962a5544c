//! The providers: `web` (`web_fetch`) and `web-search` (`web_search`), both kind `web`, both
//! [`Delegable`] (a read-only child agent gets `web_fetch` and `web_search`, SPEC §9).

use crate::fetch::{FetchOptions, Fetcher};
use crate::fetch_tool::{DEFAULT_MAX_BYTES, WebFetchTool};
use crate::guard::{AddressGuard, PrivateAddresses};
use crate::search::{SearchConfig, WebSearchTool, backend};
use kun_ports::{Delegable, ProviderKind, ProviderPolicy, Tool, ToolProvider, WebSearchBackend};
use std::sync::Arc;
use std::time::Duration;

/// `[web]`: how the web tools behave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebOptions {
    /// Whether private addresses may be fetched.
    pub private_addresses: PrivateAddresses,
    /// The time limit of one fetch or search.
    pub timeout: Duration,
    /// The `User-Agent`.
    pub user_agent: String,
    /// The most bytes of a body `web_fetch` reads.
    pub max_bytes: usize,
}

impl Default for WebOptions {
    fn default() -> Self {
        let fetch = FetchOptions::default();
        Self {
            private_addresses: PrivateAddresses::Blocked,
            timeout: fetch.timeout,
            user_agent: fetch.user_agent,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl WebOptions {
    /// The fetch options these imply.
    #[must_use]
    pub fn fetch_options(&self) -> FetchOptions {
        FetchOptions {
            timeout: self.timeout,
            user_agent: self.user_agent.clone(),
            ..FetchOptions::default()
        }
    }
}

/// The `web` provider: `web_fetch`.
///
/// ```
/// use kun_web::{WebOptions, WebProvider};
/// use kun_ports::ToolProvider;
/// let provider = WebProvider::new(&WebOptions::default());
/// assert!(provider.policy().is_usable());
/// assert_eq!(provider.tools()[0].spec().name, "web_fetch");
/// ```
pub struct WebProvider {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for WebProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebProvider")
            .field("tools", &self.tools.len())
            .finish()
    }
}

impl WebProvider {
    /// `web_fetch` with these options and the default guard.
    #[must_use]
    pub fn new(options: &WebOptions) -> Self {
        Self::with_guard(options, AddressGuard::new(options.private_addresses))
    }

    /// `web_fetch` with these options and this guard (to exempt a known local service).
    #[must_use]
    pub fn with_guard(options: &WebOptions, guard: AddressGuard) -> Self {
        let fetcher = Fetcher::new(guard, options.fetch_options());
        Self {
            tools: vec![Arc::new(WebFetchTool::new(fetcher, options.max_bytes)) as Arc<dyn Tool>],
        }
    }
}

impl ToolProvider for WebProvider {
    fn id(&self) -> &str {
        "web"
    }
    fn kind(&self) -> ProviderKind {
        ProviderKind::Web
    }
    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}

impl Delegable for WebProvider {}

/// The `web-search` provider: `web_search` on the configured engine, or unavailable with the
/// reason (and no tool) when none is configured or usable.
pub struct WebSearchProvider {
    backend: Option<String>,
    state: Result<Vec<Arc<dyn Tool>>, String>,
}

impl std::fmt::Debug for WebSearchProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSearchProvider")
            .field("backend", &self.backend)
            .field("reason", &self.state.as_ref().err())
            .finish()
    }
}

/// Why `web_search` is missing when `[web.search]` is absent.
pub const NOT_CONFIGURED: &str = "no search engine is configured: set [web.search] backend = \"searxng\", \"brave\" or \"tavily\"";

impl WebSearchProvider {
    /// `web_search` on `backend`.
    #[must_use]
    pub fn new(backend: Arc<dyn WebSearchBackend>) -> Self {
        Self {
            backend: Some(backend.name().to_owned()),
            state: Ok(vec![Arc::new(WebSearchTool::new(backend)) as Arc<dyn Tool>]),
        }
    }

    /// From `[web.search]` (`None`: not configured), reading keys through `env`.
    #[must_use]
    pub fn from_config(
        config: Option<&SearchConfig>,
        options: &WebOptions,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let Some(config) = config else {
            return Self::unavailable(None, NOT_CONFIGURED);
        };
        match backend(config, options.timeout, &options.user_agent, env) {
            Ok(backend) => Self::new(backend),
            Err(reason) => Self::unavailable(Some(config.engine.as_str()), reason),
        }
    }

    /// No tool, for `reason`.
    #[must_use]
    pub fn unavailable(backend: Option<&str>, reason: impl Into<String>) -> Self {
        Self {
            backend: backend.map(str::to_owned),
            state: Err(reason.into()),
        }
    }

    /// The engine's name, when one is configured.
    #[must_use]
    pub fn backend(&self) -> Option<&str> {
        self.backend.as_deref()
    }
}

impl ToolProvider for WebSearchProvider {
    fn id(&self) -> &str {
        "web-search"
    }
    fn kind(&self) -> ProviderKind {
        ProviderKind::Web
    }
    fn policy(&self) -> ProviderPolicy {
        match &self.state {
            Ok(_) => ProviderPolicy::ready(),
            Err(reason) => ProviderPolicy::unavailable(reason.clone()),
        }
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.state.clone().unwrap_or_default()
    }
}

impl Delegable for WebSearchProvider {}
