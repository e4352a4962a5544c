//! `cargo xtask bench mcp` (or `cargo run --release -p kun-mcp --example bench_mcp`).
//!
//! 1. **Search**: BM25 index build and query latency over 10,000 synthetic MCP tools.
//! 2. **Gates**: the time of one call of the fixture server's `echo` through our gates
//!    (kun-registry's `Host`: resolve, sandbox, approval, ledger, …, then kun-mcp's tool) vs
//!    a direct rmcp client call to another instance of the same fixture server, as a ratio
//!    measured side by side.
//!
//! Options: `--tools N` (default 10000), `--queries N` (default 200), `--calls N` (default
//! 2000). The program re-runs itself with `--fixture-server` to serve the fixture on stdio.

use kun_mcp::search::{SearchDoc, SearchIndex};
use kun_mcp::{
    McpManager, McpServerConfig, RemoteTool, SearchMode, SearchSettings, identity_sanitizer,
    records_for_catalog,
};
use kun_ports::{ToolCall, ToolHost, ToolHostContext, ToolProvider};
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::WorkspaceSandbox;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

const VERBS: &[&str] = &[
    "get", "list", "create", "update", "delete", "search", "send", "read", "write", "move", "copy",
    "run", "stop", "merge", "review", "fetch", "upload", "download", "convert", "sync",
];
const NOUNS: &[&str] = &[
    "file",
    "directory",
    "issue",
    "pull_request",
    "commit",
    "branch",
    "message",
    "channel",
    "user",
    "table",
    "row",
    "page",
    "screenshot",
    "event",
    "calendar",
    "invoice",
    "customer",
    "ticket",
    "deployment",
    "secret",
    "bucket",
    "object",
    "queue",
    "job",
    "metric",
    "alert",
    "dashboard",
    "note",
    "task",
    "project",
    "document",
    "image",
    "video",
    "playlist",
    "order",
    "product",
    "payment",
    "subscription",
    "webhook",
    "token",
    "domain",
    "record",
    "cluster",
    "node",
    "pod",
    "volume",
    "snapshot",
    "backup",
    "log",
    "report",
];
const SERVICES: &[&str] = &[
    "github", "gitlab", "slack", "jira", "linear", "notion", "stripe", "shopify", "aws", "gcp",
    "azure", "k8s", "docker", "sentry", "datadog", "grafana", "postgres", "mysql", "redis",
    "mongo", "drive", "dropbox", "calendar", "gmail", "zoom", "figma", "youtube", "spotify",
    "twilio", "sendgrid",
];

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `count` deterministic tools over 100 servers.
fn synthetic_catalog(count: usize) -> Vec<(String, Vec<RemoteTool>)> {
    let servers = 100;
    let mut out: Vec<(String, Vec<RemoteTool>)> = (0..servers)
        .map(|s| (format!("{}-{s}", SERVICES[s % SERVICES.len()]), Vec::new()))
        .collect();
    for i in 0..count {
        let server = i % servers;
        let verb = VERBS[i % VERBS.len()];
        let noun = NOUNS[(i / VERBS.len()) % NOUNS.len()];
        let service = SERVICES[server % SERVICES.len()];
        let tool = json!({
            "name": format!("{verb}_{noun}_{i}"),
            "description": format!(
                "{verb} a {} in {service}. Use it when you need to {verb} {}s; returns the {} as JSON.",
                noun.replace('_', " "), noun.replace('_', " "), noun.replace('_', " ")
            ),
            "inputSchema": {
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": format!("The {noun} id")},
                    "limit": {"type": "integer", "description": "How many results"},
                    "mode": {"type": "string", "enum": ["fast", "full"]}
                },
                "required": ["id"]
            },
            "annotations": {"readOnlyHint": matches!(verb, "get" | "list" | "search" | "read" | "fetch")}
        });
        if let Ok(tool) = RemoteTool::from_json(tool) {
            out[server].1.push(tool);
        }
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "small indexes"
    )]
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn bench_search() {
    let count = arg("--tools", 10_000);
    let query_count = arg("--queries", 200);
    let catalog = synthetic_catalog(count);
    let started = Instant::now();
    let records = records_for_catalog(catalog, &identity_sanitizer());
    let naming = started.elapsed();
    let mut builds = Vec::new();
    let mut index = SearchIndex::default();
    for _ in 0..5 {
        let started = Instant::now();
        index = SearchIndex::build(records.iter().map(SearchDoc::from));
        builds.push(started.elapsed());
    }
    builds.sort();
    let queries = [
        "list open pull requests",
        "delete a customer record",
        "send a message to the channel",
        "download the latest backup snapshot",
        "查看部署日志",
        "创建一个新的工单",
        "upload a video to youtube",
        "stop the running job",
        "find invoices of a customer",
        "把文件移动到另一个目录",
    ];
    let mut latencies = Vec::new();
    let mut hits = 0usize;
    for i in 0..query_count {
        let query = queries[i % queries.len()];
        let started = Instant::now();
        let found = index.search(query, 5, |_| true);
        latencies.push(started.elapsed());
        hits += found.len();
    }
    latencies.sort();
    let docs: Vec<SearchDoc<'_>> = records.iter().map(SearchDoc::from).collect();
    let mut scans = Vec::new();
    for i in 0..query_count {
        let query = queries[i % queries.len()];
        let started = Instant::now();
        std::hint::black_box(plain_scan(&docs, query, 5));
        scans.push(started.elapsed());
    }
    scans.sort();
    let build = builds[2];
    let scan_p50 = percentile(&scans, 0.5);
    let query_p50 = percentile(&latencies, 0.5);
    println!(
        "== BM25 search over {} MCP tools ({} servers); anchor: a plain scan of the same records \
         (lower-cased substring count of each query word over name, server and description, \
         top 5), run side by side",
        index.len(),
        100
    );
    println!(
        "records (naming, classification): {:>10.1} ms",
        naming.as_secs_f64() * 1e3
    );
    println!(
        "index build:                      {:>10.1} ms (median of 5; min {:.1} ms)  anchor: one plain scan {:.1} ms  ratio {:.1}× (paid once per catalog change)",
        build.as_secs_f64() * 1e3,
        builds[0].as_secs_f64() * 1e3,
        scan_p50.as_secs_f64() * 1e3,
        build.as_secs_f64() / scan_p50.as_secs_f64().max(1e-9),
    );
    println!(
        "query latency:                    {:>10.1} µs median, {:.1} µs p95, {:.1} µs max ({} queries, {} hits)  anchor: plain scan {:.1} µs median  ratio {:.3}× ({:.0}× faster)",
        micros(query_p50),
        micros(percentile(&latencies, 0.95)),
        micros(percentile(&latencies, 1.0)),
        latencies.len(),
        hits,
        micros(scan_p50),
        query_p50.as_secs_f64() / scan_p50.as_secs_f64().max(1e-12),
        scan_p50.as_secs_f64() / query_p50.as_secs_f64().max(1e-12),
    );
}

/// The anchor: what a catalog without an index does per query. Every record's name, server
/// and description are lower-cased and each query word's occurrences counted; the five
/// records with the most occurrences win. No stemming, synonyms or Han segmentation: it is a
/// cost reference, not a ranking reference (`tests/search_ranking.rs` measures ranking).
fn plain_scan<'a>(docs: &[SearchDoc<'a>], query: &str, limit: usize) -> Vec<&'a str> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let mut scored: Vec<(usize, &'a str)> = docs
        .iter()
        .filter_map(|doc| {
            let text = format!("{} {} {}", doc.name, doc.server, doc.description).to_lowercase();
            let score: usize = words
                .iter()
                .map(|word| text.matches(word.as_str()).count())
                .sum();
            (score > 0).then_some((score, doc.name))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    scored.truncate(limit);
    scored.into_iter().map(|(_, name)| name).collect()
}

async fn bench_gates() -> Result<(), Box<dyn std::error::Error>> {
    let calls = arg("--calls", 2000).max(10);
    let me = std::env::current_exe()?;
    let me = me.to_string_lossy().into_owned();

    // Through our gates: manager → provider → registry → Host.
    let manager = McpManager::builder()
        .server(McpServerConfig::stdio("fixture", &me).with_args(["--fixture-server"]))
        .search(SearchSettings {
            mode: SearchMode::Direct,
            ..SearchSettings::default()
        })
        .start()
        .await?;
    let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
    let providers: Vec<Arc<dyn ToolProvider>> = manager
        .providers()
        .into_iter()
        .map(|p| p as Arc<dyn ToolProvider>)
        .collect();
    let registry = Arc::new(CapabilityRegistry::with_providers(filters, providers)?);
    let host = Host::builder(registry).build();
    let workspace = std::env::temp_dir();
    let ctx = ToolHostContext::builder("bench", "turn")
        .workspace(&workspace)
        .build();

    // Direct: an rmcp client on another instance of the same server.
    let mut command = tokio::process::Command::new(&me);
    command.arg("--fixture-server");
    let client = ().serve(TokioChildProcess::new(command)?).await?;

    let arguments = json!({"text": "ping"});
    let object = arguments.as_object().cloned().unwrap_or_default();
    let mut gated = Vec::with_capacity(calls);
    let mut direct = Vec::with_capacity(calls);
    for i in 0..calls + calls / 10 {
        // Interleaved, so both see the same machine load.
        let started = Instant::now();
        let result = host
            .execute(
                ToolCall::new(format!("call-{i}"), "mcp_fixture_echo", arguments.clone()),
                &ctx,
            )
            .await?;
        let through_gates = started.elapsed();
        if result.is_error {
            return Err(format!("gated call failed: {:?}", result.output).into());
        }
        let started = Instant::now();
        let answer = client
            .call_tool(CallToolRequestParams::new("echo").with_arguments(object.clone()))
            .await?;
        let direct_call = started.elapsed();
        if answer.is_error == Some(true) {
            return Err("direct call failed".into());
        }
        if i >= calls / 10 {
            gated.push(through_gates);
            direct.push(direct_call);
        }
    }
    gated.sort();
    direct.sort();
    let g = percentile(&gated, 0.5);
    let d = percentile(&direct, 0.5);
    println!("== one call of the fixture's `echo` over stdio ({calls} calls each, interleaved)");
    println!(
        "direct rmcp call:                 {:>10.1} µs median, {:.1} µs p95",
        micros(d),
        micros(percentile(&direct, 0.95))
    );
    println!(
        "through our gates (Host):         {:>10.1} µs median, {:.1} µs p95",
        micros(g),
        micros(percentile(&gated, 0.95))
    );
    println!(
        "ratio gated / direct:             {:>10.2}× (overhead {:.1} µs per call)",
        g.as_secs_f64() / d.as_secs_f64(),
        micros(g.saturating_sub(d))
    );
    let _ = client.cancel().await;
    manager.shutdown().await;
    Ok(())
}

async fn serve_fixture() -> Result<(), Box<dyn std::error::Error>> {
    let service = kun_mcp_fixture_server::FixtureServer::new()
        .serve(rmcp::transport::stdio())
        .await?;
    service.waiting().await?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if std::env::args().any(|a| a == "--fixture-server") {
        return runtime.block_on(serve_fixture());
    }
    bench_search();
    runtime.block_on(bench_gates())
}
