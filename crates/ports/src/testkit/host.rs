//! Contract suites for [`ToolHost`] and [`ToolProvider`].
//!
//! [`tool_host_contract`] builds hosts from providers it defines itself and checks:
//!
//! | rule | expected |
//! |---|---|
//! | listing | sorted by name (byte order), hidden tools left out |
//! | unknown tool | `Err(UnknownTool)` |
//! | aborted turn | `Err(Aborted)`, nothing runs |
//! | tool policy `never` | `Err(DisabledByPolicy)`, nothing runs |
//! | a listed `auto` tool | runs once and returns its output |
//! | `file_change` under the read-only sandbox | result with code `sandbox_read_only`, nothing runs |
//! | a tool that panics | error result `tool_execution_failed`, not a panic |
//!
//! The host must use a sandbox policy that implements SPEC §5's table.
//!
//! [`tool_provider_contract`] checks one provider: a non-empty id, unique tool names that
//! model APIs accept (`^[a-zA-Z0-9_-]{1,64}$`), object input schemas, a stable `tools()`, and
//! a reason whenever the provider is not usable.

use crate::{
    ApprovalPolicy, ErrorCode, HostError, ProviderKind, ProviderPolicy, SandboxMode, Tool,
    ToolCall, ToolContext, ToolError, ToolHost, ToolHostContext, ToolKind, ToolPolicy,
    ToolProvider, ToolResult, ToolSpec,
};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What a suite tool does.
#[derive(Debug, Clone, Copy)]
enum Act {
    /// Returns `{"echo": <arguments>, "tool": <name>}`.
    Echo,
    /// Panics.
    Panic,
}

/// A tool defined by the suite, counting its runs.
struct SuiteTool {
    spec: ToolSpec,
    act: Act,
    runs: Arc<AtomicUsize>,
}

#[async_trait]
impl Tool for SuiteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        _ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        match self.act {
            Act::Echo => Ok(ToolResult::ok(
                json!({"echo": arguments, "tool": self.spec.name}),
            )),
            Act::Panic => panic!("tool_host_contract: this tool panics on purpose"),
        }
    }
}

/// The suite's provider.
struct SuiteProvider {
    tools: Vec<Arc<dyn Tool>>,
}

impl ToolProvider for SuiteProvider {
    fn id(&self) -> &str {
        "contract-suite"
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::BuiltIn
    }

    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}

/// The suite's tools and their run counters.
struct Suite {
    runs: Vec<(&'static str, Arc<AtomicUsize>)>,
    provider: Arc<dyn ToolProvider>,
}

impl Suite {
    fn new() -> Self {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        // Registered deliberately out of name order.
        let defs: [(&str, ToolKind, ToolPolicy, Act, bool); 6] = [
            (
                "zeta_echo",
                ToolKind::ToolCall,
                ToolPolicy::Auto,
                Act::Echo,
                true,
            ),
            (
                "alpha_echo",
                ToolKind::ToolCall,
                ToolPolicy::Auto,
                Act::Echo,
                true,
            ),
            (
                "Mixed_Case",
                ToolKind::ToolCall,
                ToolPolicy::Auto,
                Act::Echo,
                true,
            ),
            (
                "write_note",
                ToolKind::FileChange,
                ToolPolicy::Auto,
                Act::Echo,
                true,
            ),
            (
                "forbidden",
                ToolKind::ToolCall,
                ToolPolicy::Never,
                Act::Echo,
                true,
            ),
            (
                "hidden_panic",
                ToolKind::ToolCall,
                ToolPolicy::Auto,
                Act::Panic,
                false,
            ),
        ];
        let mut runs = Vec::new();
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        for (name, kind, policy, act, advertised) in defs {
            let counter = Arc::new(AtomicUsize::new(0));
            let mut spec = ToolSpec::new(name, format!("Contract tool {name}."), schema.clone())
                .with_kind(kind)
                .with_policy(policy);
            if !advertised {
                spec = spec.hidden();
            }
            runs.push((name, Arc::clone(&counter)));
            tools.push(Arc::new(SuiteTool {
                spec,
                act,
                runs: counter,
            }));
        }
        Self {
            runs,
            provider: Arc::new(SuiteProvider { tools }),
        }
    }

    fn runs(&self, name: &str) -> usize {
        self.runs
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, c)| c.load(Ordering::SeqCst))
    }

    fn host<F>(&self, make: &F) -> Arc<dyn ToolHost>
    where
        F: Fn(Vec<Arc<dyn ToolProvider>>) -> Arc<dyn ToolHost>,
    {
        make(vec![Arc::clone(&self.provider)])
    }
}

fn context(workspace: &std::path::Path, turn: &str) -> ToolHostContext {
    ToolHostContext::builder("contract-thread", turn)
        .workspace(workspace)
        .approval(ApprovalPolicy::Auto)
        .sandbox(SandboxMode::WorkspaceWrite)
        .build()
}

fn call(id: &str, tool: &str) -> ToolCall {
    ToolCall::new(id, tool, json!({"text": "contract"}))
}

/// Runs every rule of the [`ToolHost`] contract. `make` builds a host over exactly the given
/// providers, with a sandbox policy implementing SPEC §5, no hooks and no approver needed for
/// `auto` tools under the `auto` approval policy.
pub async fn tool_host_contract<F>(make: F)
where
    F: Fn(Vec<Arc<dyn ToolProvider>>) -> Arc<dyn ToolHost>,
{
    let workspace = tempfile::tempdir().expect("tool_host_contract: a temporary workspace");
    let root = workspace.path();
    listing_is_sorted_and_hides_hidden_tools(&make, root);
    unknown_tool_is_an_err(&make, root).await;
    aborted_turn_is_an_err(&make, root).await;
    never_tool_is_an_err(&make, root).await;
    listed_auto_tool_runs(&make, root).await;
    file_change_under_read_only_is_blocked(&make, root).await;
    panicking_tool_is_an_error_result(&make, root).await;
}

fn listing_is_sorted_and_hides_hidden_tools<F>(make: &F, root: &std::path::Path)
where
    F: Fn(Vec<Arc<dyn ToolProvider>>) -> Arc<dyn ToolHost>,
{
    let suite = Suite::new();
    let host = suite.host(make);
    let names: Vec<String> = host
        .list_tools(&context(root, "turn-list"))
        .iter()
        .map(|d| d.name().to_owned())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        names, sorted,
        "tool_host_contract: list_tools must be sorted by name (byte order)"
    );
    for expected in ["Mixed_Case", "alpha_echo", "write_note", "zeta_echo"] {
        assert!(
            names.iter().any(|n| n == expected),
            "tool_host_contract: `{expected}` (auto, usable) must be listed; got {names:?}"
        );
    }
    assert!(
        !names.iter().any(|n| n == "hidden_panic"),
        "tool_host_contract: a tool with model_advertised = false must not be listed"
    );
}

async fn unknown_tool_is_an_err<F>(make: &F, root: &std::path::Path)
where
    F: Fn(Vec<Arc<dyn ToolProvider>>) -> Arc<dyn ToolHost>,
{
    let suite = Suite::new();
    let host = suite.host(make);
    let outcome = host
        .execute(
            call("c-unknown", "no_such_tool"),
            &context(root, "turn-unknown"),
        )
        .await;
    assert_eq!(
        outcome,
        Err(HostError::UnknownTool {
            name: "no_such_tool".to_owned()
        }),
        "tool_host_contract: an unknown tool must be Err(UnknownTool)"
    );
}

async fn aborted_turn_is_an_err<F>(make: &F, root: &std::path::Path)
where
    F: Fn(Vec<Arc<dyn ToolProvider>>) -> Arc<dyn ToolHost>,
{
    let suite = Suite::new();
    let host = suite.host(make);
    let ctx = context(root, "turn-aborted");
    ctx.abort.abort();
    let outcome = host.execute(call("c-aborted", "alpha_echo"), &ctx).await;
    assert!(
        matches!(outcome, Err(HostError::Aborted { .. })),
        "tool_host_contract: a call in an aborted turn must be Err(Aborted); got {outcome:?}"
    );
    assert_eq!(
        suite.runs("alpha_echo"),
        0,
        "tool_host_contract: nothing may run in an aborted turn"
    );
}

async fn never_tool_is_an_err<F>(make: &F, root: &std::path::Path)
where
    F: Fn(Vec<Arc<dyn ToolProvider>>) -> Arc<dyn ToolHost>,
{
    let suite = Suite::new();
    let host = suite.host(make);
    let outcome = host
        .execute(call("c-never", "forbidden"), &context(root, "turn-never"))
        .await;
    assert_eq!(
        outcome,
        Err(HostError::DisabledByPolicy {
            name: "forbidden".to_owned()
        }),
        "tool_host_contract: a tool whose policy is `never` must be Err(DisabledByPolicy)"
    );
    assert_eq!(
        suite.runs("forbidden"),
        0,
        "tool_host_contract: a `never` tool must not run"
    );
}

async fn listed_auto_tool_runs<F>(make: &F, root: &std::path::Path)
where
    F: Fn(Vec<Arc<dyn ToolProvider>>) -> Arc<dyn ToolHost>,
{
    let suite = Suite::new();
    let host = suite.host(make);
    let result = host
        .execute(call("c-run", "alpha_echo"), &context(root, "turn-run"))
        .await
        .unwrap_or_else(|e| panic!("tool_host_contract: a listed auto tool must run; got {e}"));
    assert!(
        !result.is_error,
        "tool_host_contract: a listed auto tool must succeed; got {result:?}"
    );
    assert_eq!(
        result.output,
        json!({"echo": {"text": "contract"}, "tool": "alpha_echo"}),
        "tool_host_contract: the result must carry the tool's output unchanged"
    );
    assert_eq!(
        suite.runs("alpha_echo"),
        1,
        "tool_host_contract: the tool must run exactly once"
    );
}

async fn file_change_under_read_only_is_blocked<F>(make: &F, root: &std::path::Path)
where
    F: Fn(Vec<Arc<dyn ToolProvider>>) -> Arc<dyn ToolHost>,
{
    let suite = Suite::new();
    let host = suite.host(make);
    let mut ctx = context(root, "turn-read-only");
    ctx.sandbox = SandboxMode::ReadOnly;
    let result = host
        .execute(call("c-write", "write_note"), &ctx)
        .await
        .unwrap_or_else(|e| {
            panic!("tool_host_contract: a sandbox refusal must be a result, not Err({e})")
        });
    assert_eq!(
        result.error_code(),
        Some(ErrorCode::SandboxReadOnly.as_str()),
        "tool_host_contract: file_change under read-only must be `sandbox_read_only`; got {result:?}"
    );
    assert_eq!(
        suite.runs("write_note"),
        0,
        "tool_host_contract: a blocked tool must not run"
    );
}

async fn panicking_tool_is_an_error_result<F>(make: &F, root: &std::path::Path)
where
    F: Fn(Vec<Arc<dyn ToolProvider>>) -> Arc<dyn ToolHost>,
{
    let suite = Suite::new();
    let host = suite.host(make);
    let result = host
        .execute(
            call("c-panic", "hidden_panic"),
            &context(root, "turn-panic"),
        )
        .await
        .unwrap_or_else(|e| {
            panic!("tool_host_contract: a panicking tool must give a result, not Err({e})")
        });
    assert_eq!(
        result.error_code(),
        Some(ErrorCode::ToolExecutionFailed.as_str()),
        "tool_host_contract: a panicking tool must be `tool_execution_failed`; got {result:?}"
    );
}

/// Whether a name is one model APIs accept: `^[a-zA-Z0-9_-]{1,64}$`.
fn is_model_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks every rule of the [`ToolProvider`] contract on one provider.
pub fn tool_provider_contract(provider: &dyn ToolProvider) {
    let id = provider.id();
    assert!(
        !id.trim().is_empty(),
        "tool_provider_contract: the provider id must not be empty"
    );

    let tools = provider.tools();
    let mut seen = HashSet::new();
    for tool in &tools {
        let spec = tool.spec();
        assert!(
            is_model_tool_name(&spec.name),
            "tool_provider_contract ({id}): tool name `{}` must match ^[a-zA-Z0-9_-]{{1,64}}$",
            spec.name
        );
        assert!(
            seen.insert(spec.name.clone()),
            "tool_provider_contract ({id}): tool name `{}` appears twice",
            spec.name
        );
        assert!(
            spec.input_schema.is_object()
                && spec.input_schema.get("type") == Some(&json!("object")),
            "tool_provider_contract ({id}): the input schema of `{}` must be an object schema \
             with \"type\": \"object\"; got {}",
            spec.name,
            spec.input_schema
        );
    }

    let again = provider.tools();
    let specs = |list: &[Arc<dyn Tool>]| list.iter().map(|t| t.spec().clone()).collect::<Vec<_>>();
    assert_eq!(
        specs(&tools),
        specs(&again),
        "tool_provider_contract ({id}): tools() must return the same tools, in the same order, \
         on every call"
    );

    let policy = provider.policy();
    if !policy.is_usable() {
        assert!(
            policy
                .reason
                .as_deref()
                .is_some_and(|r| !r.trim().is_empty()),
            "tool_provider_contract ({id}): a disabled or unavailable provider must say why \
             (policy.reason)"
        );
    }
}
