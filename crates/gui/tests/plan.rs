//! `create_plan` through a real host: listed only in a plan context, writes only the
//! reserved plan file, and refuses everything else with a code (nothing written).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_gui::PlanProvider;
use kun_ports::{HostError, PlanContext, SandboxMode, ThreadMode, ToolCall, ToolHost};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use support::{call, ctx, host, listed};

fn plan_host() -> kun_registry::Host {
    host(vec![Arc::new(PlanProvider::new(".kun/plans"))])
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn listed_and_callable_only_in_a_plan_context() {
    let host = plan_host();
    let dir = tempfile::tempdir().unwrap();
    let agent = ctx(dir.path(), "t").build();
    assert!(listed(&host, &agent).is_empty());
    let refused = host
        .execute(
            ToolCall::new("c", "create_plan", json!({"title": "x", "content": "y"})),
            &agent,
        )
        .await;
    assert!(
        matches!(refused, Err(HostError::NotAdvertised { .. })),
        "{refused:?}"
    );
    let plan = ctx(dir.path(), "t").mode(ThreadMode::Plan).build();
    assert_eq!(listed(&host, &plan), ["create_plan"]);
    let with_context = ctx(dir.path(), "t")
        .plan(PlanContext {
            plan_dir: dir.path().join(".kun/plans"),
            operation_id: "op-1".into(),
        })
        .build();
    assert_eq!(listed(&host, &with_context), ["create_plan"]);
}

#[tokio::test]
async fn writes_the_reserved_plan_file_and_replaces_it() {
    let host = plan_host();
    let dir = tempfile::tempdir().unwrap();
    let plan = || ctx(dir.path(), "t").mode(ThreadMode::Plan).build();
    let saved = call(
        &host,
        &plan(),
        "create_plan",
        json!({"title": "Ship the Parser!", "content": "1. tests\n2. code"}),
    )
    .await;
    assert!(!saved.is_error, "{:?}", saved.output);
    assert_eq!(saved.output["path"], ".kun/plans/ship-the-parser.md");
    assert_eq!(saved.output["replaced"], false);
    let written =
        std::fs::read_to_string(dir.path().join(".kun/plans/ship-the-parser.md")).unwrap();
    assert_eq!(written, "# Ship the Parser!\n\n1. tests\n2. code\n");
    assert_eq!(
        saved.model_text(),
        format!(
            "Saved the plan: .kun/plans/ship-the-parser.md ({} bytes).",
            written.len()
        )
    );

    let again = call(&host, &plan(), "create_plan", json!({"title": "t", "content": "# Own heading\nbody", "path": ".\\.kun//plans/./ship-the-parser.md"})).await;
    assert_eq!(again.output["replaced"], true, "{:?}", again.output);
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".kun/plans/ship-the-parser.md")).unwrap(),
        "# Own heading\nbody\n"
    );
    assert_eq!(files(dir.path()), [".kun/plans/ship-the-parser.md"]);
}

#[tokio::test]
async fn everything_else_is_refused_with_a_code_and_nothing_is_written() {
    let host = plan_host();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let plan = || ctx(dir.path(), "t").mode(ThreadMode::Plan).build();
    let cases = [
        (
            json!({"title": "t", "content": "c", "path": "../escape.md"}),
            "invalid_arguments",
        ),
        (
            json!({"title": "t", "content": "c", "path": ".kun/plans/../../src/x.md"}),
            "invalid_arguments",
        ),
        (
            json!({"title": "t", "content": "c", "path": "/etc/x.md"}),
            "invalid_arguments",
        ),
        (
            json!({"title": "t", "content": "c", "path": "src/x.md"}),
            "invalid_arguments",
        ),
        (
            json!({"title": "t", "content": "c", "path": ".kun/plans/sub/x.md"}),
            "invalid_arguments",
        ),
        (
            json!({"title": "t", "content": "c", "path": ".kun/plans/x.txt"}),
            "invalid_arguments",
        ),
        (
            json!({"title": "t", "content": "c", "path": ".kun/plans/.hidden.md"}),
            "invalid_arguments",
        ),
        (
            json!({"title": "t", "content": "c", "path": ".kun/config.toml"}),
            "invalid_arguments",
        ),
        (json!({"title": " ", "content": "c"}), "invalid_arguments"),
        (json!({"title": "t", "content": "  "}), "invalid_arguments"),
        (
            json!({"title": "t", "content": "x".repeat(600 * 1024)}),
            "invalid_arguments",
        ),
        (
            json!({"title": "t", "content": "c", "operation_id": "op-9"}),
            "invalid_arguments",
        ),
    ];
    for (args, code) in cases {
        let result = call(&host, &plan(), "create_plan", args.clone()).await;
        assert_eq!(
            result.error_code(),
            Some(code),
            "{args}: {:?}",
            result.output
        );
    }
    assert_eq!(
        files(dir.path()),
        Vec::<String>::new(),
        "nothing was written"
    );
}

#[tokio::test]
async fn the_operation_and_workspace_must_match_the_plan_context() {
    let host = plan_host();
    let dir = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let planning = |plan_dir: &Path| {
        ctx(dir.path(), "t")
            .plan(PlanContext {
                plan_dir: plan_dir.to_path_buf(),
                operation_id: "op-1".into(),
            })
            .build()
    };
    let ok = call(
        &host,
        &planning(&dir.path().join("plans")),
        "create_plan",
        json!({"title": "A", "content": "c", "operation_id": "op-1"}),
    )
    .await;
    assert_eq!(ok.output["path"], "plans/a.md", "{:?}", ok.output);
    let wrong_op = call(
        &host,
        &planning(&dir.path().join("plans")),
        "create_plan",
        json!({"title": "A", "content": "c", "operation_id": "op-2"}),
    )
    .await;
    assert_eq!(wrong_op.error_code(), Some("invalid_arguments"));
    let elsewhere = call(
        &host,
        &planning(other.path()),
        "create_plan",
        json!({"title": "A", "content": "c"}),
    )
    .await;
    assert_eq!(
        elsewhere.error_code(),
        Some("sandbox_write_blocked"),
        "{:?}",
        elsewhere.output
    );
    assert!(files(other.path()).is_empty());
}

#[tokio::test]
async fn links_planted_on_the_way_or_at_the_target_do_not_redirect_the_write() {
    let host = plan_host();
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let plan = || ctx(dir.path(), "t").mode(ThreadMode::Plan).build();

    // .kun -> outside: refused, nothing written outside.
    std::os::unix::fs::symlink(outside.path(), dir.path().join(".kun")).unwrap();
    let result = call(
        &host,
        &plan(),
        "create_plan",
        json!({"title": "a", "content": "c"}),
    )
    .await;
    assert_eq!(
        result.error_code(),
        Some("sandbox_write_blocked"),
        "{:?}",
        result.output
    );
    assert!(files(outside.path()).is_empty());
    std::fs::remove_file(dir.path().join(".kun")).unwrap();

    // .kun/plans/a.md -> outside/victim: the link is not followed.
    std::fs::create_dir_all(dir.path().join(".kun/plans")).unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join(".kun/plans/a.md")).unwrap();
    let result = call(
        &host,
        &plan(),
        "create_plan",
        json!({"title": "a", "content": "c"}),
    )
    .await;
    assert_eq!(
        result.error_code(),
        Some("sandbox_write_blocked"),
        "{:?}",
        result.output
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
}

#[tokio::test]
async fn a_read_only_sandbox_blocks_it_like_any_file_change() {
    let host = plan_host();
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path(), "t")
        .mode(ThreadMode::Plan)
        .sandbox(SandboxMode::ReadOnly)
        .build();
    let result = call(
        &host,
        &ctx,
        "create_plan",
        json!({"title": "a", "content": "c"}),
    )
    .await;
    assert_eq!(result.error_code(), Some("sandbox_read_only"));
}
