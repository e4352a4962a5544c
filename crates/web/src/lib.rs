//! # kun-web
//!
//! The web tools of kun-rs, both policy `untrusted`, kind `tool_call`:
//!
//! * `web_fetch {url, max_bytes?, format?}` ([`WebFetchTool`], provider `web`): an HTTP(S) GET
//!   behind the SSRF guard ([`guard`]: resolve once, refuse private, loopback, link-local,
//!   metadata and mapped addresses, connect only to the checked addresses, re-check every
//!   redirect, at most 5), with a time limit, a streamed body cap (5 MiB by default; past it
//!   the head is returned and says it was cut), gzip, charset decoding ([`page`]) and HTML →
//!   Markdown on the page's main content ([`html`]).
//! * `web_search {query, count?}` ([`search`], provider `web-search`): searxng, Brave or Tavily
//!   behind the [`WebSearchBackend`](kun_ports::WebSearchBackend) port.
//!
//! | failure                                     | code                    |
//! |---------------------------------------------|-------------------------|
//! | a refused address (any hop)                 | `web_address_blocked`   |
//! | a scheme other than http(s) (any hop)       | `web_scheme_blocked`    |
//! | more than 5 redirects                       | `web_too_many_redirects`|
//! | the time limit                              | `tool_timeout`          |
//! | 429, or 503 with `Retry-After`              | `rate_limited` (+ `retry_after_seconds`) |
//! | a bad URL or argument                       | `invalid_arguments`     |
//! | another HTTP status, binary content, network failure | `tool_execution_failed` |
//!
//! ```no_run
//! # async fn demo() {
//! use kun_web::{AddressGuard, FetchOptions, Fetcher, PrivateAddresses};
//! let fetcher = Fetcher::new(AddressGuard::new(PrivateAddresses::Blocked), FetchOptions::default());
//! let page = fetcher.fetch("https://example.com/", 1 << 20, std::future::pending()).await.unwrap();
//! assert_eq!(page.status, 200);
//! let refused = fetcher.fetch("http://169.254.169.254/", 1 << 20, std::future::pending()).await;
//! assert!(refused.is_err());
//! # }
//! ```

pub mod fetch;
mod fetch_tool;
pub mod guard;
pub mod html;
pub mod page;
mod provider;
pub mod search;
mod tls;

pub use fetch::{FetchError, FetchOptions, Fetched, Fetcher, retry_after_seconds};
pub use fetch_tool::{DEFAULT_MAX_BYTES, FetchArgs, FetchedPage, WebFetchTool};
pub use guard::{AddressGuard, GuardError, PrivateAddresses, classify};
pub use page::{ContentKind, Format};
pub use provider::{NOT_CONFIGURED, WebOptions, WebProvider, WebSearchProvider};
pub use search::{SearchConfig, SearchEngine};
