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
//! A missing or wrong token is `401 Unauthorized` and never reaches the MCP layer. On
//! loopback, rmcp's `Host` check (against DNS rebinding) stays on; beyond loopback the token
//! is the guard. Each MCP session (an `Mcp-Session-Id`) gets its own [`Session`].

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

    /// Whether a request's headers pass.
    fn admits(&self, headers: &header::HeaderMap) -> bool {
        let Self::Token(token) = self else {
            return true;
        };
        headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .is_some_and(|given| same_secret(given.trim().as_bytes(), token.as_bytes()))
    }
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
    let mcp = StreamableHttpService::new(
        move || Ok(Session::new(Arc::clone(&live))),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let front = Arc::new(Front { mcp, access });
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

/// The token check and the path in front of rmcp's service.
struct Front {
    mcp: StreamableHttpService<Session, LocalSessionManager>,
    access: Access,
}

impl Front {
    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        if !self.access.admits(request.headers()) {
            return plain(
                StatusCode::UNAUTHORIZED,
                "a bearer token is required: send `Authorization: Bearer <KUN_TOKEN>`",
            );
        }
        if request.uri().path() != MCP_PATH {
            return plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp");
        }
        self.mcp.handle(request).await
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if status == StatusCode::UNAUTHORIZED {
        headers.insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
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
        assert!(with("Bearer s3cret"));
        assert!(!with("Bearer s3cre"));
        assert!(!with("Bearer s3cret2"));
        assert!(!with("Basic s3cret"));
        assert!(!access.admits(&header::HeaderMap::new()));
        assert!(Access::LoopbackOnly.admits(&header::HeaderMap::new()));
    }
}
