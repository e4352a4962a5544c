//! `kun-tools serve` through rmcp's client: the same scenarios as the Python SDK test, plus
//! hooks from TOML, reloading, HTTP tokens and start-up refusals.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use rmcp::ServiceExt;
use rmcp::model::{CallToolResult, ElicitRequestParams, ErrorCode};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::time::Duration;
use support::Env;
use support::client::{
    Client, LIMIT, Session, call, names, protocol_error, stdio, text, tools, until_listed,
};

/// Checks `isError` and the text block (the model's reading: never empty, an error's
/// message first) and returns the structured part: an error's `{code, error, …}` (this
/// client gets structured parts), a success's `structuredContent` or `null` when the tool
/// declares no output schema.
fn output(result: &CallToolResult, is_error: bool) -> Value {
    assert_eq!(result.is_error, Some(is_error), "{result:?}");
    let text = text(result);
    assert!(!text.is_empty(), "{result:?}");
    let structured = result.structured_content.clone().unwrap_or(Value::Null);
    if is_error {
        let message = structured["error"].as_str().expect("an error's message");
        assert!(text.starts_with(message), "{text:?} vs {structured}");
    }
    structured
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_reads_and_asks_before_write() {
    let env = Env::new();
    let client = Client::asking();
    let session = stdio(&env, &[], client.clone()).await;

    let listed = tools(&session).await;
    let list = names(&listed);
    let mut sorted = list.clone();
    sorted.sort();
    assert_eq!(list, sorted, "tools/list is sorted by name");
    let tool = |name: &str| listed.iter().find(|t| t.name == name).unwrap().clone();
    let read = tool("read").annotations.unwrap();
    assert_eq!(read.read_only_hint, Some(true));
    assert_eq!(read.destructive_hint, Some(false));
    let write = tool("write").annotations.unwrap();
    assert_eq!(write.read_only_hint, Some(false));
    assert_eq!(write.destructive_hint, Some(true));
    assert_eq!(tool("read").input_schema["type"], "object");
    assert!(!list.contains(&"find".to_owned()));

    let read = call(&session, "read", json!({"path": "src/notes.txt"}))
        .await
        .unwrap();
    output(&read, false);
    let lines = text(&read);
    assert!(
        lines.contains("alpha") && lines.contains("gamma"),
        "{lines}"
    );
    assert_eq!(client.asked(), 0, "read-only tools are not asked about");

    let new_file = env.ws().join("src/new.txt");
    for answer in ["deny", "decline", "cancel"] {
        client.answer(answer);
        let denied = call(
            &session,
            "write",
            json!({"path": "src/new.txt", "content": "x"}),
        )
        .await
        .unwrap();
        assert_eq!(output(&denied, true)["code"], "approval_denied", "{answer}");
        assert!(!new_file.exists(), "written after {answer}");
    }
    assert_eq!(client.asked(), 3);
    let ElicitRequestParams::FormElicitationParams {
        message,
        requested_schema,
        ..
    } = client.asked.lock().unwrap()[0].clone()
    else {
        panic!("not a form elicitation")
    };
    assert!(message.contains("`write`"), "{message}");
    let schema = serde_json::to_value(requested_schema).unwrap();
    assert_eq!(
        schema["properties"]["decision"]["enum"],
        json!(["allow", "allow_for_session", "deny"])
    );

    client.answer("allow");
    let allowed = call(
        &session,
        "write",
        json!({"path": "src/new.txt", "content": "yes"}),
    )
    .await
    .unwrap();
    output(&allowed, false);
    assert_eq!(std::fs::read_to_string(&new_file).unwrap(), "yes");

    client.answer("allow_for_session");
    for name in ["a", "b"] {
        let path = format!("src/{name}.txt");
        let written = call(&session, "write", json!({"path": path, "content": name}))
            .await
            .unwrap();
        output(&written, false);
    }
    assert_eq!(
        client.asked(),
        5,
        "allow_for_session covers the second write"
    );

    let unknown = protocol_error(call(&session, "teleport", json!({})).await);
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
    assert!(unknown.message.contains("teleport"), "{}", unknown.message);
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_never_is_policy_blocked_and_lists_narrow() {
    let env = Env::new();
    env.workspace_config("approval = \"never\"\n[tools]\ndeny = [\"bash\"]\n");
    let client = Client::asking();
    let session = stdio(&env, &[], client.clone()).await;
    let blocked = call(
        &session,
        "write",
        json!({"path": "src/new.txt", "content": "x"}),
    )
    .await
    .unwrap();
    assert_eq!(output(&blocked, true)["code"], "approval_policy_blocked");
    assert_eq!(client.asked(), 0);
    assert!(!env.ws().join("src/new.txt").exists());
    // A tool the configuration denies is unadvertised: a protocol error, not a result.
    assert!(!names(&tools(&session).await).contains(&"bash".to_owned()));
    let bash = protocol_error(call(&session, "bash", json!({"command": "true"})).await);
    assert_eq!(bash.code, ErrorCode::INVALID_PARAMS);
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_without_elicitation_get_the_fallback() {
    let env = Env::new();
    let session = stdio(&env, &[], Client::default()).await;
    let denied = call(
        &session,
        "write",
        json!({"path": "src/new.txt", "content": "x"}),
    )
    .await
    .unwrap();
    let out = output(&denied, true);
    assert_eq!(out["code"], "approval_denied");
    assert!(
        out["error"].as_str().unwrap().contains("elicitation"),
        "{out}"
    );
    assert!(!env.ws().join("src/new.txt").exists());
    session.cancel().await.unwrap();

    // The fallback from the (trusted) workspace's configuration file, then overridden by the
    // flag.
    env.workspace_config("approval_fallback = \"allow\"\n");
    let session = stdio(&env, &["--trust-workspace"], Client::default()).await;
    let allowed = call(
        &session,
        "write",
        json!({"path": "src/new.txt", "content": "y"}),
    )
    .await
    .unwrap();
    output(&allowed, false);
    session.cancel().await.unwrap();
    let session = stdio(
        &env,
        &["--trust-workspace", "--approval-fallback", "deny"],
        Client::default(),
    )
    .await;
    let denied = call(
        &session,
        "write",
        json!({"path": "src/new.txt", "content": "z"}),
    )
    .await
    .unwrap();
    assert_eq!(output(&denied, true)["code"], "approval_denied");
    assert_eq!(
        std::fs::read_to_string(env.ws().join("src/new.txt")).unwrap(),
        "y"
    );
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_from_toml_run_through_serve() {
    let env = Env::new();
    let hooks = env.ws().join(".kun/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let log = env.dir.path().join("audit.log");
    std::fs::write(
        hooks.join("check.sh"),
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *secret*) echo 'secrets stay put' >&2; exit 2;; esac\nexit 0\n",
    )
    .unwrap();
    std::fs::write(
        hooks.join("audit.sh"),
        format!(
            "#!/bin/sh\ncat > /dev/null\necho \"$KUN_HOOK_MARK ran\" >> {}\n",
            log.display()
        ),
    )
    .unwrap();
    env.workspace_config(
        "[[hooks.PreToolUse]]\nmatcher = \"read\"\nhooks = [{ type = \"command\", command = \"sh ./.kun/hooks/check.sh\", timeout = 5 }]\n\n[[hooks.PostToolUse]]\nmatcher = \".*\"\nhooks = [{ type = \"command\", command = \"KUN_HOOK_MARK=post sh ./.kun/hooks/audit.sh\" }]\n",
    );
    std::fs::write(env.ws().join("src/secret.txt"), "hunter2\n").unwrap();
    // Hooks of the workspace's own config run only in a trusted workspace.
    let session = stdio(&env, &["--trust-workspace"], Client::asking()).await;
    let denied = call(&session, "read", json!({"path": "src/secret.txt"}))
        .await
        .unwrap();
    let out = output(&denied, true);
    assert_eq!(out["code"], "hook_denied", "{out}");
    assert!(out.to_string().contains("secrets stay put"), "{out}");
    let read = call(&session, "read", json!({"path": "src/notes.txt"}))
        .await
        .unwrap();
    output(&read, false);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "post ran\n",
        "PostToolUse runs once, for the call that ran"
    );
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reloading_the_config_updates_the_catalog_and_sends_list_changed() {
    let env = Env::new();
    let client = Client::asking();
    let session = stdio(&env, &[], client.clone()).await;
    assert!(names(&tools(&session).await).contains(&"write".to_owned()));

    env.workspace_config("sandbox = \"read-only\"\n");
    tokio::time::timeout(LIMIT, client.list_changed.notified())
        .await
        .expect("no tools/list_changed after the config changed");
    let now = names(&tools(&session).await);
    assert!(!now.contains(&"write".to_owned()), "{now:?}");
    assert!(now.contains(&"read".to_owned()), "{now:?}");

    // A bad file changes nothing: the previous configuration keeps serving.
    env.workspace_config("sandbox = \"sideways\"\n");
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(names(&tools(&session).await), now);

    // Back to the defaults: write is listed again, and callable.
    std::fs::remove_file(env.ws().join(".kun/config.toml")).unwrap();
    tokio::time::timeout(LIMIT, client.list_changed.notified())
        .await
        .expect("no tools/list_changed after the config was removed");
    assert!(names(&tools(&session).await).contains(&"write".to_owned()));
    client.answer("allow");
    let written = call(
        &session,
        "write",
        json!({"path": "src/new.txt", "content": "x"}),
    )
    .await
    .unwrap();
    output(&written, false);
    session.cancel().await.unwrap();
}

async fn http_session(url: &str, token: Option<&str>) -> Result<Session, String> {
    http_session_with(url, token, Client::default()).await
}

async fn http_session_with(
    url: &str,
    token: Option<&str>,
    client: Client,
) -> Result<Session, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    match tokio::time::timeout(LIMIT, client.serve(transport)).await {
        Ok(Ok(session)) => Ok(session),
        Ok(Err(err)) => Err(err.to_string()),
        Err(_) => Err("initialize timed out".to_owned()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_with_a_token_refuses_everyone_else() {
    let env = Env::new();
    let server = env.serve_http(Some("s3cret-token"));
    assert_eq!(server.post_initialize(None), 401);
    assert_eq!(server.post_initialize(Some("Bearer wrong")), 401);
    assert_eq!(server.post_initialize(Some("s3cret-token")), 401);
    assert_eq!(server.post_initialize(Some("Bearer s3cret-token")), 200);

    assert!(http_session(&server.url, None).await.is_err());
    assert!(http_session(&server.url, Some("wrong")).await.is_err());
    let session = http_session(&server.url, Some("s3cret-token"))
        .await
        .unwrap();
    let read = call(&session, "read", json!({"path": "src/notes.txt"}))
        .await
        .unwrap();
    output(&read, false);
    let lines = text(&read);
    assert!(
        lines.contains("alpha") && lines.contains("gamma"),
        "{lines}"
    );
    let unknown = protocol_error(call(&session, "teleport", json!({})).await);
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
    session.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_without_a_token_serves_loopback() {
    let env = Env::new();
    let server = env.serve_http(None);
    assert_eq!(server.post_initialize(None), 200);
    let client = Client::asking();
    let session = http_session_with(&server.url, None, client.clone())
        .await
        .unwrap();
    assert!(names(&tools(&session).await).contains(&"read".to_owned()));
    // Elicitation works over HTTP too (a server-to-client request on the session).
    client.answer("deny");
    let denied = call(
        &session,
        "write",
        json!({"path": "src/new.txt", "content": "x"}),
    )
    .await
    .unwrap();
    assert_eq!(output(&denied, true)["code"], "approval_denied");
    assert_eq!(client.asked(), 1);
    client.answer("allow");
    let written = call(
        &session,
        "write",
        json!({"path": "src/new.txt", "content": "x"}),
    )
    .await
    .unwrap();
    output(&written, false);
    assert_eq!(client.asked(), 2);
    assert_eq!(
        std::fs::read_to_string(env.ws().join("src/new.txt")).unwrap(),
        "x"
    );
    session.cancel().await.unwrap();
}

#[test]
fn non_loopback_without_a_token_is_refused_at_start() {
    let env = Env::new();
    let ws = env.ws_arg();
    let out = env
        .command(&["serve", "--workspace", &ws, "--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a loopback address") && err.contains("KUN_TOKEN"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_configuration_stops_serve_before_the_handshake() {
    let env = Env::new();
    env.workspace_config("[tools]\nallow = \"read\"\n");
    let ws = env.ws_arg();
    let out = env
        .command(&["serve", "--workspace", &ws])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("config.toml:2") && err.contains("tools.allow"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "stdout belongs to the protocol");
}

/// Configured MCP servers are served too: the real `mcp-server-time` (installed by
/// `.ci/install-mcp.sh`) appears in `tools/list` and is called through the gates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_servers_are_served_through_the_gates() {
    let Some(server) = kun_ports::testkit::external_test_program(
        env!("CARGO_MANIFEST_DIR"),
        "KUN_MCP_SERVER_TIME",
        "target/ci-venv/bin/mcp-server-time",
    ) else {
        return;
    };
    let env = Env::new();
    let config = env.ws().join("../servers.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp_servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\n",
            server.to_string_lossy()
        ),
    )
    .unwrap();
    let config_arg = config.to_string_lossy().into_owned();
    let client = Client::asking();
    let args = [
        "--config",
        config_arg.as_str(),
        "--sandbox",
        "danger-full-access",
    ];
    let session = stdio(&env, &args, client.clone()).await;
    let list = names(&until_listed(&session, &client, "mcp_time_get_current_time").await);
    assert!(
        list.contains(&"mcp_time_get_current_time".to_owned()),
        "{list:?}"
    );
    client.answer("allow");
    let result = call(
        &session,
        "mcp_time_get_current_time",
        json!({"timezone": "UTC"}),
    )
    .await
    .unwrap();
    let out = output(&result, false);
    assert!(out.to_string().contains("UTC"), "{out}");
    session.cancel().await.unwrap();
}
