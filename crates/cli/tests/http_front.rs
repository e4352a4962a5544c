//! What `serve --http` answers before the MCP layer: `Origin` (403), the bearer token (401,
//! missing vs wrong), OAuth discovery and registration (404 / 400 with the token guidance),
//! and `DELETE` of a session (200, not rmcp's 202). Raw HTTP over a real socket.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::{Env, HttpServer};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// One answer: status, headers (lower-cased names) and body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends one request (`Connection: close`) and reads the whole answer.
fn send(
    server: &HttpServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        server.addr,
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = TcpStream::connect(&server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    // An SSE answer may stay open: read what arrives until EOF or a quiet second.
    let mut chunk = [0u8; 8192];
    stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    while let Ok(n) = stream.read(&mut chunk) {
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

fn initialize(server: &HttpServer, headers: &[(&str, &str)]) -> Answer {
    send(server, "POST", "/mcp", headers, INITIALIZE)
}

#[test]
fn origins_loopback_pass_others_are_refused_unless_the_user_allows_them() {
    let env = Env::new();
    std::fs::create_dir_all(env.dir.path().join("config/kun")).unwrap();
    std::fs::write(
        env.dir.path().join("config/kun/config.toml"),
        "[serve]\nallowed_origins = [\"https://app.example\", \"http://devbox:*\"]\n",
    )
    .unwrap();
    // A repository cannot add an origin of its own (its list is intersected with the user's).
    env.workspace_config(
        "[serve]\nallowed_origins = [\"https://evil.example\", \"https://app.example\", \"http://devbox:*\"]\n",
    );
    let server = env.serve_http(None);
    // (Origin, expected status)
    let cases: &[(Option<&str>, u16)] = &[
        (None, 200),
        (Some("http://localhost:6274"), 200),
        (Some("http://127.0.0.1:9"), 200),
        (Some("http://[::1]:3000"), 200),
        (Some("https://app.example"), 200),
        (Some("http://devbox:8080"), 200),
        (Some("https://evil.example"), 403),
        (Some("http://localhost.evil.example"), 403),
        (Some("null"), 403),
    ];
    for (origin, status) in cases {
        let headers: Vec<(&str, &str)> = origin.iter().map(|o| ("Origin", *o)).collect();
        let answer = initialize(&server, &headers);
        assert_eq!(answer.status, *status, "{origin:?}: {}", answer.body);
        if *status == 403 {
            assert!(
                answer.body.contains("allowed_origins") && answer.body.contains(origin.unwrap()),
                "{}",
                answer.body
            );
        }
    }
}

#[test]
fn a_401_says_whether_the_token_is_missing_or_wrong_and_how_to_send_it() {
    let env = Env::new();
    let server = env.serve_http(Some("s3cret"));
    let missing = initialize(&server, &[]);
    assert_eq!(missing.status, 401);
    assert!(missing.body.contains("missing"), "{}", missing.body);
    assert!(
        missing.body.contains("Authorization: Bearer"),
        "{}",
        missing.body
    );
    assert_eq!(
        missing.header("www-authenticate"),
        Some("Bearer realm=\"kun-tools\"")
    );

    let wrong = initialize(&server, &[("Authorization", "Bearer nope")]);
    assert_eq!(wrong.status, 401);
    assert!(wrong.body.contains("wrong"), "{}", wrong.body);
    let challenge = wrong.header("www-authenticate").unwrap();
    assert!(challenge.contains("invalid_token"), "{challenge}");
    assert!(!challenge.contains("resource_metadata"), "{challenge}");

    let basic = initialize(&server, &[("Authorization", "Basic s3cret")]);
    assert_eq!(basic.status, 401);
    assert!(
        basic.body.contains("not `Bearer <token>`"),
        "{}",
        basic.body
    );

    assert_eq!(
        initialize(&server, &[("Authorization", "Bearer s3cret")]).status,
        200
    );

    // OAuth discovery finds nothing, registration is refused with the same guidance.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let answer = send(&server, "GET", path, &[], "");
        assert_eq!(answer.status, 404, "{path}");
        assert!(answer.body.contains("KUN_TOKEN"), "{path}: {}", answer.body);
    }
    let register = send(&server, "POST", "/register", &[], r#"{"client_name":"x"}"#);
    assert_eq!(register.status, 400);
    let json: serde_json::Value = serde_json::from_str(&register.body).unwrap();
    assert_eq!(json["error"], "invalid_request");
    assert!(
        json["error_description"]
            .as_str()
            .unwrap()
            .contains("Authorization: Bearer"),
        "{json}"
    );
}

#[test]
fn deleting_a_session_answers_200() {
    let env = Env::new();
    let server = env.serve_http(None);
    let init = initialize(&server, &[]);
    assert_eq!(init.status, 200, "{}", init.body);
    let session = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let deleted = send(
        &server,
        "DELETE",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        "",
    );
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    // The session is gone: using it again is a 404 (the client re-initialises).
    let again = send(
        &server,
        "POST",
        "/mcp",
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    );
    assert_eq!(again.status, 404, "{}", again.body);
}
