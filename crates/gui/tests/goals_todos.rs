//! The goal and todo tools through a real host: listed only for a GUI client surface,
//! state per thread, refusals that change nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_gui::{FileThreadState, GoalTodoProvider, MemoryThreadState};
use kun_ports::{ClientSurface, HostError, ThreadMode, ToolCall, ToolHost};
use serde_json::json;
use std::sync::Arc;
use support::{call, ctx, host, listed};

const GUI_TOOLS: [&str; 5] = [
    "create_goal",
    "get_goal",
    "todo_list",
    "todo_write",
    "update_goal",
];

#[tokio::test]
async fn listed_only_for_a_gui_surface() {
    let host = host(vec![Arc::new(GoalTodoProvider::new(Arc::new(
        MemoryThreadState::default(),
    )))]);
    let dir = tempfile::tempdir().unwrap();
    for surface in [ClientSurface::Cli, ClientSurface::Api, ClientSurface::Tui] {
        let ctx = ctx(dir.path(), "t").surface(surface).build();
        assert!(listed(&host, &ctx).is_empty(), "{surface:?}");
        let refused = host
            .execute(ToolCall::new("c", "todo_list", json!({})), &ctx)
            .await;
        assert!(
            matches!(refused, Err(HostError::NotAdvertised { .. })),
            "{refused:?}"
        );
    }
    let gui = ctx(dir.path(), "t").surface(ClientSurface::Gui).build();
    assert_eq!(listed(&host, &gui), GUI_TOOLS);
    // Plan mode keeps the read-only ones only (get_goal, todo_list).
    let plan = ctx(dir.path(), "t")
        .surface(ClientSurface::Gui)
        .mode(ThreadMode::Plan)
        .build();
    assert_eq!(listed(&host, &plan), ["get_goal", "todo_list"]);
}

#[tokio::test]
async fn goals_are_created_read_and_updated() {
    let host = host(vec![Arc::new(GoalTodoProvider::new(Arc::new(
        MemoryThreadState::default(),
    )))]);
    let dir = tempfile::tempdir().unwrap();
    let gui = || {
        ctx(dir.path(), "thread-1")
            .surface(ClientSurface::Gui)
            .build()
    };
    let none = call(&host, &gui(), "get_goal", json!({})).await;
    assert_eq!(none.output, json!({}));
    assert_eq!(none.model_text(), "No goal is set for this thread.");

    let refused = call(&host, &gui(), "update_goal", json!({"status": "paused"})).await;
    assert_eq!(refused.error_code(), Some("invalid_arguments"));
    assert!(
        refused.model_text().contains("create_goal"),
        "{}",
        refused.model_text()
    );

    let created = call(
        &host,
        &gui(),
        "create_goal",
        json!({"objective": " Ship the parser ", "token_budget": 40000}),
    )
    .await;
    assert_eq!(
        created.output["goal"],
        json!({"objective": "Ship the parser", "status": "active", "token_budget": 40000})
    );
    assert_eq!(
        created.model_text(),
        "Goal [active] (token budget 40000): Ship the parser"
    );

    let twice = call(
        &host,
        &gui(),
        "create_goal",
        json!({"objective": "Another"}),
    )
    .await;
    assert_eq!(twice.error_code(), Some("invalid_arguments"));
    assert!(
        twice.model_text().contains("update_goal"),
        "{}",
        twice.model_text()
    );

    let paused = call(&host, &gui(), "update_goal", json!({"status": "paused"})).await;
    assert_eq!(paused.output["goal"]["status"], "paused");
    assert_eq!(paused.output["goal"]["objective"], "Ship the parser");

    let complete = call(&host, &gui(), "update_goal", json!({"status": "complete"})).await;
    assert_eq!(complete.output["goal"]["status"], "complete");
    // A completed goal may be replaced by a new one.
    let next = call(&host, &gui(), "create_goal", json!({"objective": "Next"})).await;
    assert_eq!(next.output["goal"]["objective"], "Next");

    for bad in [
        json!({"objective": "  "}),
        json!({"objective": "x".repeat(2001)}),
        json!({"objective": "ok", "token_budget": 0}),
        json!({"objective": "ok", "surprise": 1}),
    ] {
        let result = call(&host, &gui(), "create_goal", bad.clone()).await;
        assert_eq!(result.error_code(), Some("invalid_arguments"), "{bad}");
    }
    let empty = call(&host, &gui(), "update_goal", json!({})).await;
    assert_eq!(empty.error_code(), Some("invalid_arguments"));
    let after = call(&host, &gui(), "get_goal", json!({})).await;
    assert_eq!(
        after.output["goal"]["objective"], "Next",
        "refusals changed nothing"
    );
}

#[tokio::test]
async fn todos_are_replaced_whole_and_kept_per_thread() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let host = host(vec![Arc::new(GoalTodoProvider::new(Arc::new(
        FileThreadState::new(&state),
    )))]);
    let gui = |thread: &str| ctx(dir.path(), thread).surface(ClientSurface::Gui).build();
    let written = call(
        &host,
        &gui("a"),
        "todo_write",
        json!({"todos": [
            {"content": "write tests", "status": "completed"},
            {"content": "fix the parser", "status": "in_progress"},
            {"content": "release", "status": "pending"}
        ]}),
    )
    .await;
    assert!(!written.is_error, "{:?}", written.output);
    assert_eq!(
        written.model_text(),
        "Todos (1/3 completed):\n[x] write tests\n[>] fix the parser\n[ ] release"
    );
    let replaced = call(
        &host,
        &gui("a"),
        "todo_write",
        json!({"todos": [{"content": "release", "status": "in_progress"}]}),
    )
    .await;
    assert_eq!(
        replaced.output["todos"],
        json!([{"content": "release", "status": "in_progress"}])
    );

    // Another thread has its own list; a new host over the same files (a second process,
    // a restarted serve) sees thread a's.
    let other = call(&host, &gui("b"), "todo_list", json!({})).await;
    assert_eq!(other.output["todos"], json!([]));
    let again = support::host(vec![Arc::new(GoalTodoProvider::new(Arc::new(
        FileThreadState::new(&state),
    )))]);
    let seen = call(&again, &gui("a"), "todo_list", json!({})).await;
    assert_eq!(
        seen.output["todos"],
        json!([{"content": "release", "status": "in_progress"}])
    );

    for bad in [
        json!({"todos": [{"content": " ", "status": "pending"}]}),
        json!({"todos": [{"content": "x", "status": "done"}]}),
        json!({"todos": [{"content": "x".repeat(501), "status": "pending"}]}),
        json!({"todos": (0..101).map(|i| json!({"content": format!("{i}"), "status": "pending"})).collect::<Vec<_>>()}),
    ] {
        let result = call(&host, &gui("a"), "todo_write", bad).await;
        assert_eq!(result.error_code(), Some("invalid_arguments"));
    }
    let unchanged = call(&host, &gui("a"), "todo_list", json!({})).await;
    assert_eq!(
        unchanged.output["todos"].as_array().unwrap().len(),
        1,
        "refusals changed nothing"
    );
}
