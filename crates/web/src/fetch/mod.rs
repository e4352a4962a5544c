//! One guarded HTTP GET, redirects followed by hand.
//!
//! For every hop (the first URL and each redirect target, at most
//! [`FetchOptions::max_redirects`] redirects):
//!
//! 1. the scheme must be `http` or `https` ([`AddressGuard::check_url`]);
//! 2. the host is resolved **once** (a literal IP is taken as it is; `localhost` names are
//!    loopback without asking DNS), and every address goes through
//!    [`AddressGuard::check_address`]; the refused ones are dropped, and none left is
//!    `web_address_blocked`;
//! 3. the request goes out on a client pinned to exactly those addresses
//!    (`resolve_to_addrs`), whose own resolver refuses every other name, with no proxy and no
//!    automatic redirects — so nothing is looked up twice and nothing unchecked is reached;
//! 4. a redirect (301, 302, 303, 307, 308 with a `Location`) starts the next hop.
//!
//! The body is read in chunks up to the byte cap, never whole: past the cap the connection
//! is dropped and the result says it was cut. Responses are decompressed (gzip) before the
//! cap counts them, so a small compressed bomb cannot grow past it. The whole fetch, body
//! included, has one time limit.

mod retry_after;

pub use retry_after::retry_after_seconds;

use crate::guard::{AddressGuard, GuardError, is_localhost_name};
use crate::page::ContentKind;
use std::net::{Ipv6Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use url::{Host, Url};

/// How far a fetch may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchOptions {
    /// The time limit for the whole fetch, redirects and body included.
    pub timeout: Duration,
    /// The `User-Agent` sent.
    pub user_agent: String,
    /// The most redirects followed.
    pub max_redirects: usize,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            user_agent: concat!("kun-tools/", env!("CARGO_PKG_VERSION")).to_owned(),
            max_redirects: 5,
        }
    }
}

/// A fetched response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The final URL (after redirects).
    pub url: Url,
    /// The HTTP status (2xx).
    pub status: u16,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// What the body is.
    pub kind: ContentKind,
    /// The body, at most the cap (decompressed).
    pub body: Vec<u8>,
    /// Whether the body was cut at the cap.
    pub truncated: bool,
    /// The URLs redirected through, in order (the first is the URL asked for).
    pub redirects: Vec<String>,
}

/// A fetch failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The URL cannot be parsed.
    #[error("`{url}` is not a valid URL: {reason}")]
    InvalidUrl {
        /// What was given.
        url: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The guard refused a hop.
    #[error("{0}")]
    Guard(GuardError),
    /// More redirects than allowed.
    #[error("more than {max} redirects (through {}); fetch the final URL directly if you know it", .chain.join(" → "))]
    TooManyRedirects {
        /// The limit.
        max: usize,
        /// The URLs seen.
        chain: Vec<String>,
    },
    /// The time limit passed.
    #[error("the fetch took longer than {} seconds", .0.as_secs())]
    Timeout(Duration),
    /// The server asked to slow down (429, or 503 with `Retry-After`).
    #[error("{url} answered HTTP {status}: the server is rate limiting requests")]
    RateLimited {
        /// The URL.
        url: String,
        /// 429 or 503.
        status: u16,
        /// Its `Retry-After`, in seconds.
        retry_after_seconds: Option<u64>,
    },
    /// Any other non-2xx answer.
    #[error("{url} answered HTTP {status}{}", .excerpt.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Status {
        /// The URL.
        url: String,
        /// The status.
        status: u16,
        /// The start of the body, as text.
        excerpt: Option<String>,
    },
    /// The body is not text.
    #[error(
        "{url} is {content_type}, which is not text; web_fetch reads pages, text and JSON only"
    )]
    Binary {
        /// The URL.
        url: String,
        /// Its content type.
        content_type: String,
    },
    /// The turn was aborted.
    #[error("the fetch was aborted")]
    Aborted,
    /// DNS, connection, TLS or protocol failure.
    #[error("{0}")]
    Transport(String),
}

/// Performs guarded fetches; cheap to clone.
#[derive(Clone)]
pub struct Fetcher {
    guard: AddressGuard,
    options: FetchOptions,
    /// Set up on the first fetch: a session that never fetches pays nothing for TLS (the
    /// crypto provider and certificate verifier weigh on `serve`'s start-up memory).
    tls: Arc<OnceLock<Result<rustls::ClientConfig, String>>>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("guard", &self.guard)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// How many bytes of an error body are shown.
const EXCERPT_BYTES: usize = 512;

impl Fetcher {
    /// A fetcher with this guard and these options. TLS is set up on the first fetch; should
    /// that fail, every fetch fails with [`FetchError::Transport`] saying why.
    #[must_use]
    pub fn new(guard: AddressGuard, options: FetchOptions) -> Self {
        Self {
            guard,
            options,
            tls: Arc::new(OnceLock::new()),
        }
    }

    /// The options.
    #[must_use]
    pub const fn options(&self) -> &FetchOptions {
        &self.options
    }

    /// Fetches `url`, reading at most `max_bytes` of its body; stops early when `abort`
    /// completes.
    ///
    /// # Errors
    /// See [`FetchError`].
    pub async fn fetch(
        &self,
        url: &str,
        max_bytes: usize,
        abort: impl std::future::Future<Output = ()>,
    ) -> Result<Fetched, FetchError> {
        let parsed = Url::parse(url.trim()).map_err(|err| FetchError::InvalidUrl {
            url: url.to_owned(),
            reason: err.to_string(),
        })?;
        let limit = self.options.timeout;
        tokio::select! {
            result = tokio::time::timeout(limit, self.follow(parsed, max_bytes)) => {
                result.unwrap_or(Err(FetchError::Timeout(limit)))
            }
            () = abort => Err(FetchError::Aborted),
        }
    }

    async fn follow(&self, mut url: Url, max_bytes: usize) -> Result<Fetched, FetchError> {
        let mut chain: Vec<String> = Vec::new();
        loop {
            self.guard.check_url(&url).map_err(FetchError::Guard)?;
            let addrs = self.resolve(&url).await?;
            let client = self.hop_client(&url, &addrs)?;
            let response = client
                .get(url.clone())
                .header(
                    reqwest::header::ACCEPT,
                    "text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.5",
                )
                .send()
                .await
                .map_err(|err| FetchError::Transport(describe(&url, &err)))?;
            let status = response.status().as_u16();
            if let Some(next) = redirect_target(&url, &response) {
                chain.push(url.to_string());
                if chain.len() > self.options.max_redirects {
                    chain.push(next.to_string());
                    return Err(FetchError::TooManyRedirects {
                        max: self.options.max_redirects,
                        chain,
                    });
                }
                url = next;
                continue;
            }
            if status == 429 || (status == 503 && response.headers().contains_key("retry-after")) {
                return Err(FetchError::RateLimited {
                    url: url.to_string(),
                    status,
                    retry_after_seconds: retry_after::of_response(&response),
                });
            }
            if !response.status().is_success() {
                let (body, _) = read_capped(response, EXCERPT_BYTES)
                    .await
                    .unwrap_or_default();
                let excerpt = String::from_utf8_lossy(&body).trim().to_owned();
                return Err(FetchError::Status {
                    url: url.to_string(),
                    status,
                    excerpt: (!excerpt.is_empty()).then_some(excerpt),
                });
            }
            return self.read(url, status, response, chain, max_bytes).await;
        }
    }

    async fn read(
        &self,
        url: Url,
        status: u16,
        response: reqwest::Response,
        redirects: Vec<String>,
        max_bytes: usize,
    ) -> Result<Fetched, FetchError> {
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let Some(declared) = content_type.as_deref()
            && ContentKind::from_content_type(declared) == Some(ContentKind::Binary)
        {
            return Err(FetchError::Binary {
                url: url.to_string(),
                content_type: declared.to_owned(),
            });
        }
        let (body, truncated) = read_capped(response, max_bytes)
            .await
            .map_err(|err| FetchError::Transport(describe(&url, &err)))?;
        let kind = content_type
            .as_deref()
            .and_then(ContentKind::from_content_type)
            .unwrap_or_else(|| ContentKind::sniff(&body));
        if kind == ContentKind::Binary {
            return Err(FetchError::Binary {
                url: url.to_string(),
                content_type: content_type.unwrap_or_else(|| "binary data".to_owned()),
            });
        }
        Ok(Fetched {
            url,
            status,
            content_type,
            kind,
            body,
            truncated,
            redirects,
        })
    }

    /// Step 2: the hop's addresses that pass the guard.
    async fn resolve(&self, url: &Url) -> Result<Vec<SocketAddr>, FetchError> {
        let port = url.port_or_known_default().unwrap_or(80);
        let host = url.host_str().unwrap_or_default().to_owned();
        let candidates: Vec<SocketAddr> = match url.host() {
            Some(Host::Ipv4(ip)) => vec![SocketAddr::new(ip.into(), port)],
            Some(Host::Ipv6(ip)) => vec![SocketAddr::new(ip.into(), port)],
            Some(Host::Domain(name)) if is_localhost_name(name) => vec![
                SocketAddr::from(([127, 0, 0, 1], port)),
                SocketAddr::new(Ipv6Addr::LOCALHOST.into(), port),
            ],
            Some(Host::Domain(name)) => tokio::net::lookup_host((name, port))
                .await
                .map_err(|err| FetchError::Transport(format!("{name} cannot be resolved: {err}")))?
                .collect(),
            None => return Err(FetchError::Guard(GuardError::NoHost)),
        };
        let mut allowed = Vec::with_capacity(candidates.len());
        let mut refusal = None;
        for addr in candidates {
            match self.guard.check_address(&host, addr) {
                Ok(()) => allowed.push(addr),
                Err(err) => {
                    refusal.get_or_insert(err);
                }
            }
        }
        match (allowed.is_empty(), refusal) {
            (false, _) => Ok(allowed),
            (true, Some(err)) => Err(FetchError::Guard(err)),
            (true, None) => Err(FetchError::Transport(format!("{host} has no address"))),
        }
    }

    /// Step 3: a client that reaches only `addrs` for the hop's host.
    fn hop_client(&self, url: &Url, addrs: &[SocketAddr]) -> Result<reqwest::Client, FetchError> {
        let tls = self
            .tls
            .get_or_init(crate::tls::client_config)
            .clone()
            .map_err(FetchError::Transport)?;
        let mut builder = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(RefuseResolver))
            .user_agent(self.options.user_agent.clone())
            .connect_timeout(self.options.timeout)
            .pool_max_idle_per_host(0);
        if let Some(Host::Domain(name)) = url.host() {
            builder = builder.resolve_to_addrs(name, addrs);
        }
        builder
            .build()
            .map_err(|err| FetchError::Transport(format!("the HTTP client cannot be built: {err}")))
    }
}

/// The resolver of a hop client: every name was resolved and checked already, so any other
/// lookup is refused.
struct RefuseResolver;

impl reqwest::dns::Resolve for RefuseResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let name = name.as_str().to_owned();
        Box::pin(async move {
            Err(
                format!("{name} was not checked by the address guard; refusing to resolve it")
                    .into(),
            )
        })
    }
}

/// The next URL when `response` is a redirect with a usable `Location`.
fn redirect_target(current: &Url, response: &reqwest::Response) -> Option<Url> {
    if !matches!(response.status().as_u16(), 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)?
        .to_str()
        .ok()?;
    current.join(location).ok()
}

/// Reads at most `cap` bytes of the body, chunk by chunk; `true` when more was left.
async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let hint = response
        .content_length()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(64 * 1024);
    let mut body = Vec::with_capacity(hint.min(cap));
    while let Some(chunk) = response.chunk().await? {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
        if body.len() == cap {
            // Exactly at the cap: cut only if anything follows.
            let more = response.chunk().await?.is_some_and(|c| !c.is_empty());
            return Ok((body, more));
        }
    }
    Ok((body, false))
}

/// A transport error in plain words, with the underlying causes.
fn describe(url: &Url, err: &reqwest::Error) -> String {
    let mut message = format!("{url} could not be fetched: {err}");
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    message
}
