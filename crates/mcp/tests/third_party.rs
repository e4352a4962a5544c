//! Real third-party servers behind our catalog and gates:
//! `@modelcontextprotocol/server-everything` (npm, over stdio and streamable HTTP) and
//! `mcp-server-time` (PyPI), both pinned by `.ci/install-mcp.sh`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::servers::{context, everything, host, registry_with, time};
use kun_mcp::{McpManager, McpServerConfig, SearchMode, SearchSettings};
use kun_ports::{
    ApprovalDecision, ContentBlock, SideEffect, ToolCall, ToolHost, ToolKind, ToolPolicy,
    ToolProvider,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn direct() -> SearchSettings {
    SearchSettings {
        mode: SearchMode::Direct,
        ..SearchSettings::default()
    }
}

async fn start(config: McpServerConfig) -> McpManager {
    McpManager::builder()
        .server(config.with_timeouts(Duration::from_secs(60), Duration::from_secs(60)))
        .search(direct())
        .sanitizer(Arc::new(kun_builtin_tools::sanitize_schema))
        .start()
        .await
        .unwrap()
}

fn class_of(
    host: &kun_registry::Host,
    ctx: &kun_ports::ToolHostContext,
    name: &str,
) -> (ToolPolicy, ToolKind, SideEffect) {
    let listed = host.list_tools(ctx);
    let tool = listed.iter().find(|d| d.name() == name).unwrap_or_else(|| {
        let names: Vec<&str> = listed.iter().map(|d| d.name()).collect();
        panic!("{name} not listed; listed: {names:?}")
    });
    (
        tool.spec().policy,
        tool.spec().kind,
        tool.spec().side_effect,
    )
}

/// What the model reads of a result: its text blocks.
fn text(result: &kun_ports::ToolResult) -> String {
    result.model_text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio() {
    let Some(command) = everything() else { return };
    let manager = start(McpServerConfig::stdio(
        "everything",
        command.to_string_lossy(),
    ))
    .await;
    let provider = manager.providers().remove(0);
    assert!(provider.policy().is_usable(), "{:?}", provider.policy());
    let status = manager.statuses().remove(0);
    assert!(
        status.server_info.as_deref().is_some_and(|i| !i.is_empty()),
        "{status:?}"
    );

    let registry = registry_with(&manager);
    let host = host(&registry);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, mut inbox) = context(ws.path(), "t1");

    use SideEffect::{ReadOnly, Unknown};
    use ToolKind::{CommandExecution, ToolCall as Call};
    use ToolPolicy::{Auto, OnRequest, Untrusted};
    assert_eq!(
        class_of(&host, &ctx, "mcp_everything_echo"),
        (Auto, Call, ReadOnly)
    );
    assert_eq!(
        class_of(&host, &ctx, "mcp_everything_get_sum"),
        (Auto, Call, ReadOnly)
    );
    assert_eq!(
        class_of(&host, &ctx, "mcp_everything_get_tiny_image"),
        (Auto, Call, ReadOnly)
    );
    assert_eq!(
        class_of(&host, &ctx, "mcp_everything_toggle_simulated_logging"),
        (OnRequest, CommandExecution, Unknown)
    );
    assert_eq!(
        class_of(&host, &ctx, "mcp_everything_gzip_file_as_resource"),
        (Untrusted, CommandExecution, Unknown)
    );
    assert_eq!(
        manager
            .resolve("mcp_everything_get_tiny_image")
            .unwrap()
            .tool,
        "get-tiny-image"
    );
    // Zod schemas, through the real sanitiser.
    let sum = registry.resolve("mcp_everything_get_sum", &ctx).unwrap();
    assert_eq!(sum.spec().input_schema["type"], "object");
    assert!(sum.spec().input_schema.get("$schema").is_none());
    assert_eq!(sum.spec().input_schema["properties"]["a"]["type"], "number");

    // Read-only tools run without asking.
    let echo = host
        .execute(
            ToolCall::new("c1", "mcp_everything_echo", json!({"message": "hello"})),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(text(&echo), "Echo: hello", "{echo:?}");
    let sum = host
        .execute(
            ToolCall::new("c2", "mcp_everything_get_sum", json!({"a": 2, "b": 40})),
            &ctx,
        )
        .await
        .unwrap();
    assert!(text(&sum).contains("42"), "{sum:?}");
    let image = host
        .execute(
            ToolCall::new("c3", "mcp_everything_get_tiny_image", json!({})),
            &ctx,
        )
        .await
        .unwrap();
    // The image stays an image block (for the model and for `serve`), not a JSON blob.
    assert!(
        image
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::Image { mime_type, data } if mime_type == "image/png" && !data.is_empty())),
        "{image:?}"
    );
    assert!(
        !image.model_text().contains("base64"),
        "{}",
        image.model_text()
    );
    assert!(inbox.try_recv().is_none(), "read-only tools do not ask");

    // A non-read-only tool asks; once allowed, it runs.
    let answer = tokio::spawn(async move {
        let pending = inbox.recv().await.unwrap();
        let name = pending.request.tool_name.clone();
        pending.respond(ApprovalDecision::Allow);
        name
    });
    let toggled = host
        .execute(
            ToolCall::new("c4", "mcp_everything_toggle_simulated_logging", json!({})),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(
        answer.await.unwrap(),
        "mcp_everything_toggle_simulated_logging"
    );
    assert!(
        text(&toggled).contains("simulated, random-leveled logging"),
        "{toggled:?}"
    );

    // The server validates arguments; a bad call is an error result, not a fault.
    let bad = host
        .execute(
            ToolCall::new("c5", "mcp_everything_get_sum", json!({"a": "two"})),
            &ctx,
        )
        .await
        .unwrap();
    assert!(bad.is_error, "{bad:?}");
    let pid = manager.statuses()[0].pid.unwrap();
    manager.shutdown().await;
    common::servers::wait_gone(pid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_streamable_http() {
    let Some(command) = everything() else { return };
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut server = tokio::process::Command::new(&command)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP server did not start"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let manager = start(McpServerConfig::http("remote", url).with_header("X-Test", "kun")).await;
    let status = manager.statuses().remove(0);
    assert!(status.state.is_connected(), "{status:?}");
    assert_eq!(status.transport, "streamable_http");
    assert!(status.pid.is_none());
    let registry = registry_with(&manager);
    let host = host(&registry);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, _inbox) = context(ws.path(), "t1");
    assert_eq!(class_of(&host, &ctx, "mcp_remote_echo").0, ToolPolicy::Auto);
    let echo = host
        .execute(
            ToolCall::new("c1", "mcp_remote_echo", json!({"message": "over http"})),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(text(&echo), "Echo: over http", "{echo:?}");
    manager.shutdown().await;
    server.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_time() {
    let Some(command) = time() else { return };
    let manager = start(
        McpServerConfig::stdio("time", command.to_string_lossy())
            .with_args(["--local-timezone", "UTC"]),
    )
    .await;
    let registry = registry_with(&manager);
    let host = host(&registry);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, inbox) = context(ws.path(), "t1");
    let mut inbox = inbox;
    let listed: Vec<String> = host
        .list_tools(&ctx)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(
        listed,
        ["mcp_time_convert_time", "mcp_time_get_current_time"]
    );
    for name in &listed {
        assert_eq!(
            class_of(&host, &ctx, name),
            (ToolPolicy::Auto, ToolKind::ToolCall, SideEffect::ReadOnly)
        );
    }
    let now = host
        .execute(
            ToolCall::new(
                "c1",
                "mcp_time_get_current_time",
                json!({"timezone": "Asia/Tokyo"}),
            ),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!now.is_error, "{now:?}");
    let answer: Value = serde_json::from_str(&text(&now)).unwrap();
    assert_eq!(answer["timezone"], "Asia/Tokyo", "{answer}");
    // The server declares an output schema: its structured content is the output.
    let spec = registry
        .resolve("mcp_time_get_current_time", &ctx)
        .unwrap()
        .spec()
        .clone();
    assert_eq!(spec.output_schema.as_ref().unwrap()["type"], "object");
    assert_eq!(now.output, answer, "{now:?}");
    let converted = host
        .execute(
            ToolCall::new(
                "c2",
                "mcp_time_convert_time",
                json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
            ),
            &ctx,
        )
        .await
        .unwrap();
    let answer: Value = serde_json::from_str(&text(&converted)).unwrap();
    assert!(
        answer["target"]["datetime"]
            .as_str()
            .unwrap()
            .contains("T21:00"),
        "{answer}"
    );
    assert!(
        inbox.try_recv().is_none(),
        "read-only tools run without approval"
    );

    let bad = host
        .execute(
            ToolCall::new(
                "c3",
                "mcp_time_get_current_time",
                json!({"timezone": "Mars/Olympus"}),
            ),
            &ctx,
        )
        .await
        .unwrap();
    assert!(bad.is_error, "{bad:?}");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_servers_in_search_mode() {
    let (Some(everything), Some(time)) = (everything(), time()) else {
        return;
    };
    let manager = McpManager::builder()
        .server(McpServerConfig::stdio(
            "everything",
            everything.to_string_lossy(),
        ))
        .server(
            McpServerConfig::stdio("time", time.to_string_lossy())
                .with_args(["--local-timezone", "UTC"]),
        )
        .search(SearchSettings {
            mode: SearchMode::Search,
            ..SearchSettings::default()
        })
        .start()
        .await
        .unwrap();
    let registry = registry_with(&manager);
    let host = host(&registry);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, _inbox) = context(ws.path(), "t1");
    let search = |query: &str| ToolCall::new("s", "mcp_search", json!({"query": query}));
    for (query, want) in [
        ("what time is it in Paris", "mcp_time_get_current_time"),
        ("把北京时间换算成纽约时间", "mcp_time_convert_time"),
        ("add two numbers together", "mcp_everything_get_sum"),
        ("repeat my message back", "mcp_everything_echo"),
    ] {
        let found = host.execute(search(query), &ctx).await.unwrap();
        assert_eq!(
            found.output["results"][0]["name"], want,
            "{query}: {}",
            found.output
        );
    }
    let call = ToolCall::new(
        "c1",
        "mcp_call",
        json!({"name": "mcp_time_get_current_time", "arguments": {"timezone": "UTC"}}),
    );
    let result = host.execute(call, &ctx).await.unwrap();
    assert!(text(&result).contains("\"timezone\""), "{result:?}");
    manager.shutdown().await;
}
