//! `kun-tools serve`'s GUI, user-input and media tools driven by the official MCP Python SDK:
//! elicitation for `user_input`, goals and todos across restarts, generated media as MCP
//! image/audio/resource-link content with progress notifications, `computer_use` screenshots
//! under a private Xvfb.
//!
//! The scenarios live in tests/python/gui_media_client.py; the media scenario answers from a
//! local HTTP server in the shape of each OpenAI-compatible endpoint, started here. Without the
//! venv (or Xvfb, for the screenshot) the tests are skipped with a message, except under
//! `CI=true`, where they fail.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::Env;

fn script() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/gui_media_client.py"
    ))
}

/// Runs one scenario; panics with the script's output on failure.
fn scenario(python: &Path, env: &Env, name: &str, vars: &[(&str, &str)]) -> Output {
    let ws = env.ws_arg();
    let mut cmd = Command::new(python);
    cmd.arg(script())
        .args([name, "--kun", support::kun_tools(), "--workspace", &ws])
        .env("XDG_CONFIG_HOME", env.dir.path().join("config"))
        .env("XDG_STATE_HOME", env.dir.path().join("state"))
        .env("XDG_DATA_HOME", env.dir.path().join("data"))
        .env_remove("DISPLAY")
        .env_remove("RUST_LOG");
    for (key, value) in vars {
        cmd.env(key, value);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "scenario {name} failed\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("ok {name}")));
    out
}

/// Writes the user's own config (`$XDG_CONFIG_HOME/kun/config.toml`).
fn user_config(env: &Env, text: &str) {
    let dir = env.dir.path().join("config/kun");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

#[test]
fn user_input_asks_through_elicitation() {
    let Some(python) = support::sdk_python() else {
        return;
    };
    let env = Env::new();
    scenario(&python, &env, "user-input", &[]);
}

#[test]
fn user_input_without_elicitation_is_a_clear_error() {
    let Some(python) = support::sdk_python() else {
        return;
    };
    let env = Env::new();
    scenario(&python, &env, "no-elicitation", &[]);
}

#[test]
fn todos_and_goals_survive_a_restart_per_thread() {
    let Some(python) = support::sdk_python() else {
        return;
    };
    let env = Env::new();
    scenario(&python, &env, "todos", &[]);
    // One file per thread under the user state dir: the workspace's thread and `other`.
    let threads = env.dir.path().join("state/kun/threads");
    let files = std::fs::read_dir(&threads).unwrap().count();
    assert!(
        files >= 2,
        "expected a file per thread in {}",
        threads.display()
    );
}

#[test]
fn generated_media_is_mcp_content_with_progress() {
    let Some(python) = support::sdk_python() else {
        return;
    };
    let env = Env::new();
    let server = MediaServer::start();
    let base = format!("http://{}/v1", server.addr);
    user_config(
        &env,
        &format!(
            "[media.image]\nbase_url = \"{base}\"\nmodel = \"img\"\n\
             [media.speech]\nbase_url = \"{base}\"\nmodel = \"tts\"\n\
             [media.video]\nbase_url = \"{base}\"\nmodel = \"vid\"\n"
        ),
    );
    scenario(&python, &env, "media", &[]);
    // The outputs outlive the process, under the user data dir.
    let artifacts = env.dir.path().join("data/kun/artifacts");
    assert!(
        artifacts.is_dir(),
        "no artifacts under {}",
        artifacts.display()
    );
}

#[test]
fn a_screenshot_is_image_content_and_asks_nobody() {
    let Some(python) = support::sdk_python() else {
        return;
    };
    let Some(xvfb) = Xvfb::start() else { return };
    let env = Env::new();
    user_config(&env, "[computer_use]\nmode = \"always\"\n");
    scenario(&python, &env, "screenshot", &[("DISPLAY", &xvfb.display)]);
}

/// A minimal HTTP/1.1 server answering in the shape of the OpenAI-compatible media
/// endpoints: a PNG as `b64_json`, a WAV, and a video job (created in progress, completed on
/// the first poll, then downloadable).
struct MediaServer {
    addr: std::net::SocketAddr,
}

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A WAV header with no samples.
fn wav() -> Vec<u8> {
    let mut wav = b"RIFF".to_vec();
    wav.extend_from_slice(&36_u32.to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16_u32.to_le_bytes());
    wav.extend_from_slice(&1_u16.to_le_bytes());
    wav.extend_from_slice(&1_u16.to_le_bytes());
    wav.extend_from_slice(&8000_u32.to_le_bytes());
    wav.extend_from_slice(&16000_u32.to_le_bytes());
    wav.extend_from_slice(&2_u16.to_le_bytes());
    wav.extend_from_slice(&16_u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&0_u32.to_le_bytes());
    wav
}

impl MediaServer {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || Self::answer(stream));
            }
        });
        Self { addr }
    }

    fn answer(stream: TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let mut parts = line.split_whitespace();
            let method = parts.next().unwrap_or_default().to_owned();
            let path = parts.next().unwrap_or_default().to_owned();
            let mut length = 0_usize;
            loop {
                let mut header = String::new();
                reader.read_line(&mut header).unwrap();
                let header = header.trim_end();
                if header.is_empty() {
                    break;
                }
                if let Some((name, value)) = header.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let (content_type, reply): (&str, Vec<u8>) = match (method.as_str(), path.as_str()) {
                ("POST", "/v1/images/generations") => (
                    "application/json",
                    format!(
                        r#"{{"data":[{{"b64_json":"{}"}}]}}"#,
                        BASE64_STANDARD.encode(PNG)
                    )
                    .into_bytes(),
                ),
                ("POST", "/v1/audio/speech") => ("audio/wav", wav()),
                ("POST", "/v1/videos") => (
                    "application/json",
                    br#"{"id":"vid1","status":"in_progress","progress":40}"#.to_vec(),
                ),
                ("GET", "/v1/videos/vid1") => (
                    "application/json",
                    br#"{"id":"vid1","status":"completed","progress":100}"#.to_vec(),
                ),
                ("GET", "/v1/videos/vid1/content") => ("video/mp4", b"VIDEO-BYTES".to_vec()),
                _ => ("text/plain", b"not found".to_vec()),
            };
            let status = if content_type == "text/plain" {
                "404 Not Found"
            } else {
                "200 OK"
            };
            let mut stream = &stream;
            let head = format!(
                "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n",
                reply.len()
            );
            if stream.write_all(head.as_bytes()).is_err() || stream.write_all(&reply).is_err() {
                return;
            }
        }
    }
}

/// A private Xvfb on a free display, `-noreset`, stopped when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // Our own child, by its pid.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Xvfb {
    /// `None` (skip, with a message) when Xvfb is not installed, outside CI.
    fn start() -> Option<Self> {
        let installed = std::env::var_os("PATH").is_some_and(|paths| {
            std::env::split_paths(&paths).any(|dir| dir.join("Xvfb").is_file())
        });
        if !installed {
            let why = "Xvfb is not installed (.ci/run installs the xvfb package)";
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
            eprintln!("skipping: {why}");
            return None;
        }
        let n = (120..400)
            .find(|n| {
                !Path::new(&format!("/tmp/.X{n}-lock")).exists()
                    && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
            })
            .unwrap();
        let child = Command::new("Xvfb")
            .args([
                &format!(":{n}"),
                "-screen",
                "0",
                "1600x1000x24",
                "-noreset",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let socket = PathBuf::from(format!("/tmp/.X11-unix/X{n}"));
        let started = Instant::now();
        while !socket.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "Xvfb :{n} did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Self {
            child,
            display: format!(":{n}"),
        })
    }
}
