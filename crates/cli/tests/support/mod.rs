//! Shared by the serve tests: a workspace in a temp dir and `kun-tools serve --http` children.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    dead_code,
    reason = "test code; each test binary uses part of it"
)]

pub mod client;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A temp dir with `ws/src/notes.txt`, an empty user config dir and a state dir.
pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/src")).unwrap();
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        std::fs::write(dir.path().join("ws/src/notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
        Self { dir }
    }

    pub fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    pub fn ws_arg(&self) -> String {
        self.ws().to_string_lossy().into_owned()
    }

    /// Writes `<ws>/.kun/config.toml`.
    pub fn workspace_config(&self, text: &str) {
        let path = self.ws().join(".kun/config.toml");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// `kun-tools ARGS` with this env's config and state dirs and no `RUST_LOG`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(kun_tools());
        cmd.args(args)
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env("XDG_STATE_HOME", self.dir.path().join("state"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env_remove("RUST_LOG")
            .env_remove("KUN_TOKEN");
        cmd
    }

    /// `kun-tools serve --workspace WS --http 127.0.0.1:0` with `KUN_TOKEN` when given.
    pub fn serve_http(&self, token: Option<&str>) -> HttpServer {
        let ws = self.ws_arg();
        let mut cmd = self.command(&["serve", "--workspace", &ws, "--http", "127.0.0.1:0"]);
        if let Some(token) = token {
            cmd.env("KUN_TOKEN", token);
        }
        HttpServer::start(cmd)
    }
}

pub fn kun_tools() -> &'static str {
    env!("CARGO_BIN_EXE_kun-tools")
}

/// A running `serve --http`; killed on drop.
pub struct HttpServer {
    pub child: Child,
    pub url: String,
    pub addr: String,
}

impl HttpServer {
    fn start(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
                    let _ = sender.send(url.to_owned());
                }
            }
        });
        let url = receiver
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("serve --http never printed its address")
            });
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        Self { child, url, addr }
    }

    /// A raw `POST /mcp` with an `initialize` body; returns the status code.
    pub fn post_initialize(&self, authorization: Option<&str>) -> u16 {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.addr,
            body.len()
        );
        if let Some(value) = authorization {
            request.push_str(&format!("Authorization: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut status_line = String::new();
        let mut reader = BufReader::new(stream);
        reader.read_line(&mut status_line).unwrap();
        status_line
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP status line: {status_line:?}"))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `condition` holds, or panics with `what` after `limit`.
pub fn wait_for(limit: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The repository root (for `target/ci-venv`).
pub fn repo_root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The CI venv's python when it can import the MCP SDK (`mcp`); `None` (skip, with a message)
/// outside CI, a failure under `CI=true`.
pub fn sdk_python() -> Option<PathBuf> {
    let python = repo_root().join("target/ci-venv/bin/python");
    let importable = Command::new(&python)
        .args(["-c", "import mcp.client.session"])
        .output()
        .is_ok_and(|out| out.status.success());
    if importable {
        return Some(python);
    }
    let why = format!(
        "{} cannot import the `mcp` package; run .ci/run (or `target/ci-venv/bin/pip install \
         -r .ci/requirements-python.txt`)",
        python.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
    eprintln!("skipping the Python SDK test: {why}");
    None
}

/// The MCP fixture server (`kun-mcp-fixture-server`), beside `kun-tools` in the same target
/// directory. `cargo nextest run --workspace` builds it; when it is missing or older than its
/// sources (a run of this package alone), it is built here first.
pub fn fixture_server() -> PathBuf {
    let tools = Path::new(kun_tools());
    let binary = tools.with_file_name("kun-mcp-fixture-server");
    let sources = repo_root().join("crates/mcp-fixture-server/src");
    let newest_source = std::fs::read_dir(&sources)
        .unwrap()
        .filter_map(|entry| entry.ok()?.metadata().ok()?.modified().ok())
        .max()
        .unwrap();
    let fresh = std::fs::metadata(&binary)
        .and_then(|meta| meta.modified())
        .is_ok_and(|built| built >= newest_source);
    if !fresh {
        let profile_dir = tools.parent().unwrap();
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--quiet",
                "-p",
                "kun-mcp-fixture-server",
                "--profile",
                profile,
            ])
            .arg("--target-dir")
            .arg(profile_dir.parent().unwrap())
            .current_dir(repo_root())
            .status()
            .unwrap();
        assert!(status.success(), "building the MCP fixture server failed");
    }
    binary
}
