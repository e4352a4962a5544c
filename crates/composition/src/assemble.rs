//! Settings → providers → main and child registries → host.

use crate::agents;
use crate::config::{ConfigError, Settings};
use crate::gui_media::{GuiMediaKept, ThreadStateChoice};
use crate::{ChildRegistry, ChildRegistryBuilder};
use kun_builtin_tools::{BuiltinOptions, BuiltinProvider, OutputLimits};
use kun_hooks::{BuiltinHook, HookEngine};
use kun_ports::process::EnvAllowList;
use kun_ports::{
    ImBridge, LedgerError, NetworkAccess, OperationLedger, ReadTracker, ToolHostContext,
    ToolHostContextBuilder, ToolLists, ToolProvider,
};
use kun_registry::ledger::{InMemoryLedger, JournalLedger, LedgerBounds};
use kun_registry::read_tracker::InMemoryReadTracker;
use kun_registry::{
    CapabilityRegistry, CatalogFilters, Host, PlanWhitelist, RegistryError, fingerprint_catalog,
};
use kun_sandbox::{ProbeOptions, ProtectedPaths, SandboxCapabilities, WorkspaceSandbox};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where the operation ledger lives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LedgerChoice {
    /// In memory: replays within this process only (default bounds).
    #[default]
    InMemory,
    /// In memory with these bounds (a front end that never repeats a call id across turns,
    /// such as `serve`, needs only a short replay window).
    Bounded(LedgerBounds),
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
    /// What the start-up probe of the confinement tier tries (the default: bubblewrap on
    /// `PATH`, then Landlock). The tier found decides both how the command tools run and the
    /// sandbox's verdicts: a command runs without a prompt only when that tier confines it.
    pub probe: ProbeOptions,
    /// Where goals and todos are kept.
    pub thread_state: ThreadStateChoice,
    /// Where generated media and screenshots go (default: the user data directory).
    pub artifacts_dir: Option<PathBuf>,
}

impl std::fmt::Debug for AssembleOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AssembleOptions")
            .field("ledger", &self.ledger)
            .field("im_bridge", &self.im_bridge.is_some())
            .field("probe", &self.probe)
            .field("thread_state", &self.thread_state)
            .field("artifacts_dir", &self.artifacts_dir)
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
    /// The settings name something that does not exist (an unknown tool in a list).
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Everything a front end needs.
pub struct Assembly {
    /// The effective configuration.
    pub settings: Settings,
    /// The main registry.
    pub registry: Arc<CapabilityRegistry>,
    /// The child registry: [`Delegable`](kun_ports::Delegable) providers only, at every
    /// entrance.
    pub child_registry: ChildRegistry,
    /// The host: catalog and pipeline.
    pub host: Arc<Host>,
    /// The child host: the pipeline over the child registry, where delegated children run.
    pub child_host: Arc<Host>,
    /// The skills provider (its catalog feeds `serve`'s instructions and prompts).
    pub skills: Arc<kun_skills::SkillsProvider>,
    /// The delegation provider (its profiles feed `doctor`).
    pub delegation: Arc<kun_delegation::DelegationProvider>,
    /// The child runner's state.
    pub runner: crate::RunnerState,
    /// The OS confinement tier commands run under.
    pub capabilities: SandboxCapabilities,
    /// State that outlives a configuration reload (see [`Assembly::reassemble`]).
    kept: Kept,
}

/// What a reload keeps: the ledger, the read tracker (read-before-edit survives), the IM
/// bridge, and the built-in provider while its limits are unchanged (so background shells
/// survive too).
#[derive(Clone)]
struct Kept {
    ledger: Arc<dyn OperationLedger>,
    read_tracker: Arc<dyn ReadTracker>,
    im_bridge: Option<Arc<dyn ImBridge>>,
    builtin: Arc<BuiltinProvider>,
    gui_media: GuiMediaKept,
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
/// When hooks, the ledger or the providers cannot be set up, or a tool list names a tool
/// that does not exist ([`AssembleError::Config`], naming the entry and the closest name).
pub fn assemble(settings: Settings, options: AssembleOptions) -> Result<Assembly, AssembleError> {
    let capabilities = SandboxCapabilities::probe_with(&options.probe);
    let ledger: Arc<dyn OperationLedger> = match &options.ledger {
        LedgerChoice::InMemory => Arc::new(InMemoryLedger::new(LedgerBounds::default())),
        LedgerChoice::Bounded(bounds) => Arc::new(InMemoryLedger::new(*bounds)),
        LedgerChoice::Journal(path) => Arc::new(JournalLedger::open(path.clone())?),
    };
    let read_tracker = Arc::new(InMemoryReadTracker::with_normaliser(|text: &str| {
        kun_builtin_tools::fs::normalize_for_fuzzy_match(text)
    }));
    let builtin = builtin_provider(&settings, &capabilities, options.im_bridge.clone());
    let kept = Kept {
        ledger,
        read_tracker,
        im_bridge: options.im_bridge,
        builtin,
        gui_media: GuiMediaKept::new(&options.thread_state, options.artifacts_dir),
    };
    wire(settings, capabilities, kept)
}

/// The built-in provider for these limits.
fn builtin_provider(
    settings: &Settings,
    capabilities: &SandboxCapabilities,
    im_bridge: Option<Arc<dyn ImBridge>>,
) -> Arc<BuiltinProvider> {
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
    let mut builtin_options = BuiltinOptions::new(capabilities.confinement());
    builtin_options.limits = limits;
    builtin_options.bash_timeout = Duration::from_secs(u64::from(
        settings
            .limits
            .bash_timeout_seconds
            .unwrap_or(crate::config::DEFAULT_BASH_TIMEOUT_SECONDS),
    ));
    builtin_options.im_bridge = im_bridge;
    builtin_options.env = EnvAllowList::new(settings.shell.env.iter().map(String::as_str));
    builtin_options.network = if settings.sandbox_options.network {
        NetworkAccess::Enabled
    } else {
        NetworkAccess::Disabled
    };
    Arc::new(BuiltinProvider::new(builtin_options))
}

/// The guards `write`/`edit` may not change, minus the user's exceptions.
fn protected_paths(settings: &Settings) -> Result<ProtectedPaths, AssembleError> {
    let key = "sandbox.protected_path_exceptions";
    ProtectedPaths::with_exceptions(&settings.sandbox_options.protected_path_exceptions).map_err(
        |invalid| {
            AssembleError::Config(
                settings.error_at(key, format!("`{}`: {}", invalid.entry, invalid.reason)),
            )
        },
    )
}

/// Settings and kept state → registries, hooks and host.
fn wire(
    settings: Settings,
    capabilities: SandboxCapabilities,
    kept: Kept,
) -> Result<Assembly, AssembleError> {
    let confinement = capabilities.confinement();
    let sandbox = Arc::new(
        WorkspaceSandbox::for_confinement(confinement.as_ref())
            .with_protected_paths(protected_paths(&settings)?),
    );
    let mut filters = CatalogFilters::new(sandbox);
    if let Some(names) = &settings.tools.plan_allow {
        filters = filters.with_plan_whitelist(PlanWhitelist::new(names.iter().map(String::as_str)));
    }
    let standing = agents::workspace_standing(&settings);
    let skills = agents::skills_provider(&settings, standing);
    let memory = crate::memory_provider(&settings);
    let (web, web_search) = crate::web_providers(&settings);
    let mut child = ChildRegistryBuilder::default();
    child.add(Arc::clone(&kept.builtin));
    child.add(Arc::clone(&skills));
    child.add(Arc::clone(&memory));
    child.add(Arc::clone(&web));
    child.add(Arc::clone(&web_search));
    let gui_media = crate::gui_media::providers(&settings, &kept.gui_media);
    for media in gui_media.media {
        child.add(media);
    }
    let child_registry = ChildRegistry::with_providers(filters.clone(), child)?;
    let hooks: Arc<HookEngine> = Arc::new(
        HookEngine::builder()
            .config(settings.hooks.clone())
            .builtin(BuiltinHook::DesignQuality)
            .build()
            .map_err(|err| AssembleError::Hooks(err.to_string()))?,
    );
    // Children run through the same gates: the same hooks, ledger and read tracker.
    let child_host = Arc::new(
        child_registry
            .host()
            .hooks(hooks.clone())
            .ledger(Arc::clone(&kept.ledger))
            .read_tracker(Arc::clone(&kept.read_tracker))
            .build(),
    );
    let (runner, runner_state) = agents::runner(&settings);
    let delegation = agents::delegation_provider(
        &settings,
        agents::profiles(&settings, standing),
        runner,
        child_host.clone(),
    );
    let mut main_providers: Vec<Arc<dyn ToolProvider>> = vec![
        kept.builtin.clone(),
        skills.clone(),
        delegation.clone(),
        memory,
        web,
        web_search,
    ];
    main_providers.extend(gui_media.main);
    // Lists may name the skills and delegation tools even while their provider is off.
    let registered = main_providers
        .iter()
        .flat_map(|provider| provider.tools())
        .map(|tool| tool.spec().name.clone())
        .chain([kun_skills::LOAD_SKILL, kun_delegation::DELEGATE_TASK].map(str::to_owned));
    crate::lists::check(
        &settings,
        &crate::lists::KnownNames::new(registered, &settings),
    )?;
    let registry = Arc::new(CapabilityRegistry::with_providers(filters, main_providers)?);
    let host = Host::builder(Arc::clone(&registry))
        .hooks(hooks)
        .ledger(Arc::clone(&kept.ledger))
        .read_tracker(Arc::clone(&kept.read_tracker))
        .build();
    Ok(Assembly {
        settings,
        registry,
        child_registry,
        host: Arc::new(host),
        child_host,
        skills,
        delegation,
        runner: runner_state,
        capabilities,
        kept,
    })
}

impl Assembly {
    /// A new assembly for reloaded `settings` that keeps this one's state: the ledger, the
    /// read tracker (a thread's reads still count for read-before-edit), the IM bridge and
    /// the probed confinement tier. The built-in provider is kept while the `[limits]` are
    /// unchanged (background shells keep running) and rebuilt otherwise. Registries, filters
    /// (the plan whitelist), hooks and host are new: turns already running keep the old
    /// assembly they hold.
    ///
    /// # Errors
    /// When the new hooks or providers cannot be set up; `self` is unchanged either way.
    pub fn reassemble(&self, settings: Settings) -> Result<Self, AssembleError> {
        let mut kept = self.kept.clone();
        // What the built-in tools are built with: limits, the commands' environment and
        // network. Anything else keeps them (and their background shells) running.
        let builtin_inputs =
            |s: &Settings| (s.limits.clone(), s.shell.clone(), s.sandbox_options.network);
        if builtin_inputs(&settings) != builtin_inputs(&self.settings) {
            kept.builtin = builtin_provider(&settings, &self.capabilities, kept.im_bridge.clone());
        }
        wire(settings, self.capabilities.clone(), kept)
    }

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
            .surface(s.gui.client_surface)
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
        json!({
            "fingerprint": fingerprint.fingerprint,
            "tools": tools,
            "providers": providers,
            "confinement": self.capabilities.report(),
        })
    }
}
