//! Workflow hooks against a real HTTP responder on 127.0.0.1, including the fail-open cases.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{call, engine, turn};
use kun_ports::{HookPhase, HookRunner, HookTurnEvent, PreToolDecision, ToolResult};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request the responder saw.
#[derive(Debug, Clone)]
struct Seen {
    head: String,
    body: Value,
}

/// A tiny HTTP/1.1 responder: answers every request with `status` and `body`.
struct Responder {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Responder {
    async fn start(status: u16, body: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let answer = body.to_owned();
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let answer = answer.clone();
                let log = Arc::clone(&log);
                tokio::spawn(async move { serve(stream, status, &answer, &log).await });
            }
        });
        Self { url, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn serve(mut stream: TcpStream, status: u16, answer: &str, log: &Mutex<Vec<Seen>>) {
    let mut data = Vec::new();
    let mut buf = [0_u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut buf).await.unwrap();
        if n == 0 {
            return;
        }
        data.extend_from_slice(&buf[..n]);
        if let Some(pos) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos + 4;
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    while data.len() < head_end + length {
        let n = stream.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buf[..n]);
    }
    let body = serde_json::from_slice(&data[head_end..]).unwrap_or(Value::Null);
    log.lock().unwrap().push(Seen { head, body });
    let response = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
        answer.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn workflow(phase: &str, url: &str, mode: &str, extra: Value) -> String {
    let mut hook = json!({"type": "workflow", "url": url, "mode": mode, "timeout": 10});
    for (k, v) in extra.as_object().unwrap() {
        hook[k] = v.clone();
    }
    json!({ phase: [{"matcher": "bash", "hooks": [hook]}] }).to_string()
}

#[tokio::test]
async fn observe_mode_only_adds_context_and_warnings_and_posts_the_call() {
    let ws = tempfile::tempdir().unwrap();
    let server = Responder::start(
        200,
        r#"{"additionalContext": "audit id 17", "message": "seen it", "decision": "block"}"#,
    )
    .await;
    let engine = engine(&workflow("PreToolUse", &server.url, "observe", json!({})));
    assert!(!engine.is_empty());
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({"command": "ls"})))
        .await
        .unwrap();
    assert_eq!(outcome.decision, PreToolDecision::Continue);
    assert_eq!(outcome.additional_context, ["audit id 17"]);
    assert!(
        outcome.warnings[0].contains("seen it"),
        "{:?}",
        outcome.warnings
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let body = &seen[0].body;
    assert_eq!(body["phase"], "PreToolUse");
    assert_eq!(body["tool_name"], "bash");
    assert_eq!(body["tool_input"], json!({"command": "ls"}));
    assert_eq!(body["session_id"], "thread-7");
    assert_eq!(body["turn_id"], "turn-3");
    assert_eq!(body["mode"], "observe");
    assert!(seen[0].head.starts_with("POST /hook "), "{}", seen[0].head);
    assert!(!seen[0].head.to_ascii_lowercase().contains("authorization"));
}

#[tokio::test]
async fn block_mode_denies_on_decision_block_or_ok_false() {
    let ws = tempfile::tempdir().unwrap();
    let cases = [
        (
            r#"{"decision": "block", "reason": "policy 7"}"#,
            Some("policy 7"),
        ),
        (
            r#"{"ok": false, "reason": "change freeze"}"#,
            Some("change freeze"),
        ),
        (r#"{"ok": true}"#, None),
        ("", None),
    ];
    for (answer, reason) in cases {
        let server = Responder::start(200, answer).await;
        let engine = engine(&workflow("PreToolUse", &server.url, "block", json!({})));
        let outcome = engine
            .pre_tool_use(&call(ws.path(), "bash", json!({"command": "ls"})))
            .await
            .unwrap();
        let expected = reason.map_or(PreToolDecision::Continue, |r| PreToolDecision::Deny {
            reason: r.to_owned(),
        });
        assert_eq!(outcome.decision, expected, "answer {answer}");
        assert!(
            outcome.warnings.is_empty(),
            "answer {answer}: {:?}",
            outcome.warnings
        );
    }
}

#[tokio::test]
async fn rewrite_mode_replaces_arguments_before_and_output_after() {
    let ws = tempfile::tempdir().unwrap();
    let server = Responder::start(200, r#"{"updatedInput": {"command": "ls -1"}}"#).await;
    let pre_engine = engine(&workflow("PreToolUse", &server.url, "rewrite", json!({})));
    let outcome = pre_engine
        .pre_tool_use(&call(ws.path(), "bash", json!({"command": "ls"})))
        .await
        .unwrap();
    assert_eq!(outcome.arguments, Some(json!({"command": "ls -1"})));

    let server =
        Responder::start(200, r#"{"output": {"stdout": "short"}, "is_error": false}"#).await;
    let post_engine = engine(&workflow("PostToolUse", &server.url, "rewrite", json!({})));
    let outcome = post_engine
        .post_tool_use(
            &call(ws.path(), "bash", json!({"command": "ls"})),
            ToolResult::ok(json!({"stdout": "a very long listing"})),
        )
        .await
        .unwrap();
    assert_eq!(outcome.result, ToolResult::ok(json!({"stdout": "short"})));
    let body = &server.seen()[0].body;
    assert_eq!(body["phase"], "PostToolUse");
    assert_eq!(
        body["tool_response"],
        json!({"stdout": "a very long listing"})
    );
}

#[tokio::test]
async fn block_mode_on_post_tool_use_marks_the_result_as_an_error() {
    let ws = tempfile::tempdir().unwrap();
    let server = Responder::start(200, r#"{"decision": "block", "reason": "leaks a key"}"#).await;
    let engine = engine(&workflow("PostToolUse", &server.url, "block", json!({})));
    let outcome = engine
        .post_tool_use(
            &call(ws.path(), "bash", json!({})),
            ToolResult::ok(json!({"stdout": "AKIA..."})),
        )
        .await
        .unwrap();
    assert!(outcome.result.is_error);
    assert_eq!(outcome.result.output["hook_reason"], "leaks a key");
}

#[tokio::test]
async fn block_mode_on_user_prompt_submit_denies_the_turn() {
    let ws = tempfile::tempdir().unwrap();
    let server = Responder::start(200, r#"{"ok": false, "reason": "off hours"}"#).await;
    let config = json!({"UserPromptSubmit": [{"hooks": [
        {"type": "workflow", "url": server.url, "mode": "block"}
    ]}]});
    let engine = engine(&config.to_string());
    let outcome = engine
        .turn_event(&HookTurnEvent {
            phase: HookPhase::UserPromptSubmit,
            turn: turn(ws.path()),
            prompt: Some("ship it".into()),
        })
        .await;
    assert_eq!(outcome.denied.as_deref(), Some("off hours"));
    assert_eq!(server.seen()[0].body["prompt"], "ship it");
}

#[tokio::test]
async fn the_bearer_secret_comes_from_the_named_variable() {
    let ws = tempfile::tempdir().unwrap();
    let server = Responder::start(200, "{}").await;
    // PATH is always set; it stands in for a secret so the test need not mutate the environment.
    let engine = engine(&workflow(
        "PreToolUse",
        &server.url,
        "observe",
        json!({"secret_env": "PATH"}),
    ));
    engine
        .pre_tool_use(&call(ws.path(), "bash", json!({})))
        .await
        .unwrap();
    let head = server.seen()[0].head.clone();
    let expected = format!("authorization: Bearer {}", std::env::var("PATH").unwrap());
    assert!(
        head.to_ascii_lowercase()
            .contains(&expected.to_ascii_lowercase()),
        "{head}"
    );
}

#[tokio::test]
async fn an_unset_secret_variable_skips_the_hook_with_a_warning() {
    let ws = tempfile::tempdir().unwrap();
    let server = Responder::start(200, r#"{"decision": "block"}"#).await;
    let engine = engine(&workflow(
        "PreToolUse",
        &server.url,
        "block",
        json!({"secret_env": "KUN_HOOKS_TEST_UNSET_SECRET_VARIABLE"}),
    ));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({})))
        .await
        .unwrap();
    assert_eq!(outcome.decision, PreToolDecision::Continue);
    assert!(outcome.warnings[0].contains("KUN_HOOKS_TEST_UNSET_SECRET_VARIABLE"));
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn a_closed_port_fails_open_with_a_warning() {
    let ws = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    drop(listener);
    let engine = engine(&workflow("PreToolUse", &url, "block", json!({})));
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({})))
        .await
        .unwrap();
    assert_eq!(outcome.decision, PreToolDecision::Continue);
    assert_eq!(outcome.warnings.len(), 1);
    assert!(
        outcome.warnings[0].contains("could not be reached"),
        "{:?}",
        outcome.warnings
    );
}

#[tokio::test]
async fn server_errors_and_garbage_answers_fail_open() {
    let ws = tempfile::tempdir().unwrap();
    for (status, answer, needle) in [
        (500, r#"{"decision": "block"}"#, "HTTP 500"),
        (200, "<html>oops</html>", "JSON object"),
        (200, "[1, 2]", "JSON object"),
    ] {
        let server = Responder::start(status, answer).await;
        let engine = engine(&workflow("PreToolUse", &server.url, "block", json!({})));
        let outcome = engine
            .pre_tool_use(&call(ws.path(), "bash", json!({})))
            .await
            .unwrap();
        assert_eq!(outcome.decision, PreToolDecision::Continue, "{answer}");
        assert!(
            outcome.warnings[0].contains(needle),
            "{:?}",
            outcome.warnings
        );
    }
}

#[tokio::test]
async fn a_silent_endpoint_times_out_and_fails_open() {
    let ws = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&held);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            keep.lock().unwrap().push(stream);
        }
    });
    let config = json!({"PreToolUse": [{"hooks": [
        {"type": "workflow", "url": url, "mode": "block", "timeout": 1}
    ]}]});
    let engine = engine(&config.to_string());
    let outcome = engine
        .pre_tool_use(&call(ws.path(), "bash", json!({})))
        .await
        .unwrap();
    assert_eq!(outcome.decision, PreToolDecision::Continue);
    assert!(
        outcome.warnings[0].contains("in time"),
        "{:?}",
        outcome.warnings
    );
}
