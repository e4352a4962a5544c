//! `web_fetch` against servers on 127.0.0.1: conversion, limits, charsets, compression,
//! errors and the codes they carry.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use kun_ports::testkit::{LocalHttpServer, Reply};
use kun_web::{AddressGuard, PrivateAddresses, WebOptions};
use serde_json::json;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use support::{call, fetch_host, open_host, options};

const PAGE: &str = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Release guide</title>
<script>window.track = 1;</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav>
<main>
<h1>Releasing</h1>
<p>Follow the <a href="https://example.com/checklist">release checklist</a> before tagging.</p>
<h2>Build</h2>
<pre><code class="language-sh">cargo build --release
cargo test --workspace</code></pre>
<h3>Notes</h3>
<ul><li>Sign the tag</li><li>Push it</li></ul>
</main>
<footer>Copyright</footer>
</body></html>"#;

#[tokio::test]
async fn html_becomes_markdown_with_headings_links_and_code_blocks() {
    let server = LocalHttpServer::start(|_| Reply::ok("text/html; charset=utf-8", PAGE));
    let host = open_host();
    let result = call(&host, "web_fetch", json!({"url": server.url("/guide")})).await;
    assert!(!result.is_error, "{result:?}");
    let content = result.output["content"].as_str().unwrap();
    for needle in [
        "# Releasing",
        "## Build",
        "### Notes",
        "[release checklist](https://example.com/checklist)",
        "```sh\ncargo build --release\ncargo test --workspace\n```",
        "*   Sign the tag",
    ] {
        assert!(content.contains(needle), "missing {needle:?}:\n{content}");
    }
    for absent in ["window.track", "Home", "Copyright"] {
        assert!(!content.contains(absent), "{absent:?} kept:\n{content}");
    }
    assert_eq!(result.output["title"], "Release guide");
    assert_eq!(result.output["status"], 200);
    assert_eq!(result.output["format"], "markdown");
    let text = result.model_text();
    assert!(
        text.starts_with(&format!(
            "URL: {}\nTitle: Release guide\n\n# Releasing",
            server.url("/guide")
        )),
        "{text}"
    );
    assert_eq!(
        server.requests()[0].header("user-agent"),
        Some("kun-tools-test/1")
    );
}

#[tokio::test]
async fn text_and_raw_formats() {
    let server = LocalHttpServer::start(|_| Reply::ok("text/html", PAGE));
    let host = open_host();
    let text = call(
        &host,
        "web_fetch",
        json!({"url": server.url("/"), "format": "text"}),
    )
    .await;
    let content = text.output["content"].as_str().unwrap();
    assert!(
        content.starts_with(
            "Releasing\nFollow the release checklist before tagging.\nBuild\ncargo build --release"
        ),
        "{content}"
    );
    assert!(
        !content.contains('#') && !content.contains("]("),
        "{content}"
    );
    let raw = call(
        &host,
        "web_fetch",
        json!({"url": server.url("/"), "format": "raw"}),
    )
    .await;
    assert_eq!(raw.output["content"], PAGE);
    let bad = call(
        &host,
        "web_fetch",
        json!({"url": server.url("/"), "format": "pdf"}),
    )
    .await;
    assert_eq!(bad.error_code(), Some("invalid_arguments"), "{bad:?}");
}

#[tokio::test]
async fn json_is_pretty_printed_and_plain_text_kept() {
    let server = LocalHttpServer::start(|request| match request.route() {
        "/data" => Reply::ok("application/json", r#"{"name":"kun","tags":["a","b"]}"#),
        _ => Reply::ok("text/plain; charset=utf-8", "line one\nline two\n"),
    });
    let host = open_host();
    let json = call(&host, "web_fetch", json!({"url": server.url("/data")})).await;
    assert_eq!(
        json.output["content"],
        "{\n  \"name\": \"kun\",\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ]\n}"
    );
    let plain = call(&host, "web_fetch", json!({"url": server.url("/notes.txt")})).await;
    assert_eq!(plain.output["content"], "line one\nline two\n");
}

#[tokio::test]
async fn binary_content_is_refused_naming_its_type() {
    let server = LocalHttpServer::start(|request| match request.route() {
        "/logo.png" => Reply::ok("image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()),
        _ => Reply::Full {
            status: 200,
            headers: vec![],
            body: b"\0\x01\x02binary".to_vec(),
        },
    });
    let host = open_host();
    let png = call(&host, "web_fetch", json!({"url": server.url("/logo.png")})).await;
    assert_eq!(png.error_code(), Some("tool_execution_failed"), "{png:?}");
    assert_eq!(png.output["content_type"], "image/png");
    assert!(
        png.model_text().contains("image/png"),
        "{}",
        png.model_text()
    );
    let sniffed = call(&host, "web_fetch", json!({"url": server.url("/blob")})).await;
    assert_eq!(
        sniffed.error_code(),
        Some("tool_execution_failed"),
        "{sniffed:?}"
    );
}

#[tokio::test]
async fn five_redirects_are_followed_and_a_sixth_is_refused() {
    let server = LocalHttpServer::start(|request| {
        let path = request.route();
        match path
            .strip_prefix("/hop/")
            .and_then(|n| n.parse::<u32>().ok())
        {
            Some(0) => Reply::ok("text/plain", "arrived"),
            Some(n) => Reply::redirect(&format!("/hop/{}", n - 1)),
            None => Reply::status(404, "no"),
        }
    });
    let host = open_host();
    let five = call(&host, "web_fetch", json!({"url": server.url("/hop/5")})).await;
    assert!(!five.is_error, "{five:?}");
    assert_eq!(five.output["content"], "arrived");
    assert_eq!(five.output["url"], server.url("/hop/0"));
    assert_eq!(five.output["redirects"].as_array().unwrap().len(), 5);
    assert!(five.model_text().starts_with(&format!(
        "URL: {} (redirected from {})",
        server.url("/hop/0"),
        server.url("/hop/5")
    )));

    let before = server.requests().len();
    let six = call(&host, "web_fetch", json!({"url": server.url("/hop/6")})).await;
    assert_eq!(six.error_code(), Some("web_too_many_redirects"), "{six:?}");
    assert_eq!(
        server.requests().len() - before,
        6,
        "the seventh URL is never requested"
    );
    assert_eq!(
        six.output["redirects"].as_array().unwrap().len(),
        7,
        "the chain is shown"
    );
}

#[tokio::test]
async fn redirects_to_private_or_foreign_targets_are_refused_when_private_addresses_are_off() {
    let inner = LocalHttpServer::start(|_| Reply::ok("text/plain", "internal secret"));
    let port = inner.addr().port();
    let targets = [
        (
            format!("http://127.0.0.1:{port}/secret"),
            "web_address_blocked",
        ),
        (
            format!("http://localhost.:{port}/secret"),
            "web_address_blocked",
        ),
        (
            format!("http://LOCALHOST:{port}/secret"),
            "web_address_blocked",
        ),
        (
            format!("http://2130706433:{port}/secret"),
            "web_address_blocked",
        ),
        (
            format!("http://0x7f.1:{port}/secret"),
            "web_address_blocked",
        ),
        (
            format!("http://[::ffff:127.0.0.1]:{port}/secret"),
            "web_address_blocked",
        ),
        (format!("http://[::1]:{port}/secret"), "web_address_blocked"),
        (
            format!("http://0.0.0.0:{port}/secret"),
            "web_address_blocked",
        ),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "web_address_blocked",
        ),
        ("file:///etc/passwd".to_owned(), "web_scheme_blocked"),
        ("ftp://127.0.0.1/x".to_owned(), "web_scheme_blocked"),
    ];
    let targets_for_server = targets.clone();
    let outer = LocalHttpServer::start(move |request| {
        let n: usize = request
            .route()
            .trim_start_matches("/go/")
            .parse()
            .unwrap_or(0);
        Reply::redirect(&targets_for_server[n].0)
    });
    // Private addresses off; only the outer server itself is exempted (as an embedder would
    // exempt one known local service).
    let options = WebOptions {
        private_addresses: PrivateAddresses::Blocked,
        ..options()
    };
    let host = fetch_host(
        &options,
        AddressGuard::new(PrivateAddresses::Blocked).exempting(outer.addr()),
    );
    for (n, (target, code)) in targets.iter().enumerate() {
        let result = call(
            &host,
            "web_fetch",
            json!({"url": outer.url(&format!("/go/{n}"))}),
        )
        .await;
        assert_eq!(
            result.error_code(),
            Some(*code),
            "redirect to {target}: {result:?}"
        );
    }
    assert!(
        inner.requests().is_empty(),
        "the private server was never reached"
    );
    assert_eq!(
        outer.requests().len(),
        targets.len(),
        "every first hop was made"
    );

    // Without a redirect, the same addresses are refused directly.
    let direct = call(&host, "web_fetch", json!({"url": inner.url("/secret")})).await;
    assert_eq!(direct.error_code(), Some("web_address_blocked"));
    assert_eq!(direct.output["address"], "127.0.0.1");
    assert_eq!(direct.output["range"], "loopback");
    assert!(
        direct.model_text().contains("allow_private_addresses"),
        "{}",
        direct.model_text()
    );
    assert!(inner.requests().is_empty());
}

#[tokio::test]
async fn a_50_mb_body_is_capped_and_not_read_whole() {
    const TOTAL: u64 = 50 * 1024 * 1024;
    let sent = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&sent);
    let server = LocalHttpServer::start(move |_| {
        Reply::stream(
            "text/plain",
            TOTAL,
            &[b'x'; 64 * 1024],
            Arc::clone(&counter),
        )
    });
    let host = open_host();
    let result = call(
        &host,
        "web_fetch",
        json!({"url": server.url("/huge"), "max_bytes": 1_048_576}),
    )
    .await;
    assert!(!result.is_error, "a capped body is a success: {result:?}");
    assert_eq!(result.output["truncated"], true);
    assert_eq!(result.output["bytes_read"], 1_048_576);
    assert_eq!(result.output["content"].as_str().unwrap().len(), 1_048_576);
    assert!(
        result
            .model_text()
            .ends_with("the rest of the page is not shown"),
        "notice present"
    );
    // The connection was dropped at the cap: the server could not push the 50 MB through
    // (loopback socket buffers hold a few MB at most).
    std::thread::sleep(Duration::from_millis(300));
    let pushed = sent.load(Ordering::SeqCst);
    assert!(
        pushed < 24 * 1024 * 1024,
        "the server sent {pushed} bytes: the body was read on"
    );
}

#[tokio::test]
async fn max_bytes_cannot_exceed_the_configured_limit() {
    let server = LocalHttpServer::start(|_| Reply::ok("text/plain", "y".repeat(4000)));
    let options = WebOptions {
        max_bytes: 1000,
        ..options()
    };
    let host = fetch_host(&options, AddressGuard::new(PrivateAddresses::Allowed));
    let result = call(
        &host,
        "web_fetch",
        json!({"url": server.url("/"), "max_bytes": 1_000_000}),
    )
    .await;
    assert_eq!(result.output["bytes_read"], 1000);
    assert_eq!(result.output["truncated"], true);
    let zero = call(
        &host,
        "web_fetch",
        json!({"url": server.url("/"), "max_bytes": 0}),
    )
    .await;
    assert_eq!(zero.error_code(), Some("invalid_arguments"));
}

#[tokio::test]
async fn a_slow_server_is_a_timeout() {
    let server =
        LocalHttpServer::start(|_| Reply::ok("text/plain", "late").after(Duration::from_secs(6)));
    let options = WebOptions {
        timeout: Duration::from_secs(1),
        ..options()
    };
    let host = fetch_host(&options, AddressGuard::new(PrivateAddresses::Allowed));
    let started = Instant::now();
    let result = call(&host, "web_fetch", json!({"url": server.url("/slow")})).await;
    assert_eq!(result.error_code(), Some("tool_timeout"), "{result:?}");
    assert_eq!(result.output["timeout_seconds"], 1);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn gzip_bodies_are_decompressed() {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all("compressed hello ".repeat(100).as_bytes())
        .unwrap();
    let gz = encoder.finish().unwrap();
    let server = LocalHttpServer::start(move |_| {
        Reply::ok("text/plain; charset=utf-8", gz.clone()).header("Content-Encoding", "gzip")
    });
    let host = open_host();
    let result = call(&host, "web_fetch", json!({"url": server.url("/z")})).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.output["content"], "compressed hello ".repeat(100));
    assert!(
        server.requests()[0]
            .header("accept-encoding")
            .is_some_and(|v| v.contains("gzip")),
        "gzip is offered"
    );
}

#[tokio::test]
async fn non_utf8_charsets_are_decoded() {
    let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode("<html><head><meta charset=\"Shift_JIS\"></head><body><h1>日本語のページ</h1><p>テスト</p></body></html>");
    let (cyrillic, _, _) = encoding_rs::WINDOWS_1251.encode("Привет, мир");
    let (sjis, cyrillic) = (sjis.into_owned(), cyrillic.into_owned());
    let server = LocalHttpServer::start(move |request| match request.route() {
        // No charset in the header: the page's <meta> says Shift_JIS.
        "/ja" => Reply::ok("text/html", sjis.clone()),
        _ => Reply::ok("text/plain; charset=windows-1251", cyrillic.clone()),
    });
    let host = open_host();
    let ja = call(&host, "web_fetch", json!({"url": server.url("/ja")})).await;
    assert_eq!(ja.output["content"], "# 日本語のページ\n\nテスト");
    let ru = call(&host, "web_fetch", json!({"url": server.url("/ru")})).await;
    assert_eq!(ru.output["content"], "Привет, мир");
}

#[tokio::test]
async fn slow_down_answers_are_rate_limited_with_the_delay() {
    let server = LocalHttpServer::start(|request| match request.route() {
        "/429" => Reply::status(429, "Too Many Requests").header("Retry-After", "7"),
        "/503" => Reply::status(503, "busy").header("Retry-After", "12"),
        "/503-plain" => Reply::status(503, "down for maintenance"),
        _ => Reply::status(404, "<h1>Not Found</h1>"),
    });
    let host = open_host();
    let limited = call(&host, "web_fetch", json!({"url": server.url("/429")})).await;
    assert_eq!(limited.error_code(), Some("rate_limited"), "{limited:?}");
    assert_eq!(limited.output["retry_after_seconds"], 7);
    assert!(
        limited.model_text().contains("Wait 7 seconds"),
        "{}",
        limited.model_text()
    );
    let busy = call(&host, "web_fetch", json!({"url": server.url("/503")})).await;
    assert_eq!(busy.error_code(), Some("rate_limited"));
    assert_eq!(busy.output["retry_after_seconds"], 12);
    let down = call(&host, "web_fetch", json!({"url": server.url("/503-plain")})).await;
    assert_eq!(down.error_code(), Some("tool_execution_failed"), "{down:?}");
    assert_eq!(down.output["status"], 503);
    let missing = call(&host, "web_fetch", json!({"url": server.url("/nope")})).await;
    assert_eq!(missing.error_code(), Some("tool_execution_failed"));
    assert_eq!(missing.output["status"], 404);
    assert!(
        missing.model_text().contains("HTTP 404"),
        "{}",
        missing.model_text()
    );
}

#[tokio::test]
async fn bad_urls_are_invalid_arguments() {
    let host = open_host();
    for url in ["not a url", "http://", "//example.com/x"] {
        let result = call(&host, "web_fetch", json!({"url": url})).await;
        assert_eq!(
            result.error_code(),
            Some("invalid_arguments"),
            "{url}: {result:?}"
        );
    }
}

#[tokio::test]
async fn the_spec_is_untrusted_read_only_and_network_backed() {
    use kun_ports::ToolHost as _;
    let host = open_host();
    let tools = host.list_tools(&support::context());
    let fetch = tools.iter().find(|t| t.name() == "web_fetch").unwrap();
    assert_eq!(fetch.spec().policy, kun_ports::ToolPolicy::Untrusted);
    assert_eq!(fetch.spec().kind, kun_ports::ToolKind::ToolCall);
    assert_eq!(fetch.spec().side_effect, kun_ports::SideEffect::ReadOnly);
    assert!(fetch.provider_kind().is_network_backed());
}
