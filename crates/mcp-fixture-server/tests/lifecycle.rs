//! Servers that are slow, die mid-call, come back, or change their tools — and a catalog that
//! stays frozen for the turn that saw it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::{context, fixture, host, keep_in_sync, process_alive, registry, start, wait_until};
use kun_mcp::{SearchMode, SearchSettings, ServerState};
use kun_ports::{HostError, ToolCall, ToolHost, ToolProvider};
use serde_json::json;
use std::time::{Duration, Instant};

fn direct() -> SearchSettings {
    SearchSettings {
        mode: SearchMode::Direct,
        ..SearchSettings::default()
    }
}

fn pid_of(manager: &kun_mcp::McpManager, server: &str) -> Option<u32> {
    manager
        .statuses()
        .into_iter()
        .find(|s| s.name == server)?
        .pid
}

fn connected(manager: &kun_mcp::McpManager, server: &str) -> bool {
    manager
        .statuses()
        .into_iter()
        .any(|s| s.name == server && s.state.is_connected())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_call_times_out_with_an_error_result() {
    let server =
        fixture("fixture").with_timeouts(Duration::from_secs(30), Duration::from_millis(300));
    let manager = start(vec![server], direct()).await;
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, _inbox) = context(ws.path(), "t");
    let started = Instant::now();
    let call = ToolCall::new("c1", "mcp_fixture_slow", json!({"millis": 20_000}));
    let result = host(&registry).execute(call, &ctx).await.unwrap();
    assert_eq!(result.error_code(), Some("tool_timeout"), "{result:?}");
    assert!(result.error_message().unwrap().contains("300 ms"));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    // The connection survives a timeout.
    let echo = ToolCall::new("c2", "mcp_fixture_echo", json!({"text": "still here"}));
    let result = host(&registry).execute(echo, &ctx).await.unwrap();
    assert_eq!(result.output["content"][0]["text"], "still here");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_server_mid_call_is_an_error_result_and_it_comes_back_once() {
    let manager = start(vec![fixture("fixture")], direct()).await;
    let main = registry();
    let child = registry();
    let _sync = keep_in_sync(&manager, vec![main.clone(), child.clone()]);
    let host = host(&main);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, _inbox) = context(ws.path(), "t1");
    let first_pid = pid_of(&manager, "fixture").expect("a stdio server has a pid");

    let call = ToolCall::new("c1", "mcp_fixture_slow", json!({"millis": 25_000}));
    let running = tokio::spawn({
        let ctx = ctx.clone();
        async move {
            let started = Instant::now();
            let result = host.execute(call, &ctx).await;
            (result, started.elapsed(), host)
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(first_pid).unwrap()).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let (result, took, host) = running.await.unwrap();
    let result = result.unwrap();
    assert_eq!(
        result.error_code(),
        Some("tool_execution_failed"),
        "{result:?}"
    );
    assert!(
        result.error_message().unwrap().contains("went away"),
        "{result:?}"
    );
    assert!(
        took < Duration::from_secs(20),
        "the call waited {took:?}; it must end when the server dies"
    );

    wait_until(Duration::from_secs(30), "the server to come back", || {
        connected(&manager, "fixture") && pid_of(&manager, "fixture") != Some(first_pid)
    })
    .await;
    let status = manager.statuses().remove(0);
    assert_eq!(status.reconnects, 1);
    wait_until(
        Duration::from_secs(10),
        "both registries to list the tools again",
        || {
            let (c, _) = context(ws.path(), "any");
            main.list_tools(&c)
                .iter()
                .any(|d| d.name() == "mcp_fixture_echo")
                && child
                    .list_tools(&c)
                    .iter()
                    .any(|d| d.name() == "mcp_fixture_echo")
        },
    )
    .await;
    for registry in [&main, &child] {
        let (c, _) = context(ws.path(), "after");
        let echoes = registry
            .list_tools(&c)
            .iter()
            .filter(|d| d.name() == "mcp_fixture_echo")
            .count();
        assert_eq!(echoes, 1, "listed once");
        let mcp_providers = registry
            .diagnostics()
            .iter()
            .filter(|d| d.id == "mcp:fixture")
            .count();
        assert_eq!(mcp_providers, 1, "registered once");
    }
    // And it works again, through the same host.
    let (ctx2, _inbox2) = context(ws.path(), "t2");
    let echo = ToolCall::new("c2", "mcp_fixture_echo", json!({"text": "back"}));
    let result = host.execute(echo, &ctx2).await.unwrap();
    assert_eq!(result.output["content"][0]["text"], "back");
    manager.shutdown().await;
    assert!(!process_alive(first_pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_mid_call_is_restarted() {
    let manager = start(vec![fixture("fixture")], direct()).await;
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, _inbox) = context(ws.path(), "t");
    let first_pid = pid_of(&manager, "fixture").unwrap();
    let call = ToolCall::new("c1", "mcp_fixture_exit_mid_call", json!({"millis": 100}));
    let started = Instant::now();
    let result = host(&registry).execute(call, &ctx).await.unwrap();
    assert_eq!(
        result.error_code(),
        Some("tool_execution_failed"),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    wait_until(Duration::from_secs(30), "a new server process", || {
        connected(&manager, "fixture") && pid_of(&manager, "fixture") != Some(first_pid)
    })
    .await;
    let (ctx, _inbox) = context(ws.path(), "t2");
    let echo = ToolCall::new("c2", "mcp_fixture_echo", json!({"text": "again"}));
    let result = host(&registry).execute(echo, &ctx).await.unwrap();
    assert_eq!(result.output["content"][0]["text"], "again");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_while_reconnecting_fail_fast_with_the_reason() {
    let server = fixture("fixture").with_reconnect(kun_mcp::ReconnectPolicy {
        initial_delay: Duration::from_secs(60),
        max_delay: Duration::from_secs(60),
        max_attempts: 3,
    });
    let manager = start(vec![server], direct()).await;
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, _inbox) = context(ws.path(), "t");
    let pid = pid_of(&manager, "fixture").unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    wait_until(Duration::from_secs(10), "the manager to notice", || {
        matches!(
            manager.statuses()[0].state,
            ServerState::Reconnecting { .. }
        )
    })
    .await;
    let provider = manager.providers().remove(0);
    let policy = provider.policy();
    assert!(!policy.available);
    assert!(policy.reason.unwrap().contains("closed the connection"));
    // The registry no longer lists or resolves its tools...
    let err = host(&registry)
        .execute(
            ToolCall::new("c1", "mcp_fixture_echo", json!({"text": "x"})),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::NotAdvertised { .. }), "{err:?}");
    // ...and a tool reached directly answers at once with the reason.
    let descriptor = registry
        .snapshot()
        .get("mcp_fixture_echo")
        .cloned()
        .unwrap();
    let sandbox = kun_sandbox::WorkspaceSandbox::default();
    let tool_ctx = kun_ports::ToolContext {
        turn: kun_ports::ToolTurn::of(&ctx, &kun_ports::OpenCatalog),
        call_id: "c2",
        sandbox: &sandbox,
        progress: &kun_ports::NoProgress,
    };
    let result = descriptor
        .tool()
        .execute(json!({"text": "x"}), tool_ctx)
        .await
        .unwrap();
    assert_eq!(result.error_code(), Some("tool_execution_failed"));
    assert!(
        result.error_message().unwrap().contains("not connected"),
        "{result:?}"
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_change_reaches_the_next_turn_not_the_current_one() {
    let manager = start(vec![fixture("fixture")], direct()).await;
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let host = host(&registry);
    let ws = tempfile::tempdir().unwrap();
    let (turn1, mut inbox) = context(ws.path(), "turn-1");
    let before = host.list_tools(&turn1).len();
    let version = manager.catalog().version;

    // enable_extra_tool is not read-only: approve it.
    let approve = tokio::spawn(async move {
        let pending = inbox.recv().await.unwrap();
        pending.respond(kun_ports::ApprovalDecision::Allow);
    });
    let call = ToolCall::new("c1", "mcp_fixture_enable_extra_tool", json!({}));
    let result = host.execute(call, &turn1).await.unwrap();
    assert!(!result.is_error, "{result:?}");
    approve.await.unwrap();
    wait_until(
        Duration::from_secs(15),
        "the registry to hold extra_tool",
        || {
            manager.catalog().version > version
                && registry.snapshot().get("mcp_fixture_extra_tool").is_some()
        },
    )
    .await;

    // The turn that was running keeps its catalog...
    assert_eq!(host.list_tools(&turn1).len(), before);
    let err = host
        .execute(
            ToolCall::new("c2", "mcp_fixture_extra_tool", json!({})),
            &turn1,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, HostError::UnknownTool { .. }), "{err:?}");
    // ...the next turn sees the new tool, once.
    let turn2 = turn1.for_turn("turn-2");
    let names: Vec<String> = host
        .list_tools(&turn2)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(names.len(), before + 1);
    assert_eq!(
        names
            .iter()
            .filter(|n| *n == "mcp_fixture_extra_tool")
            .count(),
        1
    );
    let result = host
        .execute(
            ToolCall::new("c3", "mcp_fixture_extra_tool", json!({})),
            &turn2,
        )
        .await
        .unwrap();
    assert_eq!(result.output["content"][0]["text"], "extra");

    // A refresh asked by the host lists the tools again (nothing changed: same tools).
    let version = manager.catalog().version;
    assert!(manager.refresh("fixture"));
    assert!(!manager.refresh("no-such-server"));
    wait_until(Duration::from_secs(15), "the refresh to publish", || {
        manager.catalog().version > version
    })
    .await;
    let names_after: Vec<String> = host
        .list_tools(&turn1.for_turn("turn-3"))
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(names_after, names);
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_and_drop_leave_no_server_behind() {
    let manager = start(vec![fixture("a"), fixture("b")], direct()).await;
    let pid_a = pid_of(&manager, "a").unwrap();
    let pid_b = pid_of(&manager, "b").unwrap();
    assert!(process_alive(pid_a) && process_alive(pid_b));
    // Each server leads its own process group.
    let pgid = rustix::process::getpgid(rustix::process::Pid::from_raw(
        i32::try_from(pid_a).unwrap(),
    ))
    .unwrap();
    assert_eq!(u32::try_from(pgid.as_raw_nonzero().get()).unwrap(), pid_a);
    manager.shutdown().await;
    wait_until(Duration::from_secs(10), "the servers to exit", || {
        !process_alive(pid_a) && !process_alive(pid_b)
    })
    .await;

    let manager = start(vec![fixture("c")], direct()).await;
    let pid_c = pid_of(&manager, "c").unwrap();
    drop(manager);
    wait_until(
        Duration::from_secs(10),
        "a dropped manager's server to die",
        || !process_alive(pid_c),
    )
    .await;
}
