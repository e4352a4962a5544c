//! `cargo xtask bench web` (or `cargo run --release -p kun-web --example bench_web`).
//!
//! Fetch throughput against a server on 127.0.0.1, through the whole pipeline (kun-registry's
//! `Host`, then `web_fetch`: guard, resolution, pinned connection, streamed body, charset,
//! HTML → Markdown), side by side with the anchor: a plain `reqwest` GET of the same URL that
//! only reads the bytes.
//!
//! 1. a 100 KiB documentation page as Markdown;
//! 2. a 1 MiB plain-text file;
//! 3. a 50 MiB body capped at the default 5 MiB (how fast the cap is reached and dropped).
//!
//! Options: `--fetches N` (default 200).
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "benchmark program")]

use kun_ports::testkit::{LocalHttpServer, Reply};
use kun_ports::{ApprovalPolicy, ToolCall, ToolHost, ToolHostContext, ToolProvider};
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::WorkspaceSandbox;
use kun_web::{AddressGuard, PrivateAddresses, WebOptions, WebProvider};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index]
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A documentation page of about `bytes`: sections with headings, paragraphs with links,
/// code blocks and lists, inside a site chrome (nav, footer, scripts).
fn page(bytes: usize) -> String {
    let mut body = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Bench docs</title>\
         <script>var analytics = 1;</script><style>body{margin:0}</style></head><body>\
         <nav><a href=\"/\">Home</a> <a href=\"/docs\">Docs</a></nav><main>",
    );
    let mut n = 0;
    while body.len() < bytes {
        body.push_str(&format!(
            "<h2 id=\"s{n}\">Section {n}</h2><p>Section {n} explains <a href=\"https://example.com/{n}\">\
             the {n}th option</a> with <strong>emphasis</strong> and <code>inline_code({n})</code>. \
             Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.</p>\
             <pre><code class=\"language-rust\">fn section_{n}() -> u32 {{\n    {n} * 2\n}}</code></pre>\
             <ul><li>first point {n}</li><li>second point {n}</li></ul>"
        ));
        n += 1;
    }
    body.push_str("</main><footer>© bench</footer></body></html>");
    body
}

fn host(options: &WebOptions) -> Host {
    let provider = WebProvider::with_guard(options, AddressGuard::new(PrivateAddresses::Allowed));
    let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
    let providers: Vec<Arc<dyn ToolProvider>> = vec![Arc::new(provider)];
    Host::builder(Arc::new(
        CapabilityRegistry::with_providers(filters, providers).unwrap(),
    ))
    .build()
}

async fn compare(label: &str, host: &Host, url: &str, fetches: usize, size: usize) {
    let ctx = ToolHostContext::builder("bench", "turn")
        .workspace(std::env::temp_dir())
        .approval(ApprovalPolicy::Auto)
        .build();
    let plain = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut tool = Vec::with_capacity(fetches);
    let mut anchor = Vec::with_capacity(fetches);
    let mut out_bytes = 0usize;
    for i in 0..fetches + fetches / 10 {
        let started = Instant::now();
        let result = host
            .execute(
                ToolCall::new(format!("c{i}"), "web_fetch", json!({"url": url})),
                &ctx,
            )
            .await
            .unwrap();
        let took = started.elapsed();
        assert!(!result.is_error, "{:?}", result.output);
        let started = Instant::now();
        let bytes = plain.get(url).send().await.unwrap().bytes().await.unwrap();
        let anchor_took = started.elapsed();
        assert_eq!(bytes.len(), size);
        if i >= fetches / 10 {
            tool.push(took);
            anchor.push(anchor_took);
            out_bytes += result.output["content"].as_str().map_or(0, str::len);
        }
    }
    tool.sort();
    anchor.sort();
    let total: Duration = tool.iter().sum();
    println!("== {label} ({fetches} fetches each, interleaved)");
    println!(
        "web_fetch through the Host:    {:>8.2} ms p50, {:.2} ms p95, {:.0} fetches/s, {:.1} MiB/s of body ({} KiB of text out each)",
        millis(percentile(&tool, 0.5)),
        millis(percentile(&tool, 0.95)),
        tool.len() as f64 / total.as_secs_f64(),
        (size * tool.len()) as f64 / total.as_secs_f64() / (1024.0 * 1024.0),
        out_bytes / tool.len() / 1024
    );
    println!(
        "anchor: plain reqwest GET:     {:>8.2} ms p50, {:.2} ms p95",
        millis(percentile(&anchor, 0.5)),
        millis(percentile(&anchor, 0.95))
    );
    println!(
        "ratio web_fetch / plain GET:   {:>8.2}× at p50",
        percentile(&tool, 0.5).as_secs_f64() / percentile(&anchor, 0.5).as_secs_f64()
    );
}

fn main() {
    let fetches = arg("--fetches", 200).max(10);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let html = page(100 * 1024);
    let text = "plain text line for the benchmark\n".repeat(1024 * 1024 / 34 + 1)[..1024 * 1024]
        .to_owned();
    let (html_len, text_len) = (html.len(), text.len());
    let sent = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&sent);
    let server = LocalHttpServer::start(move |request| match request.route() {
        "/doc" => Reply::ok("text/html; charset=utf-8", html.clone()),
        "/huge" => Reply::stream(
            "text/plain",
            50 * 1024 * 1024,
            &[b'z'; 64 * 1024],
            Arc::clone(&counter),
        ),
        _ => Reply::ok("text/plain; charset=utf-8", text.clone()),
    });
    let options = WebOptions::default();
    let host = host(&options);
    runtime.block_on(async {
        compare(
            "100 KiB HTML page → Markdown",
            &host,
            &server.url("/doc"),
            fetches,
            html_len,
        )
        .await;
        compare(
            "1 MiB plain text",
            &host,
            &server.url("/text"),
            fetches / 4,
            text_len,
        )
        .await;
        let ctx = ToolHostContext::builder("bench", "turn")
            .workspace(std::env::temp_dir())
            .approval(ApprovalPolicy::Auto)
            .build();
        let mut capped = Vec::new();
        for i in 0..10 {
            let started = Instant::now();
            let result = host
                .execute(
                    ToolCall::new(
                        format!("h{i}"),
                        "web_fetch",
                        json!({"url": server.url("/huge")}),
                    ),
                    &ctx,
                )
                .await
                .unwrap();
            capped.push(started.elapsed());
            assert_eq!(result.output["truncated"], true);
        }
        capped.sort();
        println!("== 50 MiB body, default 5 MiB cap (10 fetches)");
        println!(
            "capped fetch:                  {:>8.2} ms p50 ({:.0} MiB/s up to the cap)",
            millis(percentile(&capped, 0.5)),
            5.0 / percentile(&capped, 0.5).as_secs_f64()
        );
    });
}
