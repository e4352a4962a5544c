//! Search mode against a live server: the catalog carries the gateway instead of the tools,
//! search and describe follow the turn's filters, and `mcp_call` puts its target through the
//! target's own gates.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::{context, fixture, host, keep_in_sync, registry, start};
use kun_mcp::{SearchMode, SearchSettings, TrustScope};
use kun_ports::{
    ApprovalDecision, ForwardedCall, HostError, NotAdvertisedReason, SandboxMode, ThreadMode,
    ToolCall, ToolHost, ToolHostContext,
};
use kun_registry::{CapabilityRegistry, CatalogFilters, PlanWhitelist};
use kun_sandbox::WorkspaceSandbox;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

fn search() -> SearchSettings {
    SearchSettings {
        mode: SearchMode::Search,
        ..SearchSettings::default()
    }
}

fn result_names(output: &Value) -> Vec<String> {
    output["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_carries_the_gateway_and_hides_the_tools() {
    let manager = start(vec![fixture("notes")], search()).await;
    assert!(manager.catalog().search_active);
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let host = host(&registry);
    let ws = tempfile::tempdir().unwrap();
    let (ctx, _inbox) = context(ws.path(), "t");
    let names: Vec<String> = host
        .list_tools(&ctx)
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    assert_eq!(names, ["mcp_call", "mcp_describe", "mcp_search"]);
    // The hidden tools stay resolvable for the gates.
    assert!(registry.resolve("mcp_notes_delete_note", &ctx).is_ok());

    let found = host
        .execute(
            ToolCall::new("s1", "mcp_search", json!({"query": "remove a stored note"})),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!found.is_error, "{found:?}");
    assert_eq!(
        result_names(&found.output)[0],
        "mcp_notes_delete_note",
        "{}",
        found.output
    );
    assert_eq!(found.output["results"][0]["policy"], "on-request");
    assert_eq!(found.output["results"][0]["required"], json!(["key"]));

    let zh = host
        .execute(
            ToolCall::new(
                "s2",
                "mcp_search",
                json!({"query": "原样返回这段文字", "top_k": 2}),
            ),
            &ctx,
        )
        .await
        .unwrap();
    let zh_names = result_names(&zh.output);
    assert!(zh_names.len() <= 2);
    assert_eq!(zh_names[0], "mcp_notes_echo", "{}", zh.output);

    let described = host
        .execute(
            ToolCall::new("d1", "mcp_describe", json!({"name": "mcp_notes_add_note"})),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(described.output["tool"], "add_note");
    assert_eq!(
        described.output["input_schema"]["required"],
        json!(["key", "text"])
    );
    let unknown = host
        .execute(
            ToolCall::new("d2", "mcp_describe", json!({"name": "mcp_notes"})),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(unknown.error_code(), Some("invalid_arguments"));

    let missing = host
        .execute(ToolCall::new("s3", "mcp_search", json!({})), &ctx)
        .await
        .unwrap();
    assert_eq!(missing.error_code(), Some("invalid_arguments"));
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_call_names_its_target_and_the_target_is_gated() {
    let manager = start(vec![fixture("notes")], search()).await;
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let gateway = registry.snapshot().get("mcp_call").cloned().unwrap();
    assert_eq!(
        gateway
            .tool()
            .forward(&json!({"name": "mcp_notes_echo", "arguments": {"text": "hi"}})),
        Some(Ok(ForwardedCall {
            tool_name: "mcp_notes_echo".into(),
            arguments: json!({"text": "hi"}),
        }))
    );
    assert_eq!(
        gateway.tool().forward(&json!({"name": "mcp_notes_echo"})),
        Some(Ok(ForwardedCall {
            tool_name: "mcp_notes_echo".into(),
            arguments: json!({})
        }))
    );
    assert!(
        gateway
            .tool()
            .forward(&json!({"name": "mcp_notes"}))
            .unwrap()
            .unwrap_err()
            .contains("mcp_search")
    );
    assert!(
        gateway
            .tool()
            .forward(&json!({"name": "mcp_notes_echo", "arguments": [1]}))
            .unwrap()
            .is_err()
    );
    assert!(gateway.tool().forward(&json!({})).unwrap().is_err());

    let host = host(&registry);
    let ws = tempfile::tempdir().unwrap();

    // Read-only target: runs without asking.
    let (ctx, mut inbox) = context(ws.path(), "t1");
    let call = ToolCall::new(
        "c1",
        "mcp_call",
        json!({"name": "mcp_notes_echo", "arguments": {"text": "via gateway"}}),
    );
    let result = host.execute(call, &ctx).await.unwrap();
    assert_eq!(
        result.output["content"][0]["text"], "via gateway",
        "{result:?}"
    );
    assert!(inbox.try_recv().is_none());

    // Destructive target: the approval names the target, not mcp_call.
    let asked = tokio::spawn(async move {
        let pending = inbox.recv().await.unwrap();
        let name = pending.request.tool_name.clone();
        pending.respond(ApprovalDecision::Deny { reason: None });
        name
    });
    let call = ToolCall::new(
        "c2",
        "mcp_call",
        json!({"name": "mcp_notes_delete_note", "arguments": {"key": "k"}}),
    );
    let result = host.execute(call, &ctx).await.unwrap();
    assert_eq!(result.error_code(), Some("approval_denied"));
    assert_eq!(asked.await.unwrap(), "mcp_notes_delete_note");

    // A denied target.
    let (denied, _i) = context(ws.path(), "t2");
    let mut denied = denied;
    denied.lists.blocked_tool_names.insert("mcp_notes_echo");
    let call = ToolCall::new(
        "c3",
        "mcp_call",
        json!({"name": "mcp_notes_echo", "arguments": {"text": "x"}}),
    );
    let err = host.execute(call, &denied).await.unwrap_err();
    assert!(
        matches!(
            err,
            HostError::NotAdvertised {
                reason: NotAdvertisedReason::ToolPolicy,
                ..
            }
        ),
        "{err:?}"
    );
    // A blocked server hides its tools from search too.
    let mut blocked_server = denied.for_turn("t3");
    blocked_server
        .lists
        .blocked_provider_ids
        .insert("mcp:notes");
    let found = host
        .execute(
            ToolCall::new("s1", "mcp_search", json!({"query": "echo text"})),
            &blocked_server,
        )
        .await
        .unwrap();
    assert!(result_names(&found.output).is_empty(), "{}", found.output);

    // A plan-mode-forbidden target (not read-only).
    let (plan, _i) = context(ws.path(), "t4");
    let plan = kun_ports::ToolHostContext {
        thread_mode: ThreadMode::Plan,
        ..plan
    };
    let call = ToolCall::new(
        "c4",
        "mcp_call",
        json!({"name": "mcp_notes_add_note", "arguments": {"key": "k", "text": "t"}}),
    );
    let err = host.execute(call, &plan).await.unwrap_err();
    assert!(
        matches!(
            err,
            HostError::NotAdvertised {
                reason: NotAdvertisedReason::ToolPolicy,
                ..
            }
        ),
        "{err:?}"
    );
    // Plan mode still allows a read-only target, and search offers only read-only tools.
    let call = ToolCall::new(
        "c5",
        "mcp_call",
        json!({"name": "mcp_notes_read_note", "arguments": {"key": "k"}}),
    );
    assert!(!host.execute(call, &plan).await.unwrap().is_error);
    let found = host
        .execute(
            ToolCall::new("s2", "mcp_search", json!({"query": "note", "top_k": 20})),
            &plan,
        )
        .await
        .unwrap();
    let names = result_names(&found.output);
    assert!(
        names.contains(&"mcp_notes_read_note".to_owned()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"mcp_notes_add_note".to_owned()),
        "{names:?}"
    );
    assert!(
        !names.contains(&"mcp_notes_delete_note".to_owned()),
        "{names:?}"
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_target_is_refused_and_never_found() {
    let trusted_ws = tempfile::tempdir().unwrap();
    let other_ws = tempfile::tempdir().unwrap();
    let scoped = fixture("scoped").with_trust(TrustScope::Workspace, [trusted_ws.path()]);
    let manager = start(vec![scoped, fixture("open")], search()).await;
    let registry = registry();
    let _sync = keep_in_sync(&manager, vec![registry.clone()]);
    let host = host(&registry);
    let (ctx, _inbox) = context(other_ws.path(), "t");
    let call = ToolCall::new(
        "c1",
        "mcp_call",
        json!({"name": "mcp_scoped_echo", "arguments": {"text": "x"}}),
    );
    let err = host.execute(call, &ctx).await.unwrap_err();
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

    let found = host
        .execute(
            ToolCall::new("s1", "mcp_search", json!({"query": "echo", "top_k": 20})),
            &ctx,
        )
        .await
        .unwrap();
    let names = result_names(&found.output);
    assert!(names.contains(&"mcp_open_echo".to_owned()), "{names:?}");
    assert!(
        names.iter().all(|n| !n.starts_with("mcp_scoped_")),
        "{names:?}"
    );
    let described = host
        .execute(
            ToolCall::new("d1", "mcp_describe", json!({"name": "mcp_scoped_echo"})),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(described.output["mcp_access"], "untrusted", "{described:?}");

    // In the trusted workspace the same call runs.
    let (trusted, _inbox) = context(trusted_ws.path(), "t2");
    let call = ToolCall::new(
        "c2",
        "mcp_call",
        json!({"name": "mcp_scoped_echo", "arguments": {"text": "ok"}}),
    );
    assert_eq!(
        host.execute(call, &trusted).await.unwrap().output["content"][0]["text"],
        "ok"
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_switches_on_the_tool_count() {
    let below = SearchSettings {
        mode: SearchMode::Auto,
        threshold: 1000,
        ..SearchSettings::default()
    };
    let manager = start(vec![fixture("a")], below).await;
    assert!(!manager.catalog().search_active);
    let gateway = manager.providers().pop().unwrap();
    assert!(gateway.is_gateway());
    assert!(gateway.tool_names().is_empty());
    assert!(!kun_ports::ToolProvider::policy(gateway.as_ref()).enabled);
    manager.shutdown().await;

    let above = SearchSettings {
        mode: SearchMode::Auto,
        threshold: 5,
        ..SearchSettings::default()
    };
    let manager = start(vec![fixture("a")], above).await;
    assert!(manager.catalog().search_active);
    let gateway = manager.providers().pop().unwrap();
    assert_eq!(
        gateway.tool_names(),
        ["mcp_search", "mcp_describe", "mcp_call"]
    );
    manager.shutdown().await;
}

/// The gateway asks the host's filters instead of keeping a copy: what `mcp_describe` and
/// `mcp_call` offer in a context is exactly what a direct listing of the same server shows —
/// with a plan whitelist naming a tool that is not read-only, and with a sandbox that blocks
/// the server's command tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_offers_exactly_what_the_catalog_lists() {
    let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()))
        .with_plan_whitelist(PlanWhitelist::default().with("mcp_notes_add_note"));
    let direct_settings = SearchSettings {
        mode: SearchMode::Direct,
        ..SearchSettings::default()
    };
    let direct = start(vec![fixture("notes")], direct_settings).await;
    let searched = start(vec![fixture("notes")], search()).await;
    let catalog = Arc::new(CapabilityRegistry::new(filters.clone()));
    let gated = Arc::new(CapabilityRegistry::new(filters));
    let _direct_sync = keep_in_sync(&direct, vec![catalog.clone()]);
    let _search_sync = keep_in_sync(&searched, vec![gated.clone()]);
    let host = host(&gated);
    let direct_host = common::host(&catalog);
    let ws = tempfile::tempdir().unwrap();
    let names: Vec<String> = searched
        .catalog()
        .names
        .iter()
        .map(|(name, _)| name.to_owned())
        .collect();
    assert!(names.len() >= 8, "{names:?}");

    let (agent, mut inbox) = context(ws.path(), "t-agent");
    let plan = ToolHostContext {
        thread_mode: ThreadMode::Plan,
        ..agent.for_turn("t-plan")
    };
    let read_only = ToolHostContext {
        sandbox: SandboxMode::ReadOnly,
        ..agent.for_turn("t-read-only")
    };
    let plan_read_only = ToolHostContext {
        sandbox: SandboxMode::ReadOnly,
        ..plan.for_turn("t-plan-read-only")
    };
    for (label, ctx) in [
        ("agent", &agent),
        ("plan", &plan),
        ("read-only", &read_only),
        ("plan, read-only", &plan_read_only),
    ] {
        let listed: BTreeSet<String> = catalog
            .list_tools(ctx)
            .iter()
            .map(|d| d.name().to_owned())
            .collect();
        let mut offered = BTreeSet::new();
        for name in &names {
            let call = ToolCall::new("d", "mcp_describe", json!({ "name": name }));
            let described = host.execute(call, ctx).await.unwrap();
            if !described.is_error {
                offered.insert(name.clone());
            }
        }
        assert_eq!(offered, listed, "{label}");
        let found = host
            .execute(
                ToolCall::new("s", "mcp_search", json!({"query": "note", "top_k": 20})),
                ctx,
            )
            .await
            .unwrap();
        for name in result_names(&found.output) {
            assert!(listed.contains(&name), "{label}: search offered {name}");
        }
    }

    // The two cases a copy of the filters got wrong: a whitelisted tool that is not
    // read-only is offered in plan mode, and the sandbox hides command tools.
    let plan_listed = catalog.list_tools(&plan);
    let plan_names: Vec<&str> = plan_listed.iter().map(|d| d.name()).collect();
    assert!(plan_names.contains(&"mcp_notes_add_note"), "{plan_names:?}");
    assert!(
        !plan_names.contains(&"mcp_notes_delete_note"),
        "{plan_names:?}"
    );
    let read_only_listed = catalog.list_tools(&read_only);
    let read_only_names: Vec<&str> = read_only_listed.iter().map(|d| d.name()).collect();
    assert!(
        read_only_names.contains(&"mcp_notes_echo"),
        "{read_only_names:?}"
    );
    assert!(
        !read_only_names.contains(&"mcp_notes_add_note"),
        "{read_only_names:?}"
    );

    // mcp_call then treats its target exactly as a direct call: in plan mode the
    // whitelisted target reaches its approval; under read-only both refuse it alike.
    let asked = tokio::spawn(async move {
        let pending = inbox.recv().await.unwrap();
        let name = pending.request.tool_name.clone();
        pending.respond(ApprovalDecision::Deny { reason: None });
        name
    });
    let via_gateway = ToolCall::new(
        "c1",
        "mcp_call",
        json!({"name": "mcp_notes_add_note", "arguments": {"key": "k", "text": "t"}}),
    );
    let result = host.execute(via_gateway, &plan).await.unwrap();
    assert_eq!(result.error_code(), Some("approval_denied"), "{result:?}");
    assert_eq!(asked.await.unwrap(), "mcp_notes_add_note");
    let args = json!({"key": "k", "text": "t"});
    let blocked_direct = direct_host
        .execute(
            ToolCall::new("c2", "mcp_notes_add_note", args.clone()),
            &read_only,
        )
        .await
        .unwrap();
    let blocked_gateway = host
        .execute(
            ToolCall::new(
                "c3",
                "mcp_call",
                json!({"name": "mcp_notes_add_note", "arguments": args}),
            ),
            &read_only,
        )
        .await
        .unwrap();
    assert!(blocked_direct.is_error, "{blocked_direct:?}");
    assert_eq!(blocked_gateway.error_code(), blocked_direct.error_code());
    direct.shutdown().await;
    searched.shutdown().await;
}
