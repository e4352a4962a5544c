//! `serve --http ADDR`: MCP over streamable HTTP at `http://ADDR/mcp`.
//!
//! Who may connect:
//!
//! | bind address | `KUN_TOKEN` | result |
//! |---|---|---|
//! | loopback | unset | served; any local process may connect |
//! | loopback | set | served; every request needs `Authorization: Bearer <token>` |
//! | other | unset | refused at start-up with an error |
//! | other | set | served; every request needs the token |
//!
//! Every request, in this order:
//!
//! | check | failure |
//! |---|---|
//! | `Origin` (absent, or loopback: `http(s)://localhost`, `127.0.0.1`, `[::1]` on any port, or listed in `[serve] allowed_origins`) | `403` naming the origin and the setting (the MCP transport spec's MUST: a web page must not drive local tools) |
//! | OAuth discovery and registration paths | `/.well-known/*` `404` and `POST /register` `400`, each with the token guidance (below) |
//! | the bearer token, when one is required | `401` saying whether it was missing or wrong, and how to pass it |
//! | the path is `/mcp` | `404` |
//!
//! **Why 401 looks like this.** kun-tools uses a static token, not OAuth. Any 401 makes
//! OAuth-capable clients (the TypeScript SDK with an auth provider, the MCP Inspector at
//! connect time) try discovery: protected-resource metadata, authorization-server metadata,
//! then dynamic client registration at `POST /register`. So: the 401 carries
//! `WWW-Authenticate: Bearer realm="kun-tools"` (RFC 6750; `error="invalid_token"` only for a
//! wrong token) and never `resource_metadata`; every metadata path answers 404 with the
//! guidance; `POST /register` answers 400 with an OAuth error body whose `error_description`
//! is the guidance, which the SDKs put in the error they report ("… rejected …: send
//! `Authorization: Bearer <KUN_TOKEN>`"). Claude Code with a configured
//! `headers.Authorization` reports the server as failed with the 401 body, without OAuth.
//!
//! `DELETE` of a session answers `200` (rmcp says `202`; the Python SDK accepts only 200 or
//! 204 and logs "Session termination failed: 202" otherwise). On loopback, rmcp's `Host`
//! check (against DNS rebinding) stays on; beyond loopback the token is the guard. Each MCP
//! session (an `Mcp-Session-Id`) gets its own [`Session`].

use crate::serve::live::Live;
use crate::serve::session::Session;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The one path the server answers on.
pub const MCP_PATH: &str = "/mcp";

/// The environment variable holding the bearer token.
pub const TOKEN_VAR: &str = "KUN_TOKEN";

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// Who may connect, decided once at start-up.
#[derive(Clone, PartialEq, Eq)]
pub enum Access {
    /// Loopback only, no token.
    LoopbackOnly,
    /// Every request must carry this bearer token.
    Token(String),
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::LoopbackOnly => f.write_str("LoopbackOnly"),
            Self::Token(_) => f.write_str("Token(<redacted>)"),
        }
    }
}

impl Access {
    /// The rule of the table above for `addr` and the token (empty counts as unset).
    ///
    /// # Errors
    /// A non-loopback address without a token.
    pub fn decide(addr: SocketAddr, token: Option<String>) -> Result<Self, String> {
        match token.filter(|t| !t.is_empty()) {
            Some(token) => Ok(Self::Token(token)),
            None if addr.ip().is_loopback() => Ok(Self::LoopbackOnly),
            None => Err(format!(
                "--http {addr} is not a loopback address: anyone who can reach it could run \
                 tools here. Bind 127.0.0.1, or set {TOKEN_VAR} to a bearer token that every \
                 client must send"
            )),
        }
    }

    /// Whether a request's headers pass, and if not, why.
    fn admits(&self, headers: &header::HeaderMap) -> Admission {
        let Self::Token(token) = self else {
            return Admission::Admitted;
        };
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Admission::Missing;
        };
        let Some(given) = value.to_str().ok().and_then(|v| {
            let (scheme, rest) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then_some(rest)
        }) else {
            return Admission::NotBearer;
        };
        if same_secret(given.trim().as_bytes(), token.as_bytes()) {
            Admission::Admitted
        } else {
            Admission::Wrong
        }
    }
}

/// The token check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admission {
    /// No token needed, or the right one.
    Admitted,
    /// No `Authorization` header.
    Missing,
    /// An `Authorization` header that is not `Bearer <token>`.
    NotBearer,
    /// A bearer token that does not match.
    Wrong,
}

/// How to send the token, for every refusal that should lead a person to it.
const TOKEN_GUIDANCE: &str = "kun-tools uses a static bearer token, not OAuth: send the header \
    `Authorization: Bearer <token>` with the KUN_TOKEN value the server was started with (Claude \
    Code: `claude mcp add --transport http kun <url> --header \"Authorization: Bearer $KUN_TOKEN\"`; \
    MCP Inspector: Authentication > Custom Headers).";

impl Admission {
    /// The 401 for a refusal, with its body and `WWW-Authenticate` (see the module docs);
    /// `None` when admitted.
    fn refusal(self) -> Option<Response<Body>> {
        let (why, challenge) = match self {
            Self::Admitted => return None,
            Self::Missing => (
                "401 Unauthorized: the bearer token is missing (the request has no `Authorization` header).",
                "Bearer realm=\"kun-tools\"",
            ),
            Self::NotBearer => (
                "401 Unauthorized: the `Authorization` header is not `Bearer <token>`.",
                "Bearer realm=\"kun-tools\", error=\"invalid_request\"",
            ),
            Self::Wrong => (
                "401 Unauthorized: the bearer token is wrong (it does not match the server's KUN_TOKEN; check for quotes or spaces around it).",
                "Bearer realm=\"kun-tools\", error=\"invalid_token\"",
            ),
        };
        let mut response = plain(
            StatusCode::UNAUTHORIZED,
            format!("{why} {TOKEN_GUIDANCE}\n"),
        );
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static(challenge),
        );
        Some(response)
    }
}

/// Loopback hosts every origin check accepts.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Whether an `Origin` header value may reach the server: a loopback origin (`http` or
/// `https`, any port), or one matching an `allowed_origins` entry exactly or with `:*` as
/// any port. Compared case-insensitively; `null` and anything unparsable are refused.
fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    let origin = origin.to_ascii_lowercase();
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    if !matches!(scheme, "http" | "https") || rest.contains('/') {
        return false;
    }
    let host = match rest.strip_prefix('[').and_then(|r| r.find(']')) {
        Some(end) => &rest[..end + 2],
        None => rest.split(':').next().unwrap_or(rest),
    };
    if LOOPBACK_HOSTS.contains(&host) {
        return true;
    }
    allowed.iter().any(|entry| {
        let entry = entry.to_ascii_lowercase();
        match entry.strip_suffix(":*") {
            Some(base) => {
                origin == base
                    || origin
                        .strip_prefix(base)
                        .and_then(|port| port.strip_prefix(':'))
                        .is_some_and(|port| port.parse::<u16>().is_ok())
            }
            None => origin == entry,
        }
    })
}

/// Compares without stopping at the first difference.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// Serves until `stop` fires.
///
/// # Errors
/// When the address cannot be bound.
pub async fn serve(
    live: Arc<Live>,
    addr: SocketAddr,
    access: Access,
    stop: CancellationToken,
) -> Result<(), String> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|err| format!("--http {addr}: cannot listen: {err}"))?;
    let local = listener
        .local_addr()
        .map_err(|err| format!("--http {addr}: {err}"))?;
    // The one line tests and users look for; stdout is never used in HTTP mode either.
    eprintln!("kun-tools: serving MCP over streamable HTTP at http://{local}{MCP_PATH}");
    let mut config = StreamableHttpServerConfig::default().with_cancellation_token(stop.clone());
    if !addr.ip().is_loopback() {
        config = config.disable_allowed_hosts();
    }
    let sessions = Arc::clone(&live);
    let mcp = StreamableHttpService::new(
        move || Ok(Session::new(Arc::clone(&sessions))),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let front = Arc::new(Front { mcp, access, live });
    loop {
        let (stream, peer) = tokio::select! {
            () = stop.cancelled() => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    tracing::warn!("accept failed: {err}");
                    continue;
                }
            },
        };
        let front = Arc::clone(&front);
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let front = Arc::clone(&front);
                async move { Ok::<_, Infallible>(front.handle(request).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                result = connection.as_mut() => if let Err(err) = result {
                    tracing::debug!(%peer, "connection ended: {err}");
                },
                () = stop.cancelled() => connection.as_mut().graceful_shutdown(),
            }
        });
    }
}

/// The checks of the module table in front of rmcp's service.
struct Front {
    mcp: StreamableHttpService<Session, LocalSessionManager>,
    access: Access,
    /// For `[serve] allowed_origins`, followed across reloads.
    live: Arc<Live>,
}

impl Front {
    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        if let Some(refused) = self.check_origin(request.headers()) {
            return refused;
        }
        let path = request.uri().path();
        if path.starts_with("/.well-known/") {
            return plain(
                StatusCode::NOT_FOUND,
                format!("not found: this server has no OAuth metadata. {TOKEN_GUIDANCE}\n"),
            );
        }
        if path == "/register" {
            return oauth_refusal();
        }
        if let Some(refused) = self.access.admits(request.headers()).refusal() {
            return refused;
        }
        if path != MCP_PATH {
            return plain(
                StatusCode::NOT_FOUND,
                "not found: the MCP endpoint is /mcp\n".to_owned(),
            );
        }
        let delete = request.method() == hyper::Method::DELETE;
        let mut response = self.mcp.handle(request).await;
        if delete && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::OK;
        }
        response
    }

    /// `None` when the `Origin` may pass; otherwise the 403.
    fn check_origin(&self, headers: &header::HeaderMap) -> Option<Response<Body>> {
        let mut origins = headers.get_all(header::ORIGIN).iter();
        let origin = origins.next()?;
        let text = origin.to_str().unwrap_or("<not text>");
        let allowed = &self.live.current().settings.serve.allowed_origins;
        if origins.next().is_none() && origin_allowed(text, allowed) {
            return None;
        }
        let shown: String = text.chars().take(200).collect();
        Some(plain(
            StatusCode::FORBIDDEN,
            format!(
                "403 Forbidden: requests from the web origin `{shown}` are refused. kun-tools \
                 serve accepts requests without an Origin header, from loopback origins \
                 (http://localhost:*, http://127.0.0.1:*, http://[::1]:*), and from the origins \
                 listed in `[serve] allowed_origins` of your user config.\n"
            ),
        ))
    }
}

/// `POST /register` (dynamic client registration): 400 with an OAuth error body whose
/// description is the token guidance, so the client's error says what to do.
fn oauth_refusal() -> Response<Body> {
    let body = serde_json::json!({
        "error": "invalid_request",
        "error_description": format!("this server does not register OAuth clients. {TOKEN_GUIDANCE}"),
    });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_table() {
        let loopback: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let v6: SocketAddr = "[::1]:0".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(Access::decide(loopback, None), Ok(Access::LoopbackOnly));
        assert_eq!(
            Access::decide(v6, Some(String::new())),
            Ok(Access::LoopbackOnly)
        );
        assert_eq!(
            Access::decide(loopback, Some("t".into())),
            Ok(Access::Token("t".into()))
        );
        let err = Access::decide(any, None).unwrap_err();
        assert!(
            err.contains("KUN_TOKEN") && err.contains("0.0.0.0:8080"),
            "{err}"
        );
        assert_eq!(
            Access::decide(any, Some("t".into())),
            Ok(Access::Token("t".into()))
        );
    }

    #[test]
    fn tokens_must_match_exactly() {
        let access = Access::Token("s3cret".into());
        let with = |value: &str| {
            let mut headers = header::HeaderMap::new();
            headers.insert(header::AUTHORIZATION, value.parse().unwrap());
            access.admits(&headers)
        };
        assert_eq!(with("Bearer s3cret"), Admission::Admitted);
        assert_eq!(with("bearer  s3cret "), Admission::Admitted);
        assert_eq!(with("Bearer s3cre"), Admission::Wrong);
        assert_eq!(with("Bearer s3cret2"), Admission::Wrong);
        assert_eq!(with("Basic s3cret"), Admission::NotBearer);
        assert_eq!(with("s3cret"), Admission::NotBearer);
        assert_eq!(access.admits(&header::HeaderMap::new()), Admission::Missing);
        assert_eq!(
            Access::LoopbackOnly.admits(&header::HeaderMap::new()),
            Admission::Admitted
        );
    }

    /// (origin, allowed_origins, passes)
    #[test]
    fn origin_table() {
        let none: &[&str] = &[];
        let cases: &[(&str, &[&str], bool)] = &[
            ("http://localhost:6274", none, true),
            ("http://LOCALHOST", none, true),
            ("https://127.0.0.1:8443", none, true),
            ("http://[::1]:3000", none, true),
            ("http://localhost.evil.example", none, false),
            ("http://127.0.0.1.evil.example:80", none, false),
            ("https://evil.example", none, false),
            ("null", none, false),
            ("file://", none, false),
            ("https://app.example", &["https://app.example"], true),
            ("https://app.example:444", &["https://app.example"], false),
            ("http://devbox:8080", &["http://devbox:*"], true),
            ("http://devbox", &["http://devbox:*"], true),
            ("http://devbox.evil:8080", &["http://devbox:*"], false),
            ("http://devbox:80x", &["http://devbox:*"], false),
        ];
        for (origin, allowed, passes) in cases {
            let allowed: Vec<String> = allowed.iter().map(|s| (*s).to_owned()).collect();
            assert_eq!(
                origin_allowed(origin, &allowed),
                *passes,
                "{origin} {allowed:?}"
            );
        }
    }
}
