//! `delegate_task` end to end: a parent host with the built-in tools, the delegation
//! provider and a GUI-only stand-in for `computer_use`; a child host over the child registry
//! (built-in tools only, as composition builds it); the `openai` runner against a local
//! OpenAI-compatible server that scripts replies and records every request.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use async_trait::async_trait;
use kun_builtin_tools::{BuiltinOptions, BuiltinProvider};
use kun_delegation::test_server::{OpenAiTestServer, RecordedRequest, ServerReply};
use kun_delegation::{
    DelegationProvider, DelegationRuntime, DelegationSlots, OpenAiRunner, OpenAiSettings,
    ProfileSet,
};
use kun_ports::{
    ApprovalDecision, ApprovalGate, ApprovalPolicy, ApprovalRequest, ChildLimits, ClientSurface,
    ProviderKind, ProviderPolicy, Tool, ToolCall, ToolContext, ToolError, ToolHost,
    ToolHostContext, ToolProvider, ToolResult, ToolSpec,
};
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::{NoConfinement, WorkspaceSandbox};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A stand-in for `computer_use`: a GUI provider of the main registry only.
struct ComputerUse(Arc<dyn Tool>);

struct Screenshot(ToolSpec);

#[async_trait]
impl Tool for Screenshot {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn execute<'a>(&self, _: Value, _: ToolContext<'a>) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::ok(json!("screen")))
    }
}

impl ToolProvider for ComputerUse {
    fn id(&self) -> &str {
        "computer_use"
    }
    fn kind(&self) -> ProviderKind {
        ProviderKind::Gui
    }
    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::clone(&self.0)]
    }
}

struct World {
    ws: tempfile::TempDir,
    server: OpenAiTestServer,
    host: Arc<Host>,
}

struct Options {
    max_turns: u32,
    max_parallel: usize,
    timeout: Duration,
    api_key: Option<String>,
    base_url: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_turns: 6,
            max_parallel: 2,
            timeout: Duration::from_secs(20),
            api_key: None,
            base_url: None,
        }
    }
}

async fn world(replies: Vec<ServerReply>, repeat_last: bool, options: Options) -> World {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "alpha lives in src/alpha.rs\n").unwrap();
    let server = OpenAiTestServer::start(replies, repeat_last).await.unwrap();
    let sandbox = Arc::new(WorkspaceSandbox::default());
    let builtin = Arc::new(BuiltinProvider::new(BuiltinOptions::new(Arc::new(
        NoConfinement,
    ))));
    let child_registry = Arc::new(
        CapabilityRegistry::with_providers(
            CatalogFilters::new(sandbox.clone()),
            vec![builtin.clone() as Arc<dyn ToolProvider>],
        )
        .unwrap(),
    );
    let child_host: Arc<dyn ToolHost> = Arc::new(Host::builder(child_registry).build());
    let runner = OpenAiRunner::with_key(
        OpenAiSettings {
            base_url: options.base_url.unwrap_or_else(|| server.base_url()),
            model: "qwen2.5-coder:7b".into(),
            api_key_env: None,
            timeout: options.timeout,
        },
        options.api_key,
    )
    .unwrap();
    let runtime = DelegationRuntime {
        runner: Arc::new(runner),
        child_host,
        slots: DelegationSlots::new(options.max_parallel),
        limits: ChildLimits {
            max_turns: options.max_turns,
        },
    };
    let delegation = DelegationProvider::new(Arc::new(ProfileSet::builtin()), Some(runtime));
    let computer = ComputerUse(Arc::new(Screenshot(ToolSpec::new(
        "computer_use",
        "Drives the desktop.",
        json!({"type": "object"}),
    ))));
    let main = Arc::new(
        CapabilityRegistry::with_providers(
            CatalogFilters::new(sandbox),
            vec![
                builtin as Arc<dyn ToolProvider>,
                Arc::new(delegation),
                Arc::new(computer),
            ],
        )
        .unwrap(),
    );
    World {
        ws,
        server,
        host: Arc::new(Host::builder(main).build()),
    }
}

impl World {
    fn ctx(&self, turn: &str) -> ToolHostContext {
        ToolHostContext::builder("parent", turn)
            .workspace(self.ws.path())
            .surface(ClientSurface::Gui)
            .build()
    }

    async fn delegate(&self, ctx: &ToolHostContext, profile: &str) -> ToolResult {
        let call = ToolCall::new(
            "d1",
            "delegate_task",
            json!({"profile": profile, "task": "Find where alpha lives.", "context": "Start with notes.txt."}),
        );
        self.host.execute(call, ctx).await.unwrap()
    }

    fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }
}

#[tokio::test]
async fn the_tools_array_is_exactly_the_narrowed_child_catalog() {
    let w = world(vec![ServerReply::answer("done")], true, Options::default()).await;
    let ctx = w.ctx("t1");
    let parent: Vec<String> = w
        .host
        .list_tools(&ctx)
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert!(parent.contains(&"computer_use".to_owned()));
    assert!(parent.contains(&"delegate_task".to_owned()));

    let result = w.delegate(&ctx, "explore").await;
    assert!(!result.is_error, "{result:?}");
    let explore = w.requests()[0].tool_names();
    assert_eq!(explore, ["glob", "grep", "ls", "read", "repo_map"]);

    let result = w.delegate(&w.ctx("t2"), "general").await;
    assert!(!result.is_error);
    let general = w.requests()[1].tool_names();
    for present in ["bash", "edit", "write", "read"] {
        assert!(general.contains(&present.to_owned()), "{general:?}");
    }
    for absent in ["delegate_task", "computer_use"] {
        assert!(!general.contains(&absent.to_owned()), "{general:?}");
        assert!(!explore.contains(&absent.to_owned()));
    }
    // The schemas are the catalog's own.
    let read = w.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "read")
        .cloned()
        .unwrap();
    let spec = w
        .host
        .list_tools(&ctx)
        .into_iter()
        .find(|t| t.name() == "read")
        .unwrap();
    assert_eq!(read["function"]["parameters"], spec.spec().input_schema);
    // The first request: the profile's system prompt, the task and the context.
    let first = &w.requests()[0];
    assert!(
        first
            .first("system")
            .unwrap()
            .contains("explore a code base")
    );
    let user = first.first("user").unwrap();
    assert!(user.contains("Find where alpha lives.") && user.contains("Start with notes.txt."));
    assert_eq!(first.body["model"], "qwen2.5-coder:7b");
}

#[tokio::test]
async fn a_read_runs_and_its_result_comes_back_with_usage_for_the_parent() {
    let w = world(
        vec![
            ServerReply::calls(vec![("read", json!({"path": "notes.txt"}))]),
            ServerReply::answer("alpha is in src/alpha.rs"),
        ],
        false,
        Options::default(),
    )
    .await;
    let result = w.delegate(&w.ctx("t1"), "explore").await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.output["text"], "alpha is in src/alpha.rs");
    assert_eq!(
        result.output["usage"],
        json!({"turns": 2, "tool_calls": 1, "prompt_tokens": 20, "completion_tokens": 4})
    );
    assert!(
        result
            .model_text()
            .contains("2 model requests, 1 tool calls")
    );
    let results = w.requests()[1].tool_results();
    assert_eq!(results.len(), 1);
    assert!(
        results[0].contains("alpha lives in src/alpha.rs"),
        "{results:?}"
    );
}

#[tokio::test]
async fn a_write_from_a_read_only_child_is_refused_and_the_model_reads_why() {
    let w = world(
        vec![
            ServerReply::calls(vec![(
                "write",
                json!({"path": "pwned.txt", "content": "x"}),
            )]),
            ServerReply::answer("I could not write"),
        ],
        false,
        Options::default(),
    )
    .await;
    let result = w.delegate(&w.ctx("t1"), "explore").await;
    assert!(!result.is_error);
    assert!(
        !w.ws.path().join("pwned.txt").exists(),
        "nothing was written"
    );
    let refusal = &w.requests()[1].tool_results()[0];
    assert!(refusal.starts_with("error [refused]"), "{refusal}");
    assert!(refusal.contains("write"), "{refusal}");
}

#[tokio::test]
async fn a_looping_child_stops_at_max_turns_with_a_clear_result() {
    let w = world(
        vec![ServerReply::calls(vec![("ls", json!({}))])],
        true,
        Options {
            max_turns: 3,
            ..Options::default()
        },
    )
    .await;
    let result = w.delegate(&w.ctx("t1"), "explore").await;
    assert!(result.is_error);
    assert_eq!(result.output["code"], "delegation_max_turns");
    assert_eq!(result.output["usage"]["turns"], 3);
    assert_eq!(result.output["usage"]["tool_calls"], 2);
    assert!(result.model_text().contains("max_turns"));
    assert_eq!(w.requests().len(), 3);
}

#[tokio::test]
async fn an_endpoint_that_is_down_500_429_or_slow_gives_a_readable_error_result() {
    // Down: a port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let w = world(
        vec![],
        false,
        Options {
            base_url: Some(dead),
            ..Options::default()
        },
    )
    .await;
    let started = Instant::now();
    let result = w.delegate(&w.ctx("t1"), "explore").await;
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(result.is_error);
    assert_eq!(result.output["code"], "tool_execution_failed");
    assert!(
        result.model_text().contains("not reachable"),
        "{}",
        result.model_text()
    );

    let w = world(
        vec![ServerReply::status(500, "{\"error\":\"boom\"}")],
        false,
        Options::default(),
    )
    .await;
    let result = w.delegate(&w.ctx("t1"), "explore").await;
    assert_eq!(result.output["code"], "tool_execution_failed");
    assert!(
        result.model_text().contains("500"),
        "{}",
        result.model_text()
    );
    assert!(result.model_text().contains("boom"));

    let w = world(
        vec![ServerReply::Status {
            status: 429,
            body: "slow down".into(),
            retry_after: Some("7".into()),
        }],
        false,
        Options::default(),
    )
    .await;
    let result = w.delegate(&w.ctx("t1"), "explore").await;
    assert_eq!(result.output["code"], "rate_limited");
    assert!(
        result.model_text().contains("retry after 7 s"),
        "{}",
        result.model_text()
    );

    let w = world(
        vec![ServerReply::Stall(Duration::from_secs(30))],
        false,
        Options {
            timeout: Duration::from_secs(1),
            ..Options::default()
        },
    )
    .await;
    let started = Instant::now();
    let result = w.delegate(&w.ctx("t1"), "explore").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "never a hung turn"
    );
    assert_eq!(result.output["code"], "tool_timeout");
}

#[tokio::test]
async fn two_delegations_with_max_parallel_one_run_one_after_the_other() {
    async fn both(max_parallel: usize) -> Duration {
        let w = world(
            vec![ServerReply::Stall(Duration::from_millis(600))],
            true,
            Options {
                max_parallel,
                ..Options::default()
            },
        )
        .await;
        let (a, b) = (w.ctx("a"), w.ctx("b"));
        let started = Instant::now();
        let (ra, rb) = tokio::join!(w.delegate(&a, "explore"), w.delegate(&b, "explore"));
        assert_eq!(ra.output["text"], "late");
        assert_eq!(rb.output["text"], "late");
        started.elapsed()
    }
    let serial = both(1).await;
    assert!(serial >= Duration::from_millis(1200), "{serial:?}");
    let parallel = both(2).await;
    assert!(parallel < Duration::from_millis(1150), "{parallel:?}");
}

#[tokio::test]
async fn the_key_is_sent_as_a_bearer_token() {
    let w = world(
        vec![ServerReply::answer("ok")],
        false,
        Options {
            api_key: Some("sk-test-123".into()),
            ..Options::default()
        },
    )
    .await;
    let result = w.delegate(&w.ctx("t1"), "explore").await;
    assert!(!result.is_error);
    assert_eq!(
        w.requests()[0].authorization.as_deref(),
        Some("Bearer sk-test-123")
    );
    assert_eq!(w.requests()[0].path, "/v1/chat/completions");
}

/// Records what the parent's approver is asked, and allows.
#[derive(Default)]
struct Recording(Mutex<Vec<ApprovalRequest>>);

#[async_trait]
impl ApprovalGate for Recording {
    async fn request_approval(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.0.lock().unwrap().push(request.clone());
        ApprovalDecision::Allow
    }
}

#[tokio::test]
async fn a_childs_approvals_go_to_the_parents_approver_naming_the_profile() {
    let w = world(
        vec![
            ServerReply::calls(vec![(
                "write",
                json!({"path": "out.txt", "content": "hi\n"}),
            )]),
            ServerReply::answer("wrote it"),
        ],
        false,
        Options::default(),
    )
    .await;
    let approver = Arc::new(Recording::default());
    let mut ctx = w.ctx("t1");
    ctx.approval = ApprovalPolicy::OnRequest;
    ctx.approver = Some(approver.clone());
    let result = w.delegate(&ctx, "general").await;
    assert!(!result.is_error, "{result:?}");
    let asked = approver.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool_name, "write");
    assert_eq!(asked[0].delegated_agent.as_deref(), Some("general"));
    assert_eq!(
        std::fs::read_to_string(w.ws.path().join("out.txt")).unwrap(),
        "hi\n"
    );

    // Without an approver the child's write is denied (fail closed), and nothing is written.
    let w = world(
        vec![
            ServerReply::calls(vec![(
                "write",
                json!({"path": "out.txt", "content": "hi\n"}),
            )]),
            ServerReply::answer("denied"),
        ],
        false,
        Options::default(),
    )
    .await;
    let result = w.delegate(&w.ctx("t1"), "general").await;
    assert!(!result.is_error);
    assert!(w.requests()[1].tool_results()[0].contains("approval_denied"));
    assert!(!w.ws.path().join("out.txt").exists());
}
