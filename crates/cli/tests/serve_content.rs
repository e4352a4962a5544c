//! What `kun-tools serve` sends, through rmcp's client: names within the cap, upstream
//! content blocks passed through (a real server-everything image arrives as an image), the
//! structured parts following the client's name, `-32601` naming the method, and a quiet
//! stderr during protocol negotiation.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use rmcp::model::ErrorCode;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::Stdio;
use support::Env;
use support::client::{Client, call, contract, names, stdio, text, until_listed, with_mcp_tools};

/// The cap `serve` keeps names within by default.
const MAX_NAME: usize = 54;

fn everything() -> Option<PathBuf> {
    kun_ports::testkit::external_test_program(
        env!("CARGO_MANIFEST_DIR"),
        "KUN_MCP_SERVER_EVERYTHING",
        "target/ci-node/node_modules/.bin/mcp-server-everything",
    )
}

fn time() -> Option<PathBuf> {
    kun_ports::testkit::external_test_program(
        env!("CARGO_MANIFEST_DIR"),
        "KUN_MCP_SERVER_TIME",
        "target/ci-venv/bin/mcp-server-time",
    )
}

/// Writes a `--config` file with these `[mcp_servers.KEY] command = …` entries.
fn config(env: &Env, servers: &[(&str, &PathBuf, &[&str])]) -> String {
    config_with(env, "", servers)
}

/// The same, after `head` (a `[serve]` table).
fn config_with(env: &Env, head: &str, servers: &[(&str, &PathBuf, &[&str])]) -> String {
    let mut text = format!("{head}\n");
    for (key, command, args) in servers {
        text.push_str(&format!(
            "[mcp_servers.{key}]\ncommand = {:?}\nargs = {:?}\n\n",
            command.to_string_lossy(),
            args
        ));
    }
    let path = env.dir.path().join("servers.toml");
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_images_stay_images_and_every_name_fits() {
    let Some(everything) = everything() else {
        return;
    };
    let env = Env::new();
    // A long server key: some of server-everything's names must be shortened to fit.
    let config = config(
        &env,
        &[("everything-server-for-long-names", &everything, &[])],
    );
    let client = Client::asking();
    let session = stdio(&env, &["--config", &config], client.clone()).await;
    let listed = with_mcp_tools(&session, &client).await;
    let all = names(&listed);
    for name in &all {
        assert!(name.len() <= MAX_NAME, "{name} is {} long", name.len());
    }
    for builtin in ["read", "grep", "glob", "ls", "write", "edit", "bash"] {
        assert!(all.contains(&builtin.to_owned()), "{all:?}");
    }
    let upstream: Vec<&String> = all.iter().filter(|n| n.starts_with("mcp_")).collect();
    assert!(upstream.len() >= 10, "{all:?}");
    // `trigger-long-running-operation` would be 59 characters: cut and hashed to 54.
    let long_tool = listed
        .iter()
        .find(|t| t.name.contains("_trigger_long_runn"))
        .unwrap_or_else(|| panic!("no long-running tool in {all:?}"));
    assert_eq!(long_tool.name.len(), MAX_NAME, "{}", long_tool.name);
    assert!(!long_tool.name.ends_with("operation"), "{}", long_tool.name);

    // The image tool answers with an image block; the model never gets the PNG as JSON text.
    let image_tool = listed
        .iter()
        .find(|t| t.name.ends_with("_get_tiny_image"))
        .unwrap();
    let image = call(&session, &image_tool.name, json!({})).await.unwrap();
    assert_eq!(image.is_error, Some(false), "{image:?}");
    let images: Vec<_> = image.content.iter().filter_map(|b| b.as_image()).collect();
    assert_eq!(images.len(), 1, "{image:?}");
    assert_eq!(images[0].mime_type, "image/png");
    assert!(images[0].data.starts_with("iVBORw0KGgo"), "not a PNG");
    assert!(
        !text(&image).contains(&images[0].data),
        "the image is also text"
    );
    assert!(!text(&image).contains("\"type\""), "{}", text(&image));

    // A shortened name routes to its tool exactly (the reverse map, not a prefix).
    client.answer("allow");
    let ran = call(
        &session,
        &long_tool.name,
        json!({"duration": 0.2, "steps": 1}),
    )
    .await
    .unwrap();
    assert_eq!(ran.is_error, Some(false), "{ran:?}");
    assert!(
        text(&ran).to_lowercase().contains("long running"),
        "{}",
        text(&ran)
    );
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_structured_parts_follow_the_client_name() {
    let Some(time) = time() else { return };
    let env = Env::new();
    let config = config(&env, &[("time", &time, &["--local-timezone", "UTC"])]);
    let tool_name = "mcp_time_get_current_time";

    // Any client but Claude Code and Codex: outputSchema and structuredContent that validates.
    let client = Client::default();
    let session = stdio(&env, &["--config", &config], client.clone()).await;
    let listed = until_listed(&session, &client, tool_name).await;
    let tool = listed.iter().find(|t| t.name == tool_name).unwrap().clone();
    assert_eq!(tool.output_schema.as_ref().unwrap()["type"], "object");
    for listed_tool in &listed {
        if let Some(schema) = &listed_tool.output_schema {
            assert_eq!(schema["type"], "object", "{}", listed_tool.name);
        }
    }
    let now = call(&session, tool_name, json!({"timezone": "UTC"}))
        .await
        .unwrap();
    let words = contract(&tool, &now);
    assert!(words.contains("UTC"), "{words}");
    assert_eq!(now.structured_content.as_ref().unwrap()["timezone"], "UTC");
    let read = listed.iter().find(|t| t.name == "read").unwrap();
    let ok = call(&session, "read", json!({"path": "src/notes.txt"}))
        .await
        .unwrap();
    assert!(contract(read, &ok).contains("gamma"));
    let missing = call(&session, "read", json!({"path": "src/missing.txt"}))
        .await
        .unwrap();
    assert!(!contract(read, &missing).trim_start().starts_with('{'));
    let bad = call(&session, tool_name, json!({"timezone": "Mars/Olympus"}))
        .await
        .unwrap();
    let words = contract(&tool, &bad);
    assert_eq!(
        bad.structured_content.unwrap()["code"],
        "tool_execution_failed"
    );
    assert!(!words.trim_start().starts_with('{'), "{words}");
    session.cancel().await.unwrap();

    // Claude Code and Codex read structuredContent instead of the text: they get neither.
    for name in ["claude-code", "codex-mcp-client"] {
        let client = Client::default().named(name);
        let session = stdio(&env, &["--config", &config], client.clone()).await;
        let listed = until_listed(&session, &client, tool_name).await;
        let with_schema: Vec<&str> = listed
            .iter()
            .filter(|t| t.output_schema.is_some())
            .map(|t| t.name.as_ref())
            .collect();
        assert!(with_schema.is_empty(), "{name}: {with_schema:?}");
        let now = call(&session, tool_name, json!({"timezone": "UTC"}))
            .await
            .unwrap();
        assert_eq!(now.structured_content, None, "{name}");
        assert!(text(&now).contains("UTC"), "{name}: {}", text(&now));
        let missing = call(&session, "read", json!({"path": "src/missing.txt"}))
            .await
            .unwrap();
        assert_eq!(missing.is_error, Some(true));
        assert_eq!(missing.structured_content, None, "{name}");
        assert!(!text(&missing).is_empty());
        session.cancel().await.unwrap();
    }

    // `always` and `never` decide for every client.
    let time_server: &[(&str, &PathBuf, &[&str])] =
        &[("time", &time, &["--local-timezone", "UTC"])];
    for (mode, client_name, sent) in [
        ("always", "claude-code", true),
        ("never", "serve-test", false),
        ("never", "codex-mcp-client", false),
    ] {
        let head = format!("[serve]\nstructured_content = \"{mode}\"\n");
        let config = config_with(&env, &head, time_server);
        let client = Client::default().named(client_name);
        let session = stdio(&env, &["--config", &config], client.clone()).await;
        let listed = until_listed(&session, &client, tool_name).await;
        let tool = listed.iter().find(|t| t.name == tool_name).unwrap();
        assert_eq!(tool.output_schema.is_some(), sent, "{mode} {client_name}");
        let now = call(&session, tool_name, json!({"timezone": "UTC"}))
            .await
            .unwrap();
        assert_eq!(
            now.structured_content.is_some(),
            sent,
            "{mode} {client_name}"
        );
        if sent {
            contract(tool, &now);
        }
        session.cancel().await.unwrap();
    }
}

/// `[serve] max_tool_name_length` lowers the cap: MCP names are cut to fit it and every
/// advertised name is within it; a name that fits stays as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lower_name_cap_is_kept_by_every_name() {
    let Some(everything) = everything() else {
        return;
    };
    let env = Env::new();
    let config = config_with(
        &env,
        "[serve]\nmax_tool_name_length = 28\n",
        &[("everything", &everything, &[])],
    );
    let client = Client::asking();
    let session = stdio(&env, &["--config", &config], client.clone()).await;
    let all = names(&with_mcp_tools(&session, &client).await);
    for name in &all {
        assert!(name.len() <= 28, "{name} is {} long", name.len());
    }
    assert!(all.contains(&"mcp_everything_echo".to_owned()), "{all:?}");
    assert!(all.contains(&"background_shell".to_owned()), "{all:?}");
    let image = all
        .iter()
        .find(|n| n.starts_with("mcp_everything_get_ti_"))
        .unwrap_or_else(|| panic!("{all:?}"));
    assert_eq!(
        image.len(),
        28,
        "mcp_everything_get_tiny_image is 29: cut to 28"
    );
    let result = call(&session, image, json!({})).await.unwrap();
    assert!(
        result.content.iter().any(|b| b.as_image().is_some()),
        "{result:?}"
    );
    session.cancel().await.unwrap();
}

/// One JSON-RPC exchange over a raw stdio pipe: what any client (and its stderr pane) sees.
struct Raw {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Raw {
    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The response with this id (notifications in between are skipped).
    fn response(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "serve closed stdout"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }
}

#[test]
fn negotiation_is_quiet_and_unsupported_methods_are_named() {
    let env = Env::new();
    let ws = env.ws_arg();
    let mut child = env
        .command(&["serve", "--workspace", &ws])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut raw = Raw {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
        child,
    };
    // A client offering a newer protocol revision than serve speaks: it negotiates down.
    raw.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2026-07-28", "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"}}}),
    );
    let init = raw.response(1);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // What serve declares answers (skills are prompts; no resources are published).
    for (id, method, key) in [
        (5, "prompts/list", "prompts"),
        (6, "resources/list", "resources"),
        (7, "resources/templates/list", "resourceTemplates"),
    ] {
        raw.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}));
        let answer = raw.response(id);
        assert!(answer["result"][key].is_array(), "{method}: {answer}");
    }
    // What it does not offer, and a method nobody knows.
    let probes = ["completion/complete", "resources/read", "acme/frobnicate"];
    for (i, method) in probes.iter().enumerate() {
        let id = 10 + i as u64;
        let params = match *method {
            "completion/complete" => {
                json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}})
            }
            "resources/read" => json!({"uri": "file:///etc/passwd"}),
            _ => json!({}),
        };
        raw.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = raw.response(id);
        assert_eq!(
            answer["error"]["code"],
            ErrorCode::METHOD_NOT_FOUND.0,
            "{answer}"
        );
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("`{method}`")),
            "{method}: {message}"
        );
    }
    // An unknown tool is -32602.
    raw.send(&json!({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
        "params": {"name": "teleport", "arguments": {}}}));
    assert_eq!(
        raw.response(20)["error"]["code"],
        ErrorCode::INVALID_PARAMS.0
    );
    raw.send(&json!({"jsonrpc": "2.0", "id": 21, "method": "tools/list"}));
    assert!(raw.response(21)["result"]["tools"].is_array());

    drop(raw.stdin);
    let status = raw.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let mut stderr = String::new();
    raw.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(stderr.is_empty(), "serve wrote to stderr: {stderr}");
}
