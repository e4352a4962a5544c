//! Benchmark (not a test): `kun-tools serve` round trips against the official filesystem MCP
//! server (`@modelcontextprotocol/server-filesystem`, pinned in .ci/install-bench.sh), same
//! client (rmcp), same tree, one run, calls interleaved; then the resident memory of `serve`
//! idle with the built-in catalog.
//!
//! `cargo xtask bench serve` (or `cargo run --release -p kun-cli --example bench_serve --
//! [--iterations N]`). The filesystem server is looked up in
//! `target/ci-node/bench/node_modules/.bin/mcp-server-filesystem` (installed by
//! `.ci/install-bench.sh`) or `$KUN_BENCH_FS_SERVER`; without
//! it only our figures are printed.
//!
//! Then the floor: the same rmcp client calling the no-op `echo` of a bare rmcp server (the
//! fixture server) beside our `read`; the Python SDK's client (from `target/ci-venv`) timing our
//! `read` against the filesystem server's `read_text_file`; and resident memory idle and after
//! 1,000 calls.
//!
//! Operations: `read` of a small file (theirs: `read_text_file`); `glob` of `**/*.rs` over
//! 500 files (theirs: `search_files`); `grep` of a regex over the same files (the filesystem
//! server has no content search, so there is no anchor for it).

#[path = "support/binary.rs"]
mod binary;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

type Client = RunningService<RoleClient, ()>;
type Fallible<T> = Result<T, Box<dyn Error>>;

/// Issue 13's targets: our `read` against the filesystem server's `read_text_file`, and
/// against the bare rmcp server's no-op `echo` (the floor); resident memory idle and after
/// 1,000 calls, in MB (10^6 bytes).
const READ_VS_FILESYSTEM: f64 = 0.5;
const READ_VS_FLOOR: f64 = 1.2;
const IDLE_RSS_MB: f64 = 14.0;
const BUSY_RSS_MB: f64 = 20.0;

const DIRS: usize = 20;
const FILES_PER_DIR: usize = 25;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Fallible<()> {
    let iterations = iterations()?;
    let scratch = tempfile::tempdir()?;
    let tree = scratch.path().join("tree");
    build_tree(&tree)?;
    let kun = kun_tools_binary()?;

    let (ours, ours_pid) = connect(kun_command(&kun, &tree, scratch.path())).await?;
    let theirs = match filesystem_server() {
        Some(server) => {
            let mut cmd = tokio::process::Command::new(server);
            cmd.arg(&tree);
            Some(connect(cmd).await?)
        }
        None => None,
    };

    let glob_count = |output: &Value| output["files"].as_array().map_or(0, Vec::len);
    let cases: [(&str, Call, Option<Call>); 3] = [
        (
            "read (small file)",
            Call::new("read", json!({"path": "small.txt"})),
            Some(Call::new(
                "read_text_file",
                json!({"path": tree.join("small.txt")}),
            )),
        ),
        (
            "glob **/*.rs (500 files)",
            Call::new("glob", json!({"pattern": "**/*.rs", "limit": 1000})),
            Some(Call::new(
                "search_files",
                json!({"path": tree, "pattern": "**/*.rs"}),
            )),
        ),
        (
            "grep fn handle_1\\d (500 files)",
            Call::new("grep", json!({"pattern": "fn handle_1\\d", "limit": 1000})),
            None,
        ),
    ];

    // Same answers before timing anything.
    let our_glob = ours.call(&cases[1].1).await?;
    let our_paths = glob_count(&our_glob);
    if let (Some((theirs, _)), Some(their_call)) = (&theirs, &cases[1].2) {
        let their_glob = theirs.call(their_call).await?;
        let their_paths = their_glob["content"]
            .as_str()
            .map_or(0, |text| text.lines().count());
        if their_paths != our_paths {
            return Err(
                format!("glob disagrees: ours {our_paths} paths, theirs {their_paths}").into(),
            );
        }
    }

    println!(
        "serve round trips over stdio, rmcp client, {iterations} iterations after warm-up, calls interleaved"
    );
    println!(
        "{:<30} {:>14} {:>14} {:>14} {:>12}",
        "operation", "ours median", "ours p90", "theirs median", "ours/theirs"
    );
    for (name, our_call, their_call) in &cases {
        let mut our_times = Vec::with_capacity(iterations);
        let mut their_times = Vec::with_capacity(iterations);
        for round in 0..iterations + iterations / 10 {
            let warm = round >= iterations / 10;
            let took = ours.time(our_call).await?;
            if warm {
                our_times.push(took);
            }
            if let (Some((theirs, _)), Some(call)) = (&theirs, their_call) {
                let took = theirs.time(call).await?;
                if warm {
                    their_times.push(took);
                }
            }
        }
        let ours_median = percentile(&mut our_times, 50);
        let ours_p90 = percentile(&mut our_times, 90);
        let (theirs_text, ratio) = if their_times.is_empty() {
            let why = if theirs.is_none() {
                "not installed"
            } else {
                "no such tool"
            };
            (why.to_owned(), "n/a".to_owned())
        } else {
            let median = percentile(&mut their_times, 50);
            let ratio = ours_median.as_secs_f64() / median.as_secs_f64();
            let verdict = if our_call.tool == "read" {
                format!(
                    " (target ≤ {READ_VS_FILESYSTEM}x: {})",
                    verdict(ratio <= READ_VS_FILESYSTEM)
                )
            } else {
                String::new()
            };
            (micros(median), format!("{ratio:.2}x{verdict}"))
        };
        println!(
            "{name:<30} {:>14} {:>14} {theirs_text:>14} {ratio:>12}",
            micros(ours_median),
            micros(ours_p90)
        );
    }

    floor(&ours, iterations).await?;
    python_client(&kun, &tree, scratch.path(), iterations)?;

    // Idle memory: a fresh `serve`, initialised and listed once, then left alone.
    let (idle, idle_pid) = connect(kun_command(&kun, &tree, scratch.path())).await?;
    let tools = idle.client.list_all_tools().await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let ours_rss = rss_kib(idle_pid)?;
    println!(
        "\nidle resident memory: kun-tools serve {:.1} MiB ({:.1} MB), {:.1} MiB of it anonymous ({} tools listed) (target ≤ {IDLE_RSS_MB} MB: {})",
        kib_to_mib(ours_rss),
        kib_to_mb(ours_rss),
        kib_to_mib(anon_kib(idle_pid)?),
        tools.len(),
        verdict(kib_to_mb(ours_rss) <= IDLE_RSS_MB)
    );
    if let Some((_, their_pid)) = &theirs {
        println!(
            "                      filesystem server (node) {:.1} MiB after the run",
            kib_to_mib(rss_kib(*their_pid)?)
        );
    } else {
        println!(
            "the filesystem server is not installed: run .ci/install-bench.sh (or set KUN_BENCH_FS_SERVER)"
        );
    }
    println!(
        "(kun-tools serve after the run: {:.1} MiB)",
        kib_to_mib(rss_kib(ours_pid)?)
    );
    // The same fresh server after 1,000 calls: read, glob and grep in turn.
    let mix = [
        Call::new("read", json!({"path": "small.txt"})),
        Call::new("glob", json!({"pattern": "**/*.rs", "limit": 1000})),
        Call::new("grep", json!({"pattern": "fn handle_1\\d", "limit": 1000})),
    ];
    for n in 0..1000 {
        idle.time(&mix[n % mix.len()]).await?;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let busy_rss = rss_kib(idle_pid)?;
    println!(
        "resident memory after 1,000 calls (read, glob, grep in turn): kun-tools serve {:.1} MiB ({:.1} MB), {:.1} MiB of it anonymous (target ≤ {BUSY_RSS_MB} MB: {})",
        kib_to_mib(busy_rss),
        kib_to_mb(busy_rss),
        kib_to_mib(anon_kib(idle_pid)?),
        verdict(kib_to_mb(busy_rss) <= BUSY_RSS_MB)
    );

    idle.client.cancel().await?;
    ours.client.cancel().await?;
    if let Some((theirs, _)) = theirs {
        theirs.client.cancel().await?;
    }
    Ok(())
}

/// The floor: the same client calling the no-op `echo` of a bare rmcp server (the fixture
/// server), interleaved with our `read`; what a round trip costs before any tool work.
async fn floor(ours: &Server, iterations: usize) -> Fallible<()> {
    let fixture = binary::build("kun-mcp-fixture-server", "kun-mcp-fixture-server")?;
    let (bare, _) = connect(tokio::process::Command::new(fixture)).await?;
    let read = Call::new("read", json!({"path": "small.txt"}));
    let echo = Call::new("echo", json!({"text": "x"}));
    let (mut ours_times, mut floor_times) = (Vec::new(), Vec::new());
    for round in 0..iterations + iterations / 10 {
        let (a, b) = (ours.time(&read).await?, bare.time(&echo).await?);
        if round >= iterations / 10 {
            ours_times.push(a);
            floor_times.push(b);
        }
    }
    let (ours_median, floor_median) = (
        percentile(&mut ours_times, 50),
        percentile(&mut floor_times, 50),
    );
    let ratio = ours_median.as_secs_f64() / floor_median.as_secs_f64();
    println!(
        "\nfloor (rmcp client): bare rmcp server `echo` {}, our `read` {} → {ratio:.2}x the floor (target ≤ {READ_VS_FLOOR}x: {})",
        micros(floor_median),
        micros(ours_median),
        verdict(ratio <= READ_VS_FLOOR)
    );
    bare.client.cancel().await?;
    Ok(())
}

/// The Python SDK's client (from `target/ci-venv`, installed by `.ci/run`) timing our `read`,
/// the filesystem server's `read_text_file` and the bare rmcp server's no-op `echo` (what
/// this client costs on its own), calls interleaved.
fn python_client(kun: &Path, tree: &Path, scratch: &Path, iterations: usize) -> Fallible<()> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/ci-venv/bin/python");
    let Some(theirs) = filesystem_server() else {
        println!("python client: the filesystem server is not installed, skipped");
        return Ok(());
    };
    if !python.exists() {
        println!("python client: no target/ci-venv (run .ci/run once), skipped");
        return Ok(());
    }
    let script = scratch.join("bench_client.py");
    std::fs::write(&script, PYTHON_CLIENT)?;
    let fixture = binary::build("kun-mcp-fixture-server", "kun-mcp-fixture-server")?;
    let output = std::process::Command::new(python)
        .arg(&script)
        .arg(iterations.to_string())
        .arg(kun)
        .arg(tree)
        .arg(scratch)
        .arg(theirs)
        .arg(fixture)
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "python client failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let figures: Value = serde_json::from_slice(&output.stdout)?;
    let (ours, theirs, floor) = (
        figures["ours_us"].as_f64().unwrap_or(f64::NAN),
        figures["theirs_us"].as_f64().unwrap_or(f64::NAN),
        figures["floor_us"].as_f64().unwrap_or(f64::NAN),
    );
    let ratio = ours / theirs;
    println!(
        "python SDK client: our `read` {ours:.0} µs, filesystem `read_text_file` {theirs:.0} µs → {ratio:.2}x (target ≤ {READ_VS_FILESYSTEM}x: {})",
        verdict(ratio <= READ_VS_FILESYSTEM)
    );
    println!(
        "                   bare rmcp server `echo` {floor:.0} µs (this client's floor) → the best any server can reach here is {:.2}x; ours/floor {:.2}x",
        floor / theirs,
        ours / floor
    );
    Ok(())
}

/// A Python SDK client timing one call on each of three servers, interleaved; prints medians
/// as JSON.
const PYTHON_CLIENT: &str = r#"
import asyncio, json, os, statistics, sys, time
from contextlib import AsyncExitStack
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    n, kun, tree, scratch, fs, fixture = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(scratch, "config"), XDG_STATE_HOME=os.path.join(scratch, "state"))
    ours = StdioServerParameters(command=kun, args=["serve", "--workspace", tree], env=env)
    theirs = StdioServerParameters(command=fs, args=[tree])
    bare = StdioServerParameters(command=fixture, args=[])
    async with AsyncExitStack() as stack:
        sessions = []
        for params in (ours, theirs, bare):
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions.append(session)
        calls = [("read", {"path": "small.txt"}), ("read_text_file", {"path": os.path.join(tree, "small.txt")}), ("echo", {"text": "x"})]
        times = [[], [], []]
        for round in range(n + n // 10):
            for i, (session, (name, args)) in enumerate(zip(sessions, calls)):
                start = time.perf_counter()
                result = await session.call_tool(name, args)
                took = time.perf_counter() - start
                if getattr(result, "is_error", None) or getattr(result, "isError", None):
                    raise SystemExit(f"{name} failed: {result}")
                if round >= n // 10:
                    times[i].append(took)
        print(json.dumps({"ours_us": statistics.median(times[0]) * 1e6, "theirs_us": statistics.median(times[1]) * 1e6, "floor_us": statistics.median(times[2]) * 1e6}))

asyncio.run(main())
"#;

/// One tool call to repeat.
struct Call {
    tool: &'static str,
    args: Value,
}

impl Call {
    fn new(tool: &'static str, args: Value) -> Self {
        Self { tool, args }
    }

    fn request(&self) -> CallToolRequestParams {
        let arguments = match &self.args {
            Value::Object(map) => map.clone(),
            _ => serde_json::Map::new(),
        };
        CallToolRequestParams::new(self.tool).with_arguments(arguments)
    }
}

/// A connected server.
struct Server {
    client: Client,
}

impl Server {
    /// One call; its structured output (or the text as `{"content": …}`); errors are fatal.
    async fn call(&self, call: &Call) -> Fallible<Value> {
        let result: CallToolResult = self.client.call_tool(call.request()).await?;
        if result.is_error == Some(true) {
            return Err(format!("{} failed: {result:?}", call.tool).into());
        }
        Ok(result.structured_content.unwrap_or_else(|| {
            let text = result
                .content
                .first()
                .and_then(|c| c.as_text())
                .map_or(String::new(), |t| t.text.clone());
            json!({ "content": text })
        }))
    }

    /// The wall time of one call.
    async fn time(&self, call: &Call) -> Fallible<Duration> {
        let request = call.request();
        let start = Instant::now();
        let result = self.client.call_tool(request).await?;
        let took = start.elapsed();
        if result.is_error == Some(true) {
            return Err(format!("{} failed: {result:?}", call.tool).into());
        }
        Ok(took)
    }
}

async fn connect(cmd: tokio::process::Command) -> Fallible<(Server, u32)> {
    let transport = TokioChildProcess::new(cmd)?;
    let pid = transport.id().ok_or("the server has no pid")?;
    let client = ().serve(transport).await?;
    Ok((Server { client }, pid))
}

fn kun_command(kun: &Path, tree: &Path, scratch: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(kun);
    cmd.arg("serve")
        .arg("--workspace")
        .arg(tree)
        .env("XDG_CONFIG_HOME", scratch.join("config"))
        .env("XDG_STATE_HOME", scratch.join("state"))
        .env_remove("RUST_LOG");
    cmd
}

/// Builds `kun-tools` with the profile this example was built with, and returns its path.
fn kun_tools_binary() -> Fallible<PathBuf> {
    binary::build("kun-cli", "kun-tools")
}

fn filesystem_server() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("KUN_BENCH_FS_SERVER") {
        return Some(PathBuf::from(path));
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/ci-node/bench/node_modules/.bin/mcp-server-filesystem");
    path.exists().then_some(path)
}

/// 500 Rust-looking files in 20 directories and one small text file.
fn build_tree(root: &Path) -> Fallible<()> {
    std::fs::create_dir_all(root)?;
    let small: String = (1..=40)
        .map(|n| format!("line {n} of a small file\n"))
        .collect();
    std::fs::write(root.join("small.txt"), small)?;
    for dir in 0..DIRS {
        let path = root.join(format!("src/module_{dir:02}"));
        std::fs::create_dir_all(&path)?;
        for file in 0..FILES_PER_DIR {
            let mut text = String::new();
            for f in 0..12 {
                let n = (dir * FILES_PER_DIR + file) * 12 + f;
                text.push_str(&format!(
                    "/// Handles case {n}.\npub fn handle_{n}(input: &str) -> usize {{\n    input.len() + {n}\n}}\n\n"
                ));
            }
            std::fs::write(path.join(format!("file_{file:02}.rs")), text)?;
        }
    }
    Ok(())
}

fn iterations() -> Fallible<usize> {
    let mut args = std::env::args().skip(1);
    let mut iterations = 200;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--iterations" => {
                iterations = args.next().ok_or("--iterations needs a number")?.parse()?;
            }
            other => return Err(format!("unknown argument {other}; use --iterations N").into()),
        }
    }
    Ok(iterations.max(1))
}

fn percentile(times: &mut [Duration], p: usize) -> Duration {
    times.sort_unstable();
    let index = (times.len() * p / 100).min(times.len().saturating_sub(1));
    times.get(index).copied().unwrap_or_default()
}

fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

fn rss_kib(pid: u32) -> Fallible<u64> {
    status_kib(pid, "VmRSS:")
}

/// The anonymous part of the resident memory (heap, stacks): what calls can grow. The rest
/// of `VmRSS` is file-backed, mostly the binary's code pages.
fn anon_kib(pid: u32) -> Fallible<u64> {
    status_kib(pid, "RssAnon:")
}

fn status_kib(pid: u32, field: &str) -> Fallible<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("no {field} in /proc/<pid>/status").into())
}

#[allow(clippy::cast_precision_loss)]
fn kib_to_mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

#[allow(clippy::cast_precision_loss)]
fn kib_to_mb(kib: u64) -> f64 {
    kib as f64 * 1024.0 / 1e6
}

fn verdict(met: bool) -> &'static str {
    if met { "ok" } else { "OVER" }
}
