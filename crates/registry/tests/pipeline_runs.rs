//! Runs through the whole pipeline with the in-memory ledger: replay, concurrent duplicates,
//! aborts mid-run, large outputs, and turn pinning.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_ports::{
    AbortStage, ArtifactError, ArtifactRef, HostError, MockArtifactStore, MockHookRunner,
    PostToolOutcome, PreToolOutcome, ToolCall, ToolHost, ToolHostContext,
};
use kun_registry::Host;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use support::{Behaviour, TestProvider, TestTool, ctx, host_with, names};

fn call(id: &str, tool: &str) -> ToolCall {
    ToolCall::new(id, tool, json!({"text": "hi"}))
}

#[tokio::test]
async fn a_completed_operation_is_replayed_not_run_again() {
    let tool = TestTool::new("echo");
    let runs = tool.counter();
    let host = host_with(vec![tool.arc()]).build();
    let ctx = ctx().build();
    let first = host.execute(call("c1", "echo"), &ctx).await.unwrap();
    let second = host.execute(call("c1", "echo"), &ctx).await.unwrap();
    assert_eq!(first, second);
    assert_eq!(runs.load(Ordering::SeqCst), 1);

    // A new call id, or other arguments, is another operation.
    host.execute(call("c2", "echo"), &ctx).await.unwrap();
    host.execute(ToolCall::new("c1", "echo", json!({"text": "other"})), &ctx)
        .await
        .unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn argument_key_order_does_not_make_another_operation() {
    let tool = TestTool::new("echo");
    let runs = tool.counter();
    let host = host_with(vec![tool.arc()]).build();
    let ctx = ctx().build();
    let a: Value = serde_json::from_str(r#"{"a":1,"b":{"x":1,"y":2}}"#).unwrap();
    let b: Value = serde_json::from_str(r#"{"b":{"y":2,"x":1},"a":1}"#).unwrap();
    host.execute(ToolCall::new("c", "echo", a), &ctx)
        .await
        .unwrap();
    host.execute(ToolCall::new("c", "echo", b), &ctx)
        .await
        .unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_failed_operation_may_run_again() {
    let tool = TestTool::new("flaky").behaviour(Behaviour::Fail(kun_ports::ToolError::new("503")));
    let runs = tool.counter();
    let host = host_with(vec![tool.arc()]).build();
    let ctx = ctx().build();
    for _ in 0..2 {
        let r = host.execute(call("c1", "flaky"), &ctx).await.unwrap();
        assert_eq!(r.error_code(), Some("tool_execution_failed"));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn abort_mid_execution_is_an_err_and_the_outcome_becomes_unknown() {
    let tool = TestTool::new("slow").behaviour(Behaviour::Hang);
    let runs = tool.counter();
    let host = Arc::new(host_with(vec![tool.arc()]).build());
    let ctx = ctx().build();
    let abort = ctx.abort.clone();
    let running = tokio::spawn({
        let host = Arc::clone(&host);
        let ctx = ctx.clone();
        async move { host.execute(call("c1", "slow"), &ctx).await }
    });
    // Wait until the tool is running, then abort.
    while runs.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    abort.abort();
    let outcome = tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .expect("the host stops waiting once aborted")
        .unwrap();
    assert_eq!(
        outcome,
        Err(HostError::Aborted {
            stage: AbortStage::DuringExecution
        })
    );

    // The same operation in a fresh context is not re-run: its effects are unknown.
    let retry_ctx = ToolHostContext {
        abort: kun_ports::AbortSignal::new(),
        ..ctx
    };
    let retry = host.execute(call("c1", "slow"), &retry_ctx).await.unwrap();
    assert_eq!(retry.error_code(), Some("tool_outcome_unknown"));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_duplicate_of_a_running_call_is_in_progress() {
    let tool = TestTool::new("slow").behaviour(Behaviour::Hang);
    let runs = tool.counter();
    let host = Arc::new(host_with(vec![tool.arc()]).build());
    let ctx = ctx().build();
    let first = tokio::spawn({
        let host = Arc::clone(&host);
        let ctx = ctx.clone();
        async move { host.execute(call("c1", "slow"), &ctx).await }
    });
    while runs.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let duplicate = host.execute(call("c1", "slow"), &ctx).await.unwrap();
    assert_eq!(duplicate.error_code(), Some("tool_invocation_in_progress"));
    ctx.abort.abort();
    let _ = tokio::time::timeout(Duration::from_secs(30), first).await;
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn large_outputs_are_spilled_to_the_artifact_store() {
    let big = "line\n".repeat(100);
    let tool = TestTool::new("dump").behaviour(Behaviour::Output(Value::String(big.clone())));
    let mut store = MockArtifactStore::new();
    store
        .expect_put()
        .withf(move |hint, bytes| hint == "dump-c1" && bytes == big.as_bytes())
        .times(1)
        .returning(|_, bytes| {
            Ok(ArtifactRef {
                id: "art-1".into(),
                path: None,
                byte_size: bytes.len() as u64,
            })
        });
    let host = host_with(vec![tool.arc()])
        .artifact_store(Arc::new(store))
        .artifact_threshold(100)
        .build();
    let result = host
        .execute(call("c1", "dump"), &ctx().build())
        .await
        .unwrap();
    assert!(!result.is_error);
    assert_eq!(result.output["artifact_id"], "art-1");
    assert_eq!(result.output["byte_size"], 500);
    assert_eq!(result.output["line_count"], 100);
    assert_eq!(result.output["truncated"], true);
    assert!(
        result.output["preview"]
            .as_str()
            .unwrap()
            .starts_with("line\nline\n")
    );

    // Replays return the spilled form, not the large output.
    let replay = host
        .execute(call("c1", "dump"), &ctx().build())
        .await
        .unwrap();
    assert_eq!(replay, result);
}

#[tokio::test]
async fn small_outputs_errors_and_store_failures_stay_inline() {
    let mut store = MockArtifactStore::new();
    store.expect_put().times(1).returning(|_, _| {
        Err(ArtifactError {
            message: "disk full".into(),
        })
    });
    let host = host_with(vec![
        TestTool::new("small")
            .behaviour(Behaviour::Output(json!("ok")))
            .arc(),
        TestTool::new("failing")
            .behaviour(Behaviour::ErrorResult(json!({"error": "x".repeat(500)})))
            .arc(),
        TestTool::new("big")
            .behaviour(Behaviour::Output(json!({"data": "y".repeat(500)})))
            .arc(),
    ])
    .artifact_store(Arc::new(store))
    .artifact_threshold(100)
    .build();
    let ctx = ctx().build();
    assert_eq!(
        host.execute(call("c1", "small"), &ctx)
            .await
            .unwrap()
            .output,
        json!("ok")
    );
    let failing = host.execute(call("c2", "failing"), &ctx).await.unwrap();
    assert!(failing.is_error && failing.output["error"].is_string());
    let big = host.execute(call("c3", "big"), &ctx).await.unwrap();
    assert_eq!(
        big.output["data"].as_str().unwrap().len(),
        500,
        "kept inline"
    );
}

#[tokio::test]
async fn a_turn_keeps_its_registry_snapshot() {
    let registry = support::registry(vec![
        TestProvider::new(
            "p",
            kun_ports::ProviderKind::Extension,
            vec![TestTool::new("old_tool").arc()],
        )
        .arc(),
    ]);
    let host = Host::builder(Arc::clone(&registry)).build();
    let turn1 = ctx().build();
    assert_eq!(names(&host.list_tools(&turn1)), ["old_tool"]);

    registry
        .replace_providers(vec![
            TestProvider::new(
                "p",
                kun_ports::ProviderKind::Extension,
                vec![TestTool::new("new_tool").arc()],
            )
            .arc(),
        ])
        .unwrap();

    // The running turn still lists and runs what it started with.
    assert_eq!(names(&host.list_tools(&turn1)), ["old_tool"]);
    assert!(
        !host
            .execute(call("c1", "old_tool"), &turn1)
            .await
            .unwrap()
            .is_error
    );
    assert!(matches!(
        host.execute(call("c2", "new_tool"), &turn1).await,
        Err(HostError::UnknownTool { .. })
    ));

    // A new turn sees the new tools only.
    let turn2 = turn1.for_turn("turn-2");
    assert_eq!(names(&host.list_tools(&turn2)), ["new_tool"]);
    assert!(matches!(
        host.execute(call("c3", "old_tool"), &turn2).await,
        Err(HostError::UnknownTool { .. })
    ));

    // Releasing a turn re-pins it to the current registry.
    assert!(host.release_turn("thread-1", "turn-1"));
    assert_eq!(names(&host.list_tools(&turn1)), ["new_tool"]);
}

#[tokio::test]
async fn a_turn_keeps_its_hooks() {
    let host = host_with(vec![TestTool::new("echo").arc()]).build();
    let turn1 = ctx().build();
    // Pin turn 1 with no hooks.
    assert_eq!(host.list_tools(&turn1).len(), 1);

    let mut hooks = MockHookRunner::new();
    hooks.expect_is_empty().return_const(false);
    hooks.expect_pre_tool_use().times(1).returning(|_| {
        Ok(PreToolOutcome {
            arguments: Some(json!({"text": "hooked"})),
            ..PreToolOutcome::default()
        })
    });
    hooks
        .expect_post_tool_use()
        .times(1)
        .returning(|_, result| {
            Ok(PostToolOutcome {
                result,
                warnings: vec![],
                additional_context: vec![],
            })
        });
    host.replace_hooks(Some(Arc::new(hooks)));

    let old = host.execute(call("c1", "echo"), &turn1).await.unwrap();
    assert_eq!(
        old.output["text"], "hi",
        "turn 1 runs without the new hooks"
    );
    let new = host
        .execute(call("c1", "echo"), &turn1.for_turn("turn-2"))
        .await
        .unwrap();
    assert_eq!(new.output["text"], "hooked", "turn 2 runs with them");
}

#[tokio::test]
async fn the_pin_table_is_bounded() {
    let host = host_with(vec![TestTool::new("echo").arc()])
        .pinned_turns(8)
        .build();
    let base = ctx().build();
    for i in 0..50 {
        let _ = host.list_tools(&base.for_turn(format!("turn-{i}")));
    }
    // Only the recent turns are still pinned; releasing an old one reports it gone.
    assert!(!host.release_turn("thread-1", "turn-0"));
    assert!(host.release_turn("thread-1", "turn-49"));
}

#[tokio::test]
async fn rate_limits_are_normalised_for_network_backed_tools_only() {
    let limited = json!({"error": "HTTP 429: too many requests, retry after 20s"});
    let registry = support::registry(vec![
        TestProvider::builtin(vec![
            TestTool::new("read")
                .behaviour(Behaviour::ErrorResult(limited.clone()))
                .arc(),
        ])
        .arc(),
        TestProvider::new(
            "web",
            kun_ports::ProviderKind::Web,
            vec![
                TestTool::new("web_fetch")
                    .behaviour(Behaviour::ErrorResult(limited.clone()))
                    .arc(),
            ],
        )
        .arc(),
    ]);
    let host = Host::builder(registry).build();
    let ctx = ctx().build();

    let web = host.execute(call("c1", "web_fetch"), &ctx).await.unwrap();
    assert_eq!(web.error_code(), Some("rate_limited"), "{web:?}");

    // A local tool's output is never sniffed: a file may well say "too many requests".
    let local = host.execute(call("c2", "read"), &ctx).await.unwrap();
    assert_eq!(local.output, limited);
    assert_eq!(local.error_code(), None);
}
