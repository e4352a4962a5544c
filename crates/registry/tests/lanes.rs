//! Dispatch lanes: classification and batching (SPEC §3, upstream §20).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_ports::{ApprovalPolicy, ProviderKind, ToolCall, ToolKind};
use kun_registry::{CapabilityRegistry, DispatchBatch, DispatchLanes, Lane};
use serde_json::json;
use support::{TestProvider, TestTool, filters};

fn registry() -> CapabilityRegistry {
    CapabilityRegistry::with_providers(
        filters(),
        vec![
            TestProvider::builtin(vec![
                TestTool::new("read").arc(),
                TestTool::new("grep").arc(),
                TestTool::new("glob").arc(),
                TestTool::new("find").hidden().arc(),
                TestTool::new("ls").arc(),
                TestTool::new("edit").kind(ToolKind::FileChange).arc(),
                TestTool::new("bash").kind(ToolKind::CommandExecution).arc(),
            ])
            .arc(),
            TestProvider::new(
                "delegation",
                ProviderKind::Delegation,
                vec![
                    TestTool::new("delegate_task").arc(),
                    TestTool::new("fast_context").arc(),
                ],
            )
            .arc(),
            // An MCP tool: never read-only, whatever its name.
            TestProvider::new(
                "mcp:fs",
                ProviderKind::Mcp,
                vec![TestTool::new("repo_map").arc()],
            )
            .arc(),
        ],
    )
    .unwrap()
}

fn registry_with_mcp_read() -> CapabilityRegistry {
    CapabilityRegistry::with_providers(
        filters(),
        vec![
            TestProvider::new(
                "mcp:fs",
                ProviderKind::Mcp,
                vec![TestTool::new("read").arc()],
            )
            .arc(),
            TestProvider::new(
                "ext",
                ProviderKind::Extension,
                vec![TestTool::new("delegate_task").arc()],
            )
            .arc(),
        ],
    )
    .unwrap()
}

fn call(name: &str) -> ToolCall {
    ToolCall::new(format!("c-{name}"), name, json!({}))
}

#[test]
fn classification_table() {
    let registry = registry();
    let snapshot = registry.snapshot();
    let auto = DispatchLanes::new(&snapshot, ApprovalPolicy::Auto);
    let cases = [
        (call("read"), Lane::ReadOnly),
        (call("grep"), Lane::ReadOnly),
        (call("glob"), Lane::ReadOnly),
        (call("find"), Lane::ReadOnly),
        (call("ls"), Lane::ReadOnly),
        (call("edit"), Lane::Serial),
        (call("bash"), Lane::Serial),
        (call("repo_map"), Lane::Serial),
        (call("delegate_task"), Lane::Delegation),
        (call("fast_context"), Lane::Serial),
        (call("unknown"), Lane::Serial),
        (
            call("read").with_claimed_kind(ToolKind::CommandExecution),
            Lane::Serial,
        ),
        (
            call("read").with_claimed_kind(ToolKind::ToolCall),
            Lane::ReadOnly,
        ),
    ];
    for (c, lane) in &cases {
        assert_eq!(auto.classify(c), *lane, "{} {:?}", c.tool_name, c.tool_kind);
    }

    for policy in [
        ApprovalPolicy::OnRequest,
        ApprovalPolicy::Suggest,
        ApprovalPolicy::Auto,
    ] {
        let lanes = DispatchLanes::new(&snapshot, policy);
        assert_eq!(lanes.classify(&call("read")), Lane::ReadOnly, "{policy}");
        assert_eq!(
            lanes.classify(&call("delegate_task")),
            Lane::Delegation,
            "{policy}"
        );
    }
    for policy in [
        ApprovalPolicy::Always,
        ApprovalPolicy::Untrusted,
        ApprovalPolicy::Never,
    ] {
        let lanes = DispatchLanes::new(&snapshot, policy);
        assert_eq!(lanes.classify(&call("read")), Lane::Serial, "{policy}");
        assert_eq!(
            lanes.classify(&call("delegate_task")),
            Lane::Serial,
            "{policy}"
        );
    }
}

#[test]
fn provider_kind_comes_from_the_registry_not_the_name() {
    let registry = registry_with_mcp_read();
    let snapshot = registry.snapshot();
    let lanes = DispatchLanes::new(&snapshot, ApprovalPolicy::Auto);
    assert_eq!(lanes.classify(&call("read")), Lane::Serial, "MCP read");
    assert_eq!(
        lanes.classify(&call("delegate_task")),
        Lane::Serial,
        "non-delegation provider"
    );
}

#[test]
fn batching_never_mixes_lanes_and_caps_read_only() {
    let registry = registry();
    let snapshot = registry.snapshot();
    let lanes = DispatchLanes::new(&snapshot, ApprovalPolicy::Auto);
    let calls: Vec<ToolCall> = [
        "read",
        "grep",
        "glob",
        "ls",
        "find", // 5 read-only: 3 + 2
        "edit", // serial
        "delegate_task",
        "delegate_task",
        "delegate_task", // one delegation batch
        "read",          // read-only
        "bash",
        "bash", // two serial batches
    ]
    .into_iter()
    .map(call)
    .collect();
    let batch = |lane, start, end| DispatchBatch {
        lane,
        calls: start..end,
    };
    assert_eq!(
        lanes.batches(&calls),
        vec![
            batch(Lane::ReadOnly, 0, 3),
            batch(Lane::ReadOnly, 3, 5),
            batch(Lane::Serial, 5, 6),
            batch(Lane::Delegation, 6, 9),
            batch(Lane::ReadOnly, 9, 10),
            batch(Lane::Serial, 10, 11),
            batch(Lane::Serial, 11, 12),
        ]
    );

    let wide = lanes.with_max_read_only_batch(10);
    assert_eq!(wide.batch_at(&calls, 0), Some(batch(Lane::ReadOnly, 0, 5)));
    let narrow = lanes.with_max_read_only_batch(0);
    assert_eq!(
        narrow.batch_at(&calls, 0),
        Some(batch(Lane::ReadOnly, 0, 1)),
        "cap is at least 1"
    );
    assert_eq!(lanes.batch_at(&calls, calls.len()), None);
    assert!(lanes.batches(&[]).is_empty());
}
