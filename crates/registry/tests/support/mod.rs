//! Test tools, providers and contexts shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod sandbox;

use async_trait::async_trait;
use kun_ports::{
    CallApproval, EditGuard, ProviderKind, ProviderPolicy, ReadObservation, SideEffect, Tool,
    ToolContext, ToolError, ToolFailure, ToolHostContext, ToolKind, ToolPolicy, ToolProvider,
    ToolResult, ToolSpec,
};
use kun_registry::{CapabilityRegistry, CatalogFilters, Host, HostBuilder};
use sandbox::SpecSandbox;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What a test tool does when run.
#[derive(Clone)]
pub enum Behaviour {
    /// Returns its arguments.
    Echo,
    /// Returns this output.
    Output(Value),
    /// Returns this tool-level error result.
    ErrorResult(Value),
    /// Fails with this error.
    Fail(ToolError),
    /// Panics.
    Panic,
    /// Never finishes (until aborted).
    Hang,
}

/// Whether the tool asks for explicit approval.
#[derive(Clone)]
pub enum Explicit {
    No,
    Yes,
    Error(String),
}

/// A configurable test tool that counts its runs.
pub struct TestTool {
    pub spec: ToolSpec,
    pub behaviour: Behaviour,
    pub explicit: Explicit,
    pub advertise: Option<fn(&ToolHostContext) -> bool>,
    /// Edit-like: `edit_guard` from `{path, oldText}`.
    pub edit_like: bool,
    /// Write-like: `write_paths` from `{path}`.
    pub writes_path: bool,
    /// Read-like: `observed_read` from `{path}` and a `content` output.
    pub read_like: bool,
    /// Grant scope: the `command` argument.
    pub scoped: bool,
    /// Fails every call in its preflight (step 10b).
    pub preflight: Option<ToolFailure>,
    /// Calls whose `action` argument is this need no approval (`CallApproval::NotNeeded`).
    pub read_only_action: Option<&'static str>,
    pub runs: Arc<AtomicUsize>,
}

impl TestTool {
    pub fn new(name: &str) -> Self {
        Self {
            spec: ToolSpec::new(
                name,
                format!("Test tool {name}."),
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            )
            .with_policy(ToolPolicy::Auto),
            behaviour: Behaviour::Echo,
            explicit: Explicit::No,
            advertise: None,
            edit_like: false,
            writes_path: false,
            read_like: false,
            scoped: false,
            preflight: None,
            read_only_action: None,
            runs: Arc::new(AtomicUsize::new(0)),
        }
    }

    pub fn kind(mut self, kind: ToolKind) -> Self {
        self.spec.kind = kind;
        self
    }

    pub fn policy(mut self, policy: ToolPolicy) -> Self {
        self.spec.policy = policy;
        self
    }

    pub fn read_only(mut self) -> Self {
        self.spec.side_effect = SideEffect::ReadOnly;
        self
    }

    pub fn hidden(mut self) -> Self {
        self.spec.model_advertised = false;
        self
    }

    pub fn user_interaction(mut self) -> Self {
        self.spec.user_interaction = true;
        self
    }

    pub fn role(mut self, role: kun_ports::ToolRole) -> Self {
        self.spec = self.spec.with_role(role);
        self
    }

    pub fn description(mut self, text: &str) -> Self {
        self.spec.description = text.to_owned();
        self
    }

    pub fn schema(mut self, schema: Value) -> Self {
        self.spec.input_schema = schema;
        self
    }

    pub fn behaviour(mut self, behaviour: Behaviour) -> Self {
        self.behaviour = behaviour;
        self
    }

    pub fn explicit(mut self, explicit: Explicit) -> Self {
        self.explicit = explicit;
        self
    }

    pub fn advertise(mut self, predicate: fn(&ToolHostContext) -> bool) -> Self {
        self.advertise = Some(predicate);
        self
    }

    pub fn edit_like(mut self) -> Self {
        self.edit_like = true;
        self
    }

    pub fn writes_path(mut self) -> Self {
        self.writes_path = true;
        self
    }

    pub fn read_like(mut self) -> Self {
        self.read_like = true;
        self
    }

    pub fn scoped(mut self) -> Self {
        self.scoped = true;
        self
    }

    pub fn failing_preflight(mut self, failure: ToolFailure) -> Self {
        self.preflight = Some(failure);
        self
    }

    pub fn read_only_action(mut self, action: &'static str) -> Self {
        self.read_only_action = Some(action);
        self
    }

    /// The run counter (shared with the tool once it is registered).
    pub fn counter(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.runs)
    }

    pub fn arc(self) -> Arc<dyn Tool> {
        Arc::new(self)
    }
}

fn str_arg(arguments: &Value, key: &str) -> Option<String> {
    arguments
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[async_trait]
impl Tool for TestTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn should_advertise(&self, ctx: &ToolHostContext) -> bool {
        self.advertise.is_none_or(|p| p(ctx))
    }

    fn explicit_approval(
        &self,
        _arguments: &Value,
        _ctx: &ToolHostContext,
    ) -> Result<bool, String> {
        match &self.explicit {
            Explicit::No => Ok(false),
            Explicit::Yes => Ok(true),
            Explicit::Error(message) => Err(message.clone()),
        }
    }

    fn call_approval(&self, arguments: &Value) -> CallApproval {
        match self.read_only_action {
            Some(action) if str_arg(arguments, "action").as_deref() == Some(action) => {
                CallApproval::NotNeeded
            }
            _ => CallApproval::AsDeclared,
        }
    }

    fn preflight(&self, _arguments: &Value, _ctx: &ToolHostContext) -> Result<(), ToolFailure> {
        self.preflight.clone().map_or(Ok(()), Err)
    }

    fn approval_scope(&self, arguments: &Value) -> Option<String> {
        if self.scoped {
            str_arg(arguments, "command")
        } else {
            None
        }
    }

    fn edit_guard(&self, arguments: &Value) -> Option<EditGuard> {
        if !self.edit_like {
            return None;
        }
        Some(EditGuard {
            path: str_arg(arguments, "path").unwrap_or_default(),
            old_texts: str_arg(arguments, "oldText").into_iter().collect(),
        })
    }

    fn write_paths(&self, arguments: &Value) -> Vec<String> {
        if self.writes_path {
            str_arg(arguments, "path").into_iter().collect()
        } else {
            Vec::new()
        }
    }

    fn observed_read(
        &self,
        arguments: &Value,
        output: &Value,
        ctx: &ToolHostContext,
    ) -> Option<ReadObservation> {
        if !self.read_like {
            return None;
        }
        let path = str_arg(arguments, "path")?;
        // The path as the call named it: the host resolves it.
        let _ = ctx;
        Some(ReadObservation {
            path: path.into(),
            content: output
                .get("content")
                .and_then(Value::as_str)
                .map(str::to_owned),
            partial: false,
            revision: None,
        })
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        _ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        match &self.behaviour {
            Behaviour::Echo => Ok(ToolResult::ok(arguments)),
            Behaviour::Output(output) => Ok(ToolResult::ok(output.clone())),
            Behaviour::ErrorResult(output) => Ok(ToolResult {
                output: output.clone(),
                is_error: true,
                content: Vec::new(),
            }),
            Behaviour::Fail(error) => Err(error.clone()),
            Behaviour::Panic => panic!("test tool {} panics on purpose", self.spec.name),
            Behaviour::Hang => {
                // Ignores the abort signal on purpose: the host must stop waiting by itself.
                std::future::pending().await
            }
        }
    }
}

/// A provider with a switchable policy.
pub struct TestProvider {
    pub id: String,
    pub kind: ProviderKind,
    pub policy: Mutex<ProviderPolicy>,
    pub tools: Vec<Arc<dyn Tool>>,
}

impl TestProvider {
    pub fn new(id: &str, kind: ProviderKind, tools: Vec<Arc<dyn Tool>>) -> Self {
        Self {
            id: id.to_owned(),
            kind,
            policy: Mutex::new(ProviderPolicy::ready()),
            tools,
        }
    }

    pub fn builtin(tools: Vec<Arc<dyn Tool>>) -> Self {
        Self::new("builtin", ProviderKind::BuiltIn, tools)
    }

    pub fn with_policy(self, policy: ProviderPolicy) -> Self {
        *self.policy.lock().unwrap() = policy;
        self
    }

    pub fn arc(self) -> Arc<dyn ToolProvider> {
        Arc::new(self)
    }
}

impl ToolProvider for TestProvider {
    fn id(&self) -> &str {
        &self.id
    }

    fn kind(&self) -> ProviderKind {
        self.kind
    }

    fn policy(&self) -> ProviderPolicy {
        self.policy.lock().unwrap().clone()
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }
}

/// Filters over the SPEC sandbox with confined commands.
pub fn filters() -> CatalogFilters {
    CatalogFilters::new(Arc::new(SpecSandbox::confined()))
}

/// A registry of these providers over the SPEC sandbox (confined commands).
pub fn registry(providers: Vec<Arc<dyn ToolProvider>>) -> Arc<CapabilityRegistry> {
    Arc::new(CapabilityRegistry::with_providers(filters(), providers).unwrap())
}

/// A registry of these providers over a given sandbox.
pub fn registry_over(
    sandbox: SpecSandbox,
    providers: Vec<Arc<dyn ToolProvider>>,
) -> Arc<CapabilityRegistry> {
    Arc::new(
        CapabilityRegistry::with_providers(CatalogFilters::new(Arc::new(sandbox)), providers)
            .unwrap(),
    )
}

/// A host builder over one built-in provider holding `tools`.
pub fn host_with(tools: Vec<Arc<dyn Tool>>) -> HostBuilder {
    Host::builder(registry(vec![TestProvider::builtin(tools).arc()]))
}

/// A context in `/ws`, approval auto, workspace-write.
pub fn ctx() -> kun_ports::ToolHostContextBuilder {
    ToolHostContext::builder("thread-1", "turn-1")
        .workspace("/ws")
        .approval(kun_ports::ApprovalPolicy::Auto)
}

/// The names of a listing.
pub fn names(tools: &[kun_ports::ToolDescriptor]) -> Vec<String> {
    tools.iter().map(|t| t.name().to_owned()).collect()
}
