//! `kun-tools memory list|search|rm`, the memory and web tools through `call`, and their
//! lines in `doctor` and `catalog`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use serde_json::Value;
use support::Env;

fn run(env: &Env, args: &[&str]) -> (i32, String, String) {
    let out = env.command(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(text: &str) -> Value {
    serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn memories_made_by_the_model_are_listed_searched_and_removed_by_people() {
    let env = Env::new();
    let ws = env.ws_arg();
    let (code, out, err) = run(&env, &["memory", "list", "--workspace", &ws]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("no memories yet"), "{out}");
    assert!(
        !env.dir.path().join("data/kun/memory.sqlite").exists(),
        "listing creates nothing"
    );

    for (content, scope) in [
        ("Integration tests need docker compose", "workspace"),
        ("用户喜欢简洁的回答", "user"),
    ] {
        let args = format!(r#"{{"content": "{content}", "scope": "{scope}", "tags": ["cli"]}}"#);
        let (code, out, err) = run(
            &env,
            &["call", "--workspace", &ws, "--yes", "memory_create", &args],
        );
        assert_eq!(code, 0, "{out}{err}");
        assert_eq!(json(&out)["is_error"], false, "{out}");
    }
    assert!(
        env.dir.path().join("data/kun/memory.sqlite").exists(),
        "under XDG_DATA_HOME"
    );

    let (code, out, _) = run(&env, &["memory", "list", "--workspace", &ws]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("SCOPE") && lines[0].contains("CONTENT"),
        "{out}"
    );
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[1].starts_with("m2")
            && lines[1].contains("user")
            && lines[1].contains("用户喜欢简洁的回答"),
        "{out}"
    );
    assert!(
        lines[2].starts_with("m1") && lines[2].contains("workspace") && lines[2].contains("cli"),
        "{out}"
    );

    let (_, out, _) = run(
        &env,
        &["memory", "search", "docker", "--workspace", &ws, "--json"],
    );
    let found = json(&out);
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found[0]["id"], "m1");
    let (_, out, _) = run(
        &env,
        &["memory", "search", "简洁", "--workspace", &ws, "--json"],
    );
    assert_eq!(json(&out)[0]["id"], "m2");

    // Another workspace sees the user memory only, and cannot remove the workspace one.
    let other = env.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let other = other.to_string_lossy().into_owned();
    let (_, out, _) = run(&env, &["memory", "list", "--workspace", &other, "--json"]);
    let listed = json(&out);
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["m2"]);
    let (code, _, err) = run(&env, &["memory", "rm", "m1", "--workspace", &other]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("another workspace"), "{err}");

    let (code, out, _) = run(&env, &["memory", "rm", "m1", "--workspace", &ws]);
    assert_eq!((code, out.trim()), (0, "deleted m1"));
    let (code, _, _) = run(&env, &["memory", "rm", "m1", "--workspace", &ws]);
    assert_eq!(code, 1);
    let (code, _, err) = run(
        &env,
        &["memory", "list", "--scope", "team", "--workspace", &ws],
    );
    assert_eq!(code, 2, "{err}");
}

#[test]
fn doctor_and_catalog_show_memory_and_web() {
    let env = Env::new();
    let ws = env.ws_arg();
    let (code, out, err) = run(&env, &["doctor", "--workspace", &ws, "--json"]);
    assert_eq!(code, 0, "{err}");
    let report = json(&out);
    let memory_path = report["memory"]["path"].as_str().unwrap();
    assert!(
        memory_path.ends_with("data/kun/memory.sqlite"),
        "{memory_path}"
    );
    assert_eq!(report["memory"]["exists"], false);
    let web = report["web"]["providers"].as_array().unwrap();
    assert_eq!(web[0]["tool"], "web_fetch");
    assert_eq!(web[0]["available"], true);
    assert_eq!(web[1]["tool"], "web_search");
    assert_eq!(web[1]["available"], false);
    assert!(web[1]["reason"].as_str().unwrap().contains("[web.search]"));

    let (_, _, _) = run(
        &env,
        &[
            "call",
            "--workspace",
            &ws,
            "--yes",
            "memory_create",
            r#"{"content": "x", "scope": "user"}"#,
        ],
    );
    let (_, text, _) = run(&env, &["doctor", "--workspace", &ws]);
    assert!(
        text.contains("memory: ") && text.contains("(schema version 1, 1 memories)"),
        "{text}"
    );
    assert!(text.contains("web (private addresses blocked):"), "{text}");
    assert!(
        text.contains("  web_search: unavailable: no search engine is configured"),
        "{text}"
    );

    std::fs::write(
        env.dir.path().join("config/kun/config.toml").tap_parent(),
        "[web.search]\nbackend = \"brave\"\n",
    )
    .unwrap();
    let (_, text, _) = run(&env, &["doctor", "--workspace", &ws]);
    assert!(
        text.contains("web_search [brave]: unavailable:") && text.contains("BRAVE_API_KEY"),
        "{text}"
    );

    let (code, out, _) = run(&env, &["catalog", "--workspace", &ws, "--json"]);
    assert_eq!(code, 0);
    let catalog = json(&out);
    let names: Vec<&str> = catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for tool in ["memory_search", "memory_create", "web_fetch"] {
        assert!(names.contains(&tool), "{tool}: {names:?}");
    }
}

#[test]
fn web_fetch_through_call_refuses_loopback_by_default() {
    use kun_ports::testkit::{LocalHttpServer, Reply};
    let server = LocalHttpServer::start(|_| Reply::ok("text/plain", "secret"));
    let env = Env::new();
    let ws = env.ws_arg();
    let args = format!(r#"{{"url": "{}"}}"#, server.url("/"));
    let (code, out, err) = run(
        &env,
        &["call", "--workspace", &ws, "--yes", "web_fetch", &args],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("web_address_blocked") || out.contains("loopback"),
        "{out}"
    );
    assert!(server.requests().is_empty());

    // The user's own config opens it.
    let config = env.dir.path().join("mine.toml");
    std::fs::write(&config, "[web]\nallow_private_addresses = true\n").unwrap();
    let config = config.to_string_lossy().into_owned();
    let (code, out, err) = run(
        &env,
        &[
            "call",
            "--workspace",
            &ws,
            "--config",
            &config,
            "--yes",
            "web_fetch",
            &args,
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("secret"), "{out}");
}

/// Creates the parent directory of a path and returns the path.
trait TapParent {
    fn tap_parent(self) -> Self;
}

impl TapParent for std::path::PathBuf {
    fn tap_parent(self) -> Self {
        std::fs::create_dir_all(self.parent().unwrap()).unwrap();
        self
    }
}
