//! The memory tools through the real host and sandbox, on a real SQLite file.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use kun_ports::{MAX_MEMORY_BYTES, SandboxMode, ThreadMode};
use serde_json::json;
use support::{Rig, workspace};

const WRITE: SandboxMode = SandboxMode::WorkspaceWrite;

#[tokio::test]
async fn create_search_update_delete_round_trip() {
    let rig = Rig::new();
    let ws = workspace(None);
    let created = rig
        .call(ws.path(), WRITE, "memory_create", json!({"content": "Run migrations with `make migrate`", "scope": "workspace", "tags": ["DB"]}))
        .await;
    assert!(!created.is_error, "{created:?}");
    let id = created.output["id"].as_str().unwrap().to_owned();
    assert_eq!(created.output["tags"], json!(["db"]));
    assert_eq!(
        created.model_text(),
        format!("created {id} (workspace): Run migrations with `make migrate`")
    );

    let found = rig
        .call(
            ws.path(),
            WRITE,
            "memory_search",
            json!({"query": "migrat"}),
        )
        .await;
    assert_eq!(
        found.model_text(),
        format!("- [{id}] (workspace) Run migrations with `make migrate`")
    );
    assert_eq!(found.output["memories"][0]["id"], id);

    let updated = rig
        .call(
            ws.path(),
            WRITE,
            "memory_update",
            json!({"id": id, "content": "Run migrations with `just migrate`"}),
        )
        .await;
    assert!(!updated.is_error, "{updated:?}");
    assert_eq!(updated.output["tags"], json!(["db"]), "tags kept");
    let found = rig
        .call(ws.path(), WRITE, "memory_search", json!({"query": "just"}))
        .await;
    assert_eq!(found.output["memories"].as_array().unwrap().len(), 1);

    let deleted = rig
        .call(ws.path(), WRITE, "memory_delete", json!({"id": id}))
        .await;
    assert_eq!(deleted.model_text(), format!("deleted {id}"));
    let again = rig
        .call(ws.path(), WRITE, "memory_delete", json!({"id": id}))
        .await;
    assert_eq!(again.error_code(), Some("invalid_arguments"), "{again:?}");
    let none = rig
        .call(
            ws.path(),
            WRITE,
            "memory_search",
            json!({"query": "migrations"}),
        )
        .await;
    assert_eq!(none.model_text(), "no memories match `migrations`");
}

#[tokio::test]
async fn content_over_16_kib_is_invalid_arguments_and_stores_nothing() {
    let rig = Rig::new();
    let ws = workspace(None);
    // 16,385 bytes of UTF-8 (multi-byte characters count as bytes, not characters).
    let content = "日".repeat(MAX_MEMORY_BYTES / 3) + "xy";
    assert_eq!(content.len(), MAX_MEMORY_BYTES + 1);
    let result = rig
        .call(
            ws.path(),
            WRITE,
            "memory_create",
            json!({"content": content, "scope": "user"}),
        )
        .await;
    assert_eq!(result.error_code(), Some("invalid_arguments"), "{result:?}");
    assert!(
        result.model_text().contains("16384"),
        "{}",
        result.model_text()
    );
    assert_eq!(rig.store.status().unwrap().memories, 0, "nothing stored");

    let exact = "a".repeat(MAX_MEMORY_BYTES);
    let ok = rig
        .call(
            ws.path(),
            WRITE,
            "memory_create",
            json!({"content": exact, "scope": "user"}),
        )
        .await;
    assert!(
        !ok.is_error,
        "exactly 16 KiB is accepted: {:?}",
        ok.error_message()
    );
}

#[tokio::test]
async fn bad_arguments_are_named() {
    let rig = Rig::new();
    let ws = workspace(None);
    for (tool, args, needle) in [
        (
            "memory_create",
            json!({"content": "x", "scope": "team"}),
            "unknown variant",
        ),
        ("memory_create", json!({"content": "x"}), "scope"),
        ("memory_update", json!({"id": "m1"}), "nothing to change"),
        (
            "memory_update",
            json!({"id": "nope", "content": "x"}),
            "no memory `nope`",
        ),
        (
            "memory_search",
            json!({"query": "x", "limit": 0}),
            "between 1 and 50",
        ),
        ("memory_search", json!({"query": "  ** "}), "no words"),
    ] {
        let result = rig.call(ws.path(), WRITE, tool, args.clone()).await;
        assert_eq!(
            result.error_code(),
            Some("invalid_arguments"),
            "{tool} {args}: {result:?}"
        );
        assert!(
            result.model_text().contains(needle),
            "{tool} {args}: {}",
            result.model_text()
        );
    }
}

#[tokio::test]
async fn chinese_japanese_and_english_prefix_search() {
    let rig = Rig::new();
    let ws = workspace(None);
    for content in [
        "发布前要在预发环境验证支付流程",
        "ログは必ず構造化して出力すること",
        "Benchmarks run nightly on the dedicated runner",
    ] {
        let r = rig
            .call(
                ws.path(),
                WRITE,
                "memory_create",
                json!({"content": content, "scope": "project"}),
            )
            .await;
        assert!(!r.is_error, "{r:?}");
    }
    for (query, expected) in [
        ("支付流程", "发布前要在预发环境验证支付流程"),
        ("预发", "发布前要在预发环境验证支付流程"),
        ("構造化", "ログは必ず構造化して出力すること"),
        ("ログ", "ログは必ず構造化して出力すること"),
        (
            "bench night",
            "Benchmarks run nightly on the dedicated runner",
        ),
    ] {
        let found = rig
            .call(ws.path(), WRITE, "memory_search", json!({"query": query}))
            .await;
        let memories = found.output["memories"].as_array().unwrap();
        assert_eq!(memories.len(), 1, "{query}: {}", found.model_text());
        assert_eq!(memories[0]["content"], expected, "{query}");
    }
}

#[tokio::test]
async fn workspaces_are_isolated_and_clones_share_the_project() {
    let rig = Rig::new();
    let first = workspace(Some("git@github.com:acme/app.git"));
    let clone = workspace(Some("https://github.com/acme/app"));
    let stranger = workspace(Some("https://github.com/other/thing.git"));
    for (scope, content) in [
        ("workspace", "first checkout keeps its venv in .venv-first"),
        ("project", "app releases are tagged vX.Y.Z"),
        ("user", "user likes terse answers"),
    ] {
        let r = rig
            .call(
                first.path(),
                WRITE,
                "memory_create",
                json!({"content": content, "scope": scope}),
            )
            .await;
        assert!(!r.is_error, "{r:?}");
    }
    let seen = |result: kun_ports::ToolResult| -> Vec<String> {
        let mut scopes: Vec<String> = result.output["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["scope"].as_str().unwrap().to_owned())
            .collect();
        scopes.sort();
        scopes
    };
    let query = json!({"query": "venv releases terse"});
    assert_eq!(
        seen(
            rig.call(first.path(), WRITE, "memory_search", query.clone())
                .await
        ),
        ["project", "user", "workspace"]
    );
    assert_eq!(
        seen(
            rig.call(clone.path(), WRITE, "memory_search", query.clone())
                .await
        ),
        ["project", "user"]
    );
    assert_eq!(
        seen(
            rig.call(stranger.path(), WRITE, "memory_search", query.clone())
                .await
        ),
        ["user"]
    );

    // The stranger cannot change or delete the first workspace's memory by guessing its id.
    let id = rig
        .call(
            first.path(),
            WRITE,
            "memory_search",
            json!({"query": "venv"}),
        )
        .await
        .output["memories"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = rig
        .call(
            stranger.path(),
            WRITE,
            "memory_update",
            json!({"id": id, "content": "pwned"}),
        )
        .await;
    assert_eq!(r.error_code(), Some("invalid_arguments"), "{r:?}");
    let r = rig
        .call(stranger.path(), WRITE, "memory_delete", json!({"id": id}))
        .await;
    assert_eq!(r.error_code(), Some("invalid_arguments"), "{r:?}");
    let still = rig
        .call(
            first.path(),
            WRITE,
            "memory_search",
            json!({"query": "venv"}),
        )
        .await;
    assert_eq!(
        still.output["memories"][0]["content"],
        "first checkout keeps its venv in .venv-first"
    );

    // A scope filter narrows.
    let only_user = rig
        .call(
            first.path(),
            WRITE,
            "memory_search",
            json!({"query": "venv releases terse", "scope": "user"}),
        )
        .await;
    assert_eq!(seen(only_user), ["user"]);
}

#[tokio::test]
async fn writes_are_file_changes_for_the_sandbox_and_plan_mode() {
    let rig = Rig::new();
    let ws = workspace(None);
    let refused = rig
        .call(
            ws.path(),
            SandboxMode::ReadOnly,
            "memory_create",
            json!({"content": "x", "scope": "user"}),
        )
        .await;
    assert_eq!(
        refused.error_code(),
        Some("sandbox_read_only"),
        "{refused:?}"
    );
    assert_eq!(rig.store.status().unwrap().memories, 0);
    let search = rig
        .call(
            ws.path(),
            SandboxMode::ReadOnly,
            "memory_search",
            json!({"query": "x"}),
        )
        .await;
    assert!(!search.is_error, "search reads only: {search:?}");

    let mut agent = rig.listed(ws.path(), WRITE, ThreadMode::Agent);
    agent.sort();
    assert_eq!(
        agent,
        [
            "memory_create",
            "memory_delete",
            "memory_search",
            "memory_update"
        ]
    );
    assert_eq!(
        rig.listed(ws.path(), WRITE, ThreadMode::Plan),
        ["memory_search"],
        "plan mode lists the read-only tool only"
    );
    let read_only = rig.listed(ws.path(), SandboxMode::ReadOnly, ThreadMode::Agent);
    assert_eq!(
        read_only,
        ["memory_search"],
        "read-only sandbox hides the writes"
    );
}

#[tokio::test]
async fn specs_follow_the_table() {
    let rig = Rig::new();
    let ws = workspace(None);
    let ctx = support::context(ws.path(), WRITE, ThreadMode::Agent);
    use kun_ports::ToolHost as _;
    for tool in rig.host.list_tools(&ctx) {
        let spec = tool.spec();
        let expected = if spec.name == "memory_search" {
            ("tool_call", "auto", "read-only")
        } else {
            ("file_change", "on-request", "unknown")
        };
        assert_eq!(
            (
                spec.kind.as_str(),
                spec.policy.as_str(),
                spec.side_effect.as_str()
            ),
            expected,
            "{}",
            spec.name
        );
        assert_eq!(tool.provider_kind(), kun_ports::ProviderKind::Memory);
        assert!(
            spec.output_schema.is_some(),
            "{} declares its output",
            spec.name
        );
    }
}
