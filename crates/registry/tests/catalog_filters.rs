//! The catalog filters (SPEC §3), as tables: each filter, in order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use kun_ports::{
    ClientSurface, ConfinementTier, HostError, MockSandboxPolicy, NotAdvertisedReason, PlanContext,
    ProviderKind, ProviderPolicy, SandboxBlock, SandboxMode, SandboxVerdict, ThreadMode,
    ToolHostContext, ToolKind, ToolPolicy, ToolRole,
};
use kun_registry::{CapabilityRegistry, CatalogFilters, PlanWhitelist};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::sandbox::SpecSandbox;
use support::{TestProvider, TestTool, names};

fn only_in_plan(ctx: &ToolHostContext) -> bool {
    ctx.is_plan_context()
}

fn providers() -> Vec<Arc<dyn kun_ports::ToolProvider>> {
    vec![
        TestProvider::builtin(vec![
            TestTool::new("read").read_only().arc(),
            TestTool::new("grep").arc(),
            TestTool::new("edit")
                .kind(ToolKind::FileChange)
                .policy(ToolPolicy::OnRequest)
                .arc(),
            TestTool::new("bash")
                .kind(ToolKind::CommandExecution)
                .policy(ToolPolicy::OnRequest)
                .arc(),
            TestTool::new("find").read_only().hidden().arc(),
            TestTool::new("user_input").user_interaction().arc(),
            TestTool::new("create_plan")
                .kind(ToolKind::FileChange)
                .role(ToolRole::PlanWriter)
                .advertise(only_in_plan)
                .arc(),
            TestTool::new("lint_check").read_only().arc(),
        ])
        .arc(),
        TestProvider::new(
            "web",
            ProviderKind::Web,
            vec![
                TestTool::new("web_fetch")
                    .policy(ToolPolicy::Untrusted)
                    .arc(),
            ],
        )
        .arc(),
        TestProvider::new(
            "gui",
            ProviderKind::Gui,
            vec![TestTool::new("todo_write").arc()],
        )
        .arc(),
        TestProvider::new(
            "off",
            ProviderKind::Mcp,
            vec![TestTool::new("mcp_off_x").arc()],
        )
        .with_policy(ProviderPolicy::disabled("turned off in config"))
        .arc(),
        TestProvider::new(
            "broken",
            ProviderKind::Mcp,
            vec![TestTool::new("mcp_broken_x").arc()],
        )
        .with_policy(ProviderPolicy::unavailable("server did not start"))
        .arc(),
        TestProvider::new(
            "mcp:srv",
            ProviderKind::Mcp,
            vec![
                TestTool::new("mcp_srv_run")
                    .kind(ToolKind::CommandExecution)
                    .policy(ToolPolicy::OnRequest)
                    .arc(),
            ],
        )
        .arc(),
    ]
}

fn registry_with(sandbox: SpecSandbox, whitelist: PlanWhitelist) -> CapabilityRegistry {
    let filters = CatalogFilters::new(Arc::new(sandbox)).with_plan_whitelist(whitelist);
    CapabilityRegistry::with_providers(filters, providers()).unwrap()
}

fn base() -> kun_ports::ToolHostContextBuilder {
    ToolHostContext::builder("t", "u").workspace("/ws")
}

const AGENT_DEFAULT: &[&str] = &[
    "bash",
    "edit",
    "grep",
    "lint_check",
    "mcp_srv_run",
    "read",
    "user_input",
    "web_fetch",
];

#[test]
fn catalog_filter_table() {
    let plan = || base().mode(ThreadMode::Plan);
    let cases: Vec<(&str, ToolHostContext, &[&str])> = vec![
        // Filter 1: provider switches, lists and the GUI surface.
        ("defaults", base().build(), AGENT_DEFAULT),
        (
            "gui surface lists gui providers",
            base().surface(ClientSurface::Gui).build(),
            &[
                "bash",
                "edit",
                "grep",
                "lint_check",
                "mcp_srv_run",
                "read",
                "todo_write",
                "user_input",
                "web_fetch",
            ],
        ),
        (
            "blocked provider",
            base().blocked_providers(["web", "mcp:srv"]).build(),
            &["bash", "edit", "grep", "lint_check", "read", "user_input"],
        ),
        (
            "allowed providers",
            base().allowed_providers(["web", "gui", "off"]).build(),
            &["web_fetch"],
        ),
        (
            "blocked provider beats allowed provider",
            base()
                .allowed_providers(["web"])
                .blocked_providers(["web"])
                .build(),
            &[],
        ),
        (
            "empty provider allow-list admits nothing",
            base().allowed_providers(Vec::<String>::new()).build(),
            &[],
        ),
        // Filter 2: tool name lists.
        (
            "blocked tools",
            base().blocked_tools(["bash", "web_fetch"]).build(),
            &[
                "edit",
                "grep",
                "lint_check",
                "mcp_srv_run",
                "read",
                "user_input",
            ],
        ),
        (
            "allow-list shrinks, never adds, and deny wins",
            base()
                .allowed_tools(["read", "bash", "todo_write", "find", "mcp_off_x"])
                .blocked_tools(["bash"])
                .build(),
            &["read"],
        ),
        // Filter 3: plan whitelist (default).
        (
            "plan mode lists the default whitelist and read-only tools",
            plan().build(),
            &["create_plan", "grep", "lint_check", "read", "user_input"],
        ),
        (
            "a plan context plans even in agent mode",
            base()
                .plan(PlanContext {
                    plan_dir: "/ws/.kun/plans".into(),
                    operation_id: "op".into(),
                })
                .build(),
            &["create_plan", "grep", "lint_check", "read", "user_input"],
        ),
        (
            "plan mode still applies the lists",
            plan().blocked_tools(["grep"]).build(),
            &["create_plan", "lint_check", "read", "user_input"],
        ),
        // Filter 4: sandbox advertisement.
        (
            "read-only sandbox hides file changes and commands",
            base().sandbox(SandboxMode::ReadOnly).build(),
            &["grep", "lint_check", "read", "user_input", "web_fetch"],
        ),
        (
            "external sandbox hides file changes and commands",
            base().sandbox(SandboxMode::ExternalSandbox).build(),
            &["grep", "lint_check", "read", "user_input", "web_fetch"],
        ),
        (
            "danger-full-access lists everything usable",
            base().sandbox(SandboxMode::DangerFullAccess).build(),
            AGENT_DEFAULT,
        ),
    ];
    let registry = registry_with(SpecSandbox::confined(), PlanWhitelist::default());
    for (label, ctx, expected) in cases {
        assert_eq!(names(&registry.list_tools(&ctx)), expected, "{label}");
    }
}

#[test]
fn configured_plan_whitelist_replaces_the_default_names() {
    let registry = registry_with(
        SpecSandbox::confined(),
        PlanWhitelist::new(["read", "web_fetch"]),
    );
    let ctx = base().mode(ThreadMode::Plan).build();
    // grep and user_input are no longer whitelisted; read-only tools and the plan writer
    // (by its role, not its name) still are.
    assert_eq!(
        names(&registry.list_tools(&ctx)),
        ["create_plan", "lint_check", "read", "web_fetch"]
    );
    for name in ["create_plan", "read"] {
        assert!(registry.resolve(name, &ctx).is_ok(), "{name}");
    }
    assert!(registry.resolve("grep", &ctx).is_err());
}

#[test]
fn commands_that_need_approval_are_still_listed() {
    // Unconfined workspace-write: commands are ApprovalRequired, which is listed.
    let registry = registry_with(SpecSandbox::unconfined(), PlanWhitelist::default());
    let listed = names(&registry.list_tools(&base().build()));
    assert!(listed.contains(&"bash".to_owned()), "{listed:?}");
    assert!(listed.contains(&"mcp_srv_run".to_owned()), "{listed:?}");
}

#[test]
fn user_interaction_tools_are_exempt_from_the_sandbox() {
    let mut sandbox = MockSandboxPolicy::new();
    sandbox.expect_check_tool().returning(|name, _, _| {
        SandboxVerdict::Blocked(SandboxBlock {
            code: kun_ports::ErrorCode::SandboxCommandBlocked,
            message: format!("{name} blocked"),
        })
    });
    sandbox
        .expect_confinement_tier()
        .return_const(ConfinementTier::None);
    let registry =
        CapabilityRegistry::with_providers(CatalogFilters::new(Arc::new(sandbox)), providers())
            .unwrap();
    assert_eq!(names(&registry.list_tools(&base().build())), ["user_input"]);
}

#[test]
fn hidden_tools_are_never_listed_but_resolve() {
    let registry = registry_with(SpecSandbox::confined(), PlanWhitelist::default());
    for ctx in [
        base().build(),
        base().allowed_tools(["find"]).build(),
        base().mode(ThreadMode::Plan).build(),
    ] {
        assert!(!names(&registry.list_tools(&ctx)).contains(&"find".to_owned()));
    }
    assert_eq!(
        registry.resolve("find", &base().build()).unwrap().name(),
        "find"
    );
}

static ASKED: AtomicUsize = AtomicUsize::new(0);

fn counting_advertise(_: &ToolHostContext) -> bool {
    ASKED.fetch_add(1, Ordering::SeqCst);
    true
}

#[test]
fn should_advertise_runs_last_and_only_for_survivors() {
    let registry = CapabilityRegistry::with_providers(
        support::filters(),
        vec![
            TestProvider::builtin(vec![
                TestTool::new("asked").advertise(counting_advertise).arc(),
            ])
            .arc(),
        ],
    )
    .unwrap();
    let refusals = [
        base().blocked_providers(["builtin"]).build(),
        base().blocked_tools(["asked"]).build(),
        base().allowed_tools(["other"]).build(),
        base().mode(ThreadMode::Plan).build(),
    ];
    for ctx in &refusals {
        assert!(registry.list_tools(ctx).is_empty());
    }
    assert_eq!(
        ASKED.load(Ordering::SeqCst),
        0,
        "refused tools are not asked"
    );
    assert_eq!(names(&registry.list_tools(&base().build())), ["asked"]);
    assert_eq!(ASKED.load(Ordering::SeqCst), 1);
}

#[test]
fn provider_policy_is_read_at_listing_time() {
    let provider = Arc::new(TestProvider::new(
        "web",
        ProviderKind::Web,
        vec![TestTool::new("web_fetch").arc()],
    ));
    let registry = CapabilityRegistry::with_providers(
        support::filters(),
        vec![Arc::clone(&provider) as Arc<dyn kun_ports::ToolProvider>],
    )
    .unwrap();
    assert_eq!(names(&registry.list_tools(&base().build())), ["web_fetch"]);
    *provider.policy.lock().unwrap() = ProviderPolicy::unavailable("no API key");
    assert!(registry.list_tools(&base().build()).is_empty());
}

#[test]
fn resolve_table() {
    let registry = registry_with(SpecSandbox::confined(), PlanWhitelist::default());
    let not = |name: &str, reason| {
        Err::<(), _>(HostError::NotAdvertised {
            name: name.into(),
            reason,
        })
    };
    let cases: Vec<(&str, &str, ToolHostContext, Result<(), HostError>)> = vec![
        ("listed tool", "read", base().build(), Ok(())),
        (
            "unknown",
            "nope",
            base().build(),
            Err(HostError::UnknownTool {
                name: "nope".into(),
            }),
        ),
        (
            "disabled provider",
            "mcp_off_x",
            base().build(),
            not("mcp_off_x", NotAdvertisedReason::Provider),
        ),
        (
            "unavailable provider",
            "mcp_broken_x",
            base().build(),
            not("mcp_broken_x", NotAdvertisedReason::Provider),
        ),
        (
            "gui provider off a gui surface",
            "todo_write",
            base().build(),
            not("todo_write", NotAdvertisedReason::Provider),
        ),
        (
            "blocked name",
            "grep",
            base().blocked_tools(["grep"]).build(),
            not("grep", NotAdvertisedReason::ToolPolicy),
        ),
        (
            "outside the allow-list",
            "grep",
            base().allowed_tools(["read"]).build(),
            not("grep", NotAdvertisedReason::ToolPolicy),
        ),
        (
            "plan mode",
            "edit",
            base().mode(ThreadMode::Plan).build(),
            not("edit", NotAdvertisedReason::ToolPolicy),
        ),
        (
            "should_advertise says no",
            "create_plan",
            base().build(),
            not("create_plan", NotAdvertisedReason::Context),
        ),
        // The sandbox is not a resolve filter: the pipeline answers it with an error result.
        (
            "sandbox-blocked still resolves",
            "edit",
            base().sandbox(SandboxMode::ReadOnly).build(),
            Ok(()),
        ),
    ];
    for (label, name, ctx, expected) in cases {
        let got = registry.resolve(name, &ctx).map(|_| ());
        assert_eq!(got, expected, "{label}");
    }

    let snapshot = registry.snapshot();
    let wrong = registry
        .filters()
        .resolve(&snapshot, "read", Some("web"), &base().build())
        .map(|_| ());
    assert_eq!(wrong, not("read", NotAdvertisedReason::WrongProvider));
    let right = registry
        .filters()
        .resolve(&snapshot, "read", Some("builtin"), &base().build());
    assert!(right.is_ok());
}
