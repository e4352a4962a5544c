//! Start-up never waits on MCP servers: `serve` answers at once and the servers' tools
//! arrive with `tools/list_changed`; `call` starts only the server its tool needs; `catalog`
//! and `doctor` wait a bounded time and name the servers that were not ready. Real
//! processes throughout: `kun-tools` and the MCP fixture server (`--startup-delay-ms`,
//! `--never-start`, `--started-marker`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};
use support::client::{Client, LIMIT, call, names, stdio, text, tools, until_listed};
use support::{Env, fixture_server, wait_for};

/// What "at once" means on a loaded two-core machine running other tests (measured: tens of
/// milliseconds; `cargo xtask bench startup` prints the real figure).
const AT_ONCE: Duration = Duration::from_secs(1);

/// One fixture server entry: `name`, extra fixture flags, and a marker file it appends its
/// pid to when launched.
struct Server {
    name: &'static str,
    flags: &'static [&'static str],
}

impl Server {
    const fn new(name: &'static str, flags: &'static [&'static str]) -> Self {
        Self { name, flags }
    }
}

fn marker(env: &Env, server: &str) -> PathBuf {
    env.dir.path().join(format!("{server}.started"))
}

/// The pids a server's marker recorded (empty: never launched).
fn launches(env: &Env, server: &str) -> Vec<u32> {
    std::fs::read_to_string(marker(env, server))
        .unwrap_or_default()
        .lines()
        .map(|line| line.parse().unwrap())
        .collect()
}

/// The TOML for `servers` (plus `extra`), as a `--config` file (the user's own: trusted).
fn servers_toml(env: &Env, servers: &[Server], extra: &str) -> String {
    let fixture = fixture_server();
    let mut text = extra.to_owned();
    for server in servers {
        let mut args: Vec<String> = server.flags.iter().map(|f| (*f).to_owned()).collect();
        args.push("--started-marker".to_owned());
        args.push(marker(env, server.name).to_string_lossy().into_owned());
        text.push_str(&format!(
            "\n[mcp_servers.{}]\ncommand = {:?}\nargs = {:?}\nstartup_timeout_seconds = 600\n",
            server.name,
            fixture.to_string_lossy(),
            args
        ));
    }
    text
}

fn write_config(env: &Env, servers: &[Server], extra: &str) -> String {
    let path = env.dir.path().join("servers.toml");
    std::fs::write(&path, servers_toml(env, servers, extra)).unwrap();
    path.to_string_lossy().into_owned()
}

/// `kun-tools ARGS --workspace WS --config CONFIG`, timed.
fn run(env: &Env, config: &str, args: &[&str]) -> (Output, Duration) {
    let ws = env.ws_arg();
    let mut all = args.to_vec();
    all.extend(["--workspace", &ws, "--config", config]);
    let started = Instant::now();
    let out = env.command(&all).stdin(Stdio::null()).output().unwrap();
    (out, started.elapsed())
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|err| {
        panic!(
            "not JSON ({err}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_at_once_and_a_slow_servers_tools_arrive_with_list_changed() {
    let env = Env::new();
    let config = write_config(
        &env,
        &[Server::new("slow", &["--startup-delay-ms", "8000"])],
        "",
    );
    let client = Client::default();
    let started = Instant::now();
    let session = stdio(&env, &["--config", &config], client.clone()).await;
    let listed = names(&tools(&session).await);
    let elapsed = started.elapsed();
    eprintln!("initialize + tools/list with an 8 s server configured: {elapsed:?}");
    assert!(elapsed < AT_ONCE, "took {elapsed:?}");
    assert!(listed.contains(&"read".to_owned()), "{listed:?}");
    assert!(
        !listed.iter().any(|n| n.starts_with("mcp_slow_")),
        "{listed:?}"
    );
    // The server was launched in the background, not skipped.
    wait_for(LIMIT, "the slow server to be launched", || {
        !launches(&env, "slow").is_empty()
    });

    until_listed(&session, &client, "mcp_slow_echo").await;
    let arrived = started.elapsed();
    assert!(arrived >= Duration::from_secs(8), "{arrived:?}");
    let echoed = call(&session, "mcp_slow_echo", json!({"text": "late but here"}))
        .await
        .unwrap();
    assert_eq!(echoed.is_error, Some(false), "{echoed:?}");
    assert!(text(&echoed).contains("late but here"), "{echoed:?}");
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_search_mode_a_late_servers_tools_become_search_records() {
    let env = Env::new();
    let config = write_config(
        &env,
        &[Server::new("late", &["--startup-delay-ms", "2000"])],
        "[mcp]\nsearch = \"search\"\n",
    );
    let client = Client::default();
    let session = stdio(&env, &["--config", &config], client.clone()).await;
    let search = || async {
        let found = call(
            &session,
            "mcp_search",
            json!({"query": "echo the text back"}),
        )
        .await
        .unwrap();
        text(&found)
    };
    if names(&tools(&session).await).contains(&"mcp_search".to_owned()) {
        let before = search().await;
        assert!(!before.contains("mcp_late_echo"), "{before}");
    }
    // The gateway's own tools do not change, so there may be no `tools/list_changed`: the
    // records simply appear.
    let deadline = Instant::now() + LIMIT;
    loop {
        if names(&tools(&session).await).contains(&"mcp_search".to_owned())
            && search().await.contains("mcp_late_echo")
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the late server's tools never became search records"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // Search mode: the server's tools are records, not catalog entries.
    let listed = names(&tools(&session).await);
    assert!(!listed.contains(&"mcp_late_echo".to_owned()), "{listed:?}");
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_server_blocks_nothing_and_shows_as_not_ready() {
    let env = Env::new();
    let config = write_config(&env, &[Server::new("hang", &["--never-start"])], "");

    let client = Client::default();
    let started = Instant::now();
    let session = stdio(&env, &["--config", &config], client.clone()).await;
    assert!(names(&tools(&session).await).contains(&"read".to_owned()));
    assert!(started.elapsed() < AT_ONCE, "{:?}", started.elapsed());
    let read = call(&session, "read", json!({"path": "src/notes.txt"}))
        .await
        .unwrap();
    assert!(text(&read).contains("beta"), "{read:?}");
    session.cancel().await.unwrap();

    let (out, took) = run(&env, &config, &["catalog", "--json", "--wait-mcp", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < Duration::from_secs(15), "catalog took {took:?}");
    let catalog = stdout_json(&out);
    let not_ready = catalog["mcp_not_ready"].as_array().unwrap();
    assert_eq!(not_ready.len(), 1, "{catalog}");
    assert_eq!(not_ready[0]["name"], "hang");
    assert_eq!(not_ready[0]["state"], "starting");
    let listed: Vec<&str> = catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(listed.contains(&"read"), "{listed:?}");

    let (out, _) = run(&env, &config, &["catalog", "--wait-mcp", "0.5"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("MCP servers not ready after 0.5 s") && table.contains("hang [starting]"),
        "{table}"
    );

    let (out, took) = run(&env, &config, &["doctor", "--json", "--wait-mcp", "1"]);
    assert!(took < Duration::from_secs(15), "doctor took {took:?}");
    let report = stdout_json(&out);
    assert_eq!(report["mcp_servers"][0]["name"], "hang", "{report}");
    assert_eq!(report["mcp_servers"][0]["state"], "starting", "{report}");
    let (out, _) = run(&env, &config, &["doctor", "--wait-mcp", "0.5"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("hang [stdio") && text.contains("starting (not ready after 0.5 s"),
        "{text}"
    );

    // Every launch of the hanging server was stopped with the command that launched it.
    let pids = launches(&env, "hang");
    assert!(pids.len() >= 5, "serve, 2 × catalog, 2 × doctor: {pids:?}");
    wait_for(
        Duration::from_secs(20),
        "the hanging servers to be stopped",
        || pids.iter().all(|pid| !alive(*pid)),
    );
}

#[test]
fn a_failing_server_is_reported_by_doctor_with_its_reason() {
    let env = Env::new();
    let config = write_config(&env, &[Server::new("broken", &["--exit-immediately"])], "");
    let (out, _) = run(&env, &config, &["doctor", "--json", "--wait-mcp", "30"]);
    let report = stdout_json(&out);
    let server = &report["mcp_servers"][0];
    assert_eq!(server["name"], "broken", "{report}");
    assert!(
        server["state"] == "reconnecting" || server["state"] == "failed",
        "{report}"
    );
    let reason = server["last_error"]
        .as_str()
        .or_else(|| server["reason"].as_str())
        .unwrap();
    assert!(reason.contains("exiting before the handshake"), "{reason}");
}

#[test]
fn call_of_a_built_in_tool_starts_no_mcp_server() {
    let env = Env::new();
    let config = write_config(
        &env,
        &[
            Server::new("slow", &["--startup-delay-ms", "8000"]),
            Server::new("hang", &["--never-start"]),
        ],
        "",
    );
    let (out, took) = run(
        &env,
        &config,
        &["call", "--yes", "read", r#"{"path": "src/notes.txt"}"#],
    );
    eprintln!("call read with an 8 s and a hanging server configured: {took:?}");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("beta"));
    assert!(took < Duration::from_secs(5), "call read took {took:?}");
    assert!(launches(&env, "slow").is_empty());
    assert!(launches(&env, "hang").is_empty());
}

#[test]
fn call_of_an_mcp_tool_starts_only_its_server() {
    let env = Env::new();
    let config = write_config(
        &env,
        &[
            Server::new("alpha", &[]),
            Server::new("beta", &["--never-start"]),
        ],
        "",
    );
    let (out, _) = run(
        &env,
        &config,
        &[
            "call",
            "--yes",
            "mcp_alpha_echo",
            r#"{"text": "only alpha"}"#,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = stdout_json(&out);
    assert_eq!(result["is_error"], false, "{result}");
    assert!(
        result["output"].to_string().contains("only alpha"),
        "{result}"
    );
    assert_eq!(launches(&env, "alpha").len(), 1);
    assert!(launches(&env, "beta").is_empty());

    // An unknown name under alpha's prefix: alpha is asked, and the error is the usual one.
    let (out, _) = run(
        &env,
        &config,
        &["call", "--yes", "mcp_alpha_ecko", r#"{"text": "x"}"#],
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(said.contains("unknown tool `mcp_alpha_ecko`"), "{said}");
    assert_eq!(launches(&env, "alpha").len(), 2);
    assert!(launches(&env, "beta").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_added_and_removed_by_a_reload_connect_and_disconnect_in_the_background() {
    let env = Env::new();
    let config = write_config(&env, &[], "");
    let client = Client::default();
    let session = stdio(&env, &["--config", &config], client.clone()).await;
    assert!(
        !names(&tools(&session).await)
            .iter()
            .any(|n| n.starts_with("mcp_"))
    );

    write_config(
        &env,
        &[Server::new("added", &["--startup-delay-ms", "500"])],
        "",
    );
    until_listed(&session, &client, "mcp_added_echo").await;
    let pid = launches(&env, "added")[0];

    write_config(&env, &[], "");
    let deadline = Instant::now() + LIMIT;
    while names(&tools(&session).await).contains(&"mcp_added_echo".to_owned()) {
        let left = deadline.saturating_duration_since(Instant::now());
        tokio::time::timeout(left, client.list_changed.notified())
            .await
            .expect("the removed server's tools stayed listed");
    }
    wait_for(
        Duration::from_secs(20),
        "the removed server to stop",
        || !alive(pid),
    );
    session.cancel().await.unwrap();
}

#[test]
fn serve_reports_a_failing_server_once_on_stderr() {
    use std::io::{BufRead, BufReader};
    let env = Env::new();
    let config = write_config(&env, &[Server::new("broken", &["--exit-immediately"])], "");
    let ws = env.ws_arg();
    let mut child = env
        .command(&["serve", "--workspace", &ws, "--config", &config])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Wait for the report, then for several more failed attempts (each retried with backoff).
    while launches(&env, "broken").len() < 4 {
        assert!(
            Instant::now() < deadline,
            "the server was not retried: {seen:?}"
        );
        while let Ok(line) = received.recv_timeout(Duration::from_millis(100)) {
            seen.push(line);
        }
    }
    while let Ok(line) = received.recv_timeout(Duration::from_millis(300)) {
        seen.push(line);
    }
    drop(child.stdin.take());
    let _ = child.wait();
    let reports: Vec<&String> = seen
        .iter()
        .filter(|line| line.contains("MCP server `broken` is not available"))
        .collect();
    assert_eq!(reports.len(), 1, "{seen:?}");
    assert!(
        reports[0].contains("exiting before the handshake") && reports[0].contains("doctor"),
        "{}",
        reports[0]
    );
}
