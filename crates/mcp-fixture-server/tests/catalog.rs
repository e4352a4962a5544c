//! The fixture server through kun-mcp and the real registry, sandbox and approval gate:
//! names, policies and kinds; calls; approvals; trust and visibility; servers that are off or
//! cannot start.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::{context, fixture, host, keep_in_sync, registry, start};
use kun_mcp::{McpServerConfig, SearchMode, SearchSettings, ServerState, TrustScope};
use kun_ports::{
    ApprovalDecision, HostError, NotAdvertisedReason, SideEffect, ToolCall, ToolHost, ToolKind,
    ToolPolicy, ToolProvider,
};
use serde_json::json;
use std::time::Duration;

fn direct() -> SearchSettings {
    SearchSettings {
        mode: SearchMode::Direct,
        ..SearchSettings::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_with_names_policies_and_kinds() {
    let manager = start(vec![fixture("fixture")], direct()).await;
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, _inbox) = context(ws.path(), "turn-1");
    let listed: Vec<(String, ToolPolicy, ToolKind, SideEffect)> = host(&registry)
        .list_tools(&ctx)
        .iter()
        .map(|d| {
            let s = d.spec();
            (s.name.clone(), s.policy, s.kind, s.side_effect)
        })
        .collect();
    let find = |name: &str| {
        listed
            .iter()
            .find(|(n, ..)| n == name)
            .map(|(_, p, k, s)| (*p, *k, *s))
            .unwrap_or_else(|| panic!("{name} not listed in {listed:?}"))
    };
    use SideEffect::{ReadOnly, Unknown};
    use ToolKind::{CommandExecution, ToolCall as Call};
    use ToolPolicy::{Auto, OnRequest, Untrusted};
    assert_eq!(find("mcp_fixture_echo"), (Auto, Call, ReadOnly));
    assert_eq!(find("mcp_fixture_read_note"), (Auto, Call, ReadOnly));
    assert_eq!(
        find("mcp_fixture_delete_note"),
        (OnRequest, CommandExecution, Unknown)
    );
    assert_eq!(find("mcp_fixture_web_lookup"), (Untrusted, Call, ReadOnly));
    assert_eq!(
        find("mcp_fixture_add_note"),
        (OnRequest, CommandExecution, Unknown)
    );
    assert_eq!(
        find("mcp_fixture_enable_extra_tool"),
        (OnRequest, CommandExecution, Unknown)
    );
    // The non-ASCII tool name is kept apart by a hash; the reverse map routes it back.
    let weather = listed
        .iter()
        .find(|(n, ..)| n.starts_with("mcp_fixture_tool_"))
        .map(|(n, ..)| n.clone())
        .expect("the 查询天气 tool is listed under a hashed name");
    assert_eq!(manager.resolve(&weather).unwrap().tool, "查询天气");
    assert_eq!(manager.resolve("mcp_fixture_echo").unwrap().tool, "echo");
    assert!(manager.resolve("mcp_fixture").is_none());
    // extra_tool is not offered until enabled.
    assert!(listed.iter().all(|(n, ..)| n != "mcp_fixture_extra_tool"));
    // Every name is model-safe.
    for (name, ..) in &listed {
        assert!(
            name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "{name}"
        );
    }
    // Schemas arrive (through the identity sanitiser here) as the server sent them.
    let echo = registry.resolve("mcp_fixture_echo", &ctx).unwrap();
    assert_eq!(
        echo.spec().input_schema["properties"]["text"]["type"],
        "string"
    );
    assert_eq!(echo.provider_id(), "mcp:fixture");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_runs_without_asking_and_the_others_ask() {
    let manager = start(vec![fixture("fixture")], direct()).await;
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let host = host(&registry);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, mut inbox) = context(ws.path(), "turn-1");

    // Read-only ∧ closed world: auto, no prompt under on-request.
    let call = ToolCall::new("c1", "mcp_fixture_echo", json!({"text": "héllo"}));
    let result = host.execute(call, &ctx).await.unwrap();
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.output["content"][0]["text"], "héllo");
    assert_eq!(result.output["server"], "fixture");
    assert_eq!(result.output["tool"], "echo");
    assert!(inbox.try_recv().is_none(), "a read-only tool must not ask");

    // Destructive: asks. Deny → approval_denied, and the note survives.
    let add = ToolCall::new(
        "c2",
        "mcp_fixture_add_note",
        json!({"key": "k", "text": "keep me"}),
    );
    let answer = tokio::spawn(async move {
        let pending = inbox.recv().await.expect("add_note asks");
        assert_eq!(pending.request.tool_name, "mcp_fixture_add_note");
        pending.respond(ApprovalDecision::Allow);
        let pending = inbox.recv().await.expect("delete_note asks");
        assert_eq!(pending.request.tool_name, "mcp_fixture_delete_note");
        pending.respond(ApprovalDecision::Deny {
            reason: Some("no".into()),
        });
        let pending = inbox.recv().await.expect("web_lookup (open world) asks");
        assert_eq!(pending.request.tool_name, "mcp_fixture_web_lookup");
        pending.respond(ApprovalDecision::Allow);
        inbox
    });
    let added = host.execute(add, &ctx).await.unwrap();
    assert!(!added.is_error, "{added:?}");
    let delete = ToolCall::new("c3", "mcp_fixture_delete_note", json!({"key": "k"}));
    let denied = host.execute(delete, &ctx).await.unwrap();
    assert_eq!(denied.error_code(), Some("approval_denied"), "{denied:?}");
    let lookup = ToolCall::new("c4", "mcp_fixture_web_lookup", json!({"query": "rust"}));
    let looked = host.execute(lookup, &ctx).await.unwrap();
    assert_eq!(looked.output["content"][0]["text"], "results for `rust`");
    let mut inbox = answer.await.unwrap();
    let read = ToolCall::new("c5", "mcp_fixture_read_note", json!({"key": "k"}));
    let kept = host.execute(read, &ctx).await.unwrap();
    assert_eq!(
        kept.output["content"][0]["text"], "keep me",
        "the denied delete never ran"
    );
    assert!(inbox.try_recv().is_none());
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_from_the_server_are_results() {
    let manager = start(vec![fixture("fixture")], direct()).await;
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let host = host(&registry);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, _inbox) = context(ws.path(), "turn-1");

    let failed = host
        .execute(ToolCall::new("c1", "mcp_fixture_fail", json!({})), &ctx)
        .await
        .unwrap();
    assert!(failed.is_error);
    assert_eq!(failed.error_message(), Some("this tool always fails"));
    // An `isError` answer carries a code like every error result, and the server's words.
    assert_eq!(failed.error_code(), Some("tool_execution_failed"));
    assert_eq!(failed.model_text(), "this tool always fails");

    let bad = host
        .execute(
            ToolCall::new("c2", "mcp_fixture_echo", json!({"text": 5})),
            &ctx,
        )
        .await
        .unwrap();
    assert!(bad.is_error, "{bad:?}");
    assert!(
        bad.error_message()
            .is_some_and(|m| m.contains("expected a string")),
        "{bad:?}"
    );

    let not_object = host
        .execute(ToolCall::new("c3", "mcp_fixture_echo", json!(["x"])), &ctx)
        .await
        .unwrap();
    assert_eq!(
        not_object.error_code(),
        Some("invalid_arguments"),
        "{not_object:?}"
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrusted_servers_are_not_listed_and_refuse_calls() {
    let trusted_ws = tempfile::tempdir().unwrap();
    let other_ws = tempfile::tempdir().unwrap();
    let scoped = fixture("scoped").with_trust(TrustScope::Workspace, [trusted_ws.path()]);
    let visible_elsewhere = fixture("hidden").visible_in([trusted_ws.path()]);
    let manager = start(vec![scoped, visible_elsewhere], direct()).await;
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let host = host(&registry);

    let (trusted, _a) = context(trusted_ws.path(), "t1");
    let names: Vec<String> = host
        .list_tools(&trusted)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert!(names.contains(&"mcp_scoped_echo".to_owned()), "{names:?}");
    assert!(names.contains(&"mcp_hidden_echo".to_owned()), "{names:?}");

    let (untrusted, _b) = context(other_ws.path(), "t2");
    let names: Vec<String> = host
        .list_tools(&untrusted)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.starts_with("mcp_scoped_") && !n.starts_with("mcp_hidden_")),
        "{names:?}"
    );

    // Through the host: the call is refused before anything runs.
    let call = ToolCall::new("c1", "mcp_scoped_echo", json!({"text": "x"}));
    let err = host.execute(call, &untrusted).await.unwrap_err();
    assert!(
        matches!(
            err,
            HostError::NotAdvertised {
                reason: NotAdvertisedReason::Context,
                ..
            }
        ),
        "{err:?}"
    );
    // The tool itself gives the clear reason when reached directly.
    let descriptor = registry.snapshot().get("mcp_scoped_echo").cloned().unwrap();
    let sandbox = kun_sandbox::WorkspaceSandbox::default();
    let tool_ctx = kun_ports::ToolContext {
        turn: kun_ports::ToolTurn::of(&untrusted, &kun_ports::OpenCatalog),
        call_id: "c2",
        sandbox: &sandbox,
        progress: &kun_ports::NoProgress,
    };
    let refused = descriptor
        .tool()
        .execute(json!({"text": "x"}), tool_ctx)
        .await
        .unwrap();
    assert!(refused.is_error);
    assert_eq!(refused.output["mcp_access"], "untrusted");
    let message = refused.error_message().unwrap();
    assert!(
        message.contains("not trusted") && message.contains("trusted_workspace_roots"),
        "{message}"
    );

    let hidden = registry.snapshot().get("mcp_hidden_echo").cloned().unwrap();
    let refused = hidden
        .tool()
        .execute(json!({"text": "x"}), tool_ctx)
        .await
        .unwrap();
    assert_eq!(refused.output["mcp_access"], "not_visible");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_and_broken_servers_say_why() {
    let off = fixture("off").enabled(false);
    let missing = McpServerConfig::stdio("missing", "/nonexistent/kun-mcp-no-such-server")
        .with_reconnect(kun_mcp::ReconnectPolicy {
            max_attempts: 0,
            ..kun_mcp::ReconnectPolicy::default()
        });
    let crashes = fixture("crashes")
        .with_args(["--exit-immediately"])
        .with_reconnect(kun_mcp::ReconnectPolicy {
            initial_delay: Duration::from_secs(60),
            max_delay: Duration::from_secs(60),
            max_attempts: 3,
        });
    let slow = fixture("slowstart")
        .with_args(["--startup-delay-ms", "20000"])
        .with_timeouts(Duration::from_millis(500), Duration::from_secs(5))
        .with_reconnect(kun_mcp::ReconnectPolicy {
            max_attempts: 0,
            ..kun_mcp::ReconnectPolicy::default()
        });
    let manager = start(vec![off, missing, crashes, slow, fixture("ok")], direct()).await;
    let by_id = |id: &str| {
        manager
            .providers()
            .into_iter()
            .find(|p| p.id() == id)
            .unwrap_or_else(|| panic!("no provider {id}"))
    };
    let off = by_id("mcp:off").policy();
    assert!(!off.enabled && off.available, "{off:?}");
    assert!(off.reason.unwrap().contains("enabled = false"));

    let missing = by_id("mcp:missing").policy();
    assert!(missing.enabled && !missing.available, "{missing:?}");
    let reason = missing.reason.unwrap();
    assert!(
        reason.contains("cannot start `/nonexistent/kun-mcp-no-such-server`"),
        "{reason}"
    );

    let crashes = by_id("mcp:crashes").policy();
    assert!(!crashes.available);
    let reason = crashes.reason.unwrap();
    assert!(
        reason.contains("exiting before the handshake"),
        "stderr is in the reason: {reason}"
    );
    assert!(reason.contains("attempt 1 of 3"), "{reason}");

    let slow = by_id("mcp:slowstart").policy();
    assert!(
        slow.reason
            .unwrap()
            .contains("did not finish starting within 500 ms")
    );

    assert!(by_id("mcp:ok").policy().is_usable());
    assert!(!by_id("mcp:ok").tool_names().is_empty());
    assert!(by_id("mcp:missing").tool_names().is_empty());

    let states: Vec<(String, ServerState)> = manager
        .statuses()
        .into_iter()
        .map(|s| (s.name, s.state))
        .collect();
    assert_eq!(states[0], ("off".to_owned(), ServerState::Disabled));
    assert!(
        matches!(states[1].1, ServerState::Failed { .. }),
        "{states:?}"
    );
    assert!(
        matches!(states[4].1, ServerState::Connected { .. }),
        "{states:?}"
    );
    let json = serde_json::to_value(manager.statuses()).unwrap();
    assert_eq!(json[4]["state"], "connected");
    assert_eq!(json[4]["transport"], "stdio");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_configuration_starts_nothing() {
    let err = kun_mcp::McpManager::builder()
        .server(fixture("same"))
        .server(fixture("same"))
        .start()
        .await
        .unwrap_err();
    assert_eq!(err.field, "name");
    let err = kun_mcp::McpManager::builder()
        .server(McpServerConfig::http("remote", "ftp://nope"))
        .start()
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("`remote`") && err.to_string().contains("url"),
        "{err}"
    );
}

/// Every provider the manager publishes honours the provider contract: a connected server
/// (non-ASCII and awkward tool names included), one that is off, one that cannot start, and
/// the search gateway both off (direct mode) and on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mcp_provider_honours_the_provider_contract() {
    let missing = McpServerConfig::stdio("missing", "/nonexistent/kun-mcp-no-such-server")
        .with_reconnect(kun_mcp::ReconnectPolicy {
            max_attempts: 0,
            ..kun_mcp::ReconnectPolicy::default()
        });
    let servers = || {
        vec![
            fixture("fixture"),
            fixture("off").enabled(false),
            missing.clone(),
        ]
    };
    let searching = SearchSettings {
        mode: SearchMode::Search,
        ..SearchSettings::default()
    };
    for search in [direct(), searching] {
        let manager = start(servers(), search).await;
        let providers = manager.providers();
        let ids: Vec<&str> = providers.iter().map(|p| p.id()).collect();
        assert_eq!(
            ids,
            ["mcp:fixture", "mcp:off", "mcp:missing", "mcp:search"],
            "{search:?}"
        );
        assert!(!providers[0].tools().is_empty());
        for provider in &providers {
            kun_ports::testkit::tool_provider_contract(provider.as_ref());
        }
        manager.shutdown().await;
    }
}
