//! Settings → providers → main and child registries → host.

use crate::ChildRegistryBuilder;
use crate::config::Settings;
use kun_builtin_tools::{BuiltinOptions, BuiltinProvider, OutputLimits};
use kun_hooks::{BuiltinHook, HookEngine};
use kun_ports::{
    ImBridge, LedgerError, OperationLedger, ToolHostContext, ToolHostContextBuilder, ToolLists,
    ToolProvider,
};
use kun_registry::ledger::{InMemoryLedger, JournalLedger, LedgerBounds};
use kun_registry::read_tracker::InMemoryReadTracker;
use kun_registry::{
    CapabilityRegistry, CatalogFilters, Host, PlanWhitelist, RegistryError, fingerprint_catalog,
};
use kun_sandbox::{SandboxCapabilities, WorkspaceSandbox};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where the operation ledger lives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LedgerChoice {
    /// In memory: replays within this process only.
    #[default]
    InMemory,
    /// An append-only journal file: survives crashes (`tool_outcome_unknown` after a kill).
    Journal(PathBuf),
}

/// What the caller adds beyond the settings.
#[derive(Default)]
pub struct AssembleOptions {
    /// The ledger.
    pub ledger: LedgerChoice,
    /// An IM bridge; `send_im_attachment` is registered only with one.
    pub im_bridge: Option<Arc<dyn ImBridge>>,
}

impl std::fmt::Debug for AssembleOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AssembleOptions")
            .field("ledger", &self.ledger)
            .field("im_bridge", &self.im_bridge.is_some())
            .finish()
    }
}

/// Assembly failed.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// The hooks could not be built.
    #[error("hooks: {0}")]
    Hooks(String),
    /// The ledger could not be opened.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// Two providers clash.
    #[error("registry: {0}")]
    Registry(#[from] RegistryError),
}

/// Everything a front end needs.
pub struct Assembly {
    /// The effective configuration.
    pub settings: Settings,
    /// The main registry.
    pub registry: Arc<CapabilityRegistry>,
    /// The child registry (delegable providers only).
    pub child_registry: Arc<CapabilityRegistry>,
    /// The host: catalog and pipeline.
    pub host: Arc<Host>,
    /// The OS confinement tier commands run under.
    pub capabilities: SandboxCapabilities,
}

impl std::fmt::Debug for Assembly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assembly")
            .field("workspace", &self.settings.workspace)
            .finish_non_exhaustive()
    }
}

/// Builds the registries and the host from `settings`.
///
/// # Errors
/// When hooks, the ledger or the providers cannot be set up.
pub fn assemble(settings: Settings, options: AssembleOptions) -> Result<Assembly, AssembleError> {
    let capabilities = SandboxCapabilities::probe();
    let confinement = capabilities.confinement();
    let sandbox = Arc::new(WorkspaceSandbox::for_confinement(confinement.as_ref()));
    let mut filters = CatalogFilters::new(sandbox.clone());
    if let Some(names) = &settings.tools.plan_allow {
        filters = filters.with_plan_whitelist(PlanWhitelist::new(names.iter().map(String::as_str)));
    }
    let defaults = OutputLimits::default();
    let limits = OutputLimits::new(
        settings
            .limits
            .max_output_lines
            .map_or(defaults.max_lines, |n| n as usize),
        settings
            .limits
            .max_output_bytes
            .map_or(defaults.max_bytes, |n| n as usize),
    );
    let mut builtin_options = BuiltinOptions::new(confinement);
    builtin_options.limits = limits;
    builtin_options.bash_timeout = Duration::from_secs(u64::from(
        settings.limits.bash_timeout_seconds.unwrap_or(900),
    ));
    builtin_options.im_bridge = options.im_bridge;
    let builtin = Arc::new(BuiltinProvider::new(builtin_options));
    let main_providers: Vec<Arc<dyn ToolProvider>> = vec![builtin.clone()];
    let mut child = ChildRegistryBuilder::default();
    child.add(builtin);
    let registry = Arc::new(CapabilityRegistry::with_providers(
        filters.clone(),
        main_providers,
    )?);
    let child_registry = Arc::new(CapabilityRegistry::with_providers(
        filters,
        child.into_providers(),
    )?);
    let hooks = HookEngine::builder()
        .config(settings.hooks.clone())
        .builtin(BuiltinHook::DesignQuality)
        .build()
        .map_err(|err| AssembleError::Hooks(err.to_string()))?;
    let ledger: Arc<dyn OperationLedger> = match &options.ledger {
        LedgerChoice::InMemory => Arc::new(InMemoryLedger::new(LedgerBounds::default())),
        LedgerChoice::Journal(path) => Arc::new(JournalLedger::open(path.clone())?),
    };
    let tracker = InMemoryReadTracker::with_normaliser(|text: &str| {
        kun_builtin_tools::fs::normalize_for_fuzzy_match(text)
    });
    let host = Host::builder(Arc::clone(&registry))
        .hooks(Arc::new(hooks))
        .ledger(ledger)
        .read_tracker(Arc::new(tracker))
        .build();
    Ok(Assembly {
        settings,
        registry,
        child_registry,
        host: Arc::new(host),
        capabilities,
    })
}

impl Assembly {
    /// A turn context with the settings applied (workspace, sandbox, approval, mode, lists).
    pub fn context(&self, thread_id: &str, turn_id: &str) -> ToolHostContextBuilder {
        let s = &self.settings;
        let lists = ToolLists {
            allowed_tool_names: s
                .tools
                .allow
                .as_ref()
                .map(|names| names.iter().map(String::as_str).collect()),
            blocked_tool_names: s.tools.deny.iter().flatten().map(String::as_str).collect(),
            ..ToolLists::default()
        };
        ToolHostContext::builder(thread_id, turn_id)
            .workspace(s.workspace.clone())
            .sandbox(s.sandbox)
            .approval(s.approval)
            .mode(s.mode)
            .lists(lists)
    }

    /// The catalog as `kun-tools catalog --json` prints it: `{fingerprint, tools, providers}`,
    /// tools sorted by name.
    #[must_use]
    pub fn catalog(&self, ctx: &ToolHostContext) -> Value {
        use kun_ports::ToolHost as _;
        let tools = self.host.list_tools(ctx);
        let fingerprint = fingerprint_catalog(&tools);
        let providers: Vec<Value> = self
            .registry
            .diagnostics()
            .into_iter()
            .map(|p| {
                json!({
                    "id": p.id,
                    "kind": p.kind,
                    "enabled": p.policy.enabled,
                    "available": p.policy.available,
                    "reason": p.policy.reason,
                })
            })
            .collect();
        json!({"fingerprint": fingerprint.fingerprint, "tools": tools, "providers": providers})
    }
}
