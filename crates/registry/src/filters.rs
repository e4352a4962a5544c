//! The catalog filters: which registered tools a model sees in a context, and which it may
//! call.

use crate::snapshot::{ProviderEntry, RegistrySnapshot, ToolEntry};
use kun_ports::{
    ClientSurface, HostError, NameSet, NotAdvertisedReason, ProviderKind, SandboxPolicy,
    SandboxQuery, SandboxVerdict, SideEffect, ToolDescriptor, ToolHostContext, ToolKind, ToolRole,
    ToolSpec,
};
use std::fmt;
use std::sync::Arc;

/// The tools a planning turn may see and call, besides any tool whose side effect is
/// `read-only` and any [`ToolRole::PlanWriter`] (a tool that writes only the plan file says
/// so on its spec; its name does not matter).
///
/// The default is SPEC §3's list: read, grep, glob, find, ls, repo_map, git_inspect, lsp,
/// create_plan, user_input, request_user_input.
///
/// ```
/// use kun_registry::PlanWhitelist;
/// let plan = PlanWhitelist::default().with("web_fetch");
/// assert!(plan.contains("grep"));
/// assert!(plan.contains("web_fetch"));
/// assert!(!plan.contains("edit"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanWhitelist {
    names: NameSet,
}

impl PlanWhitelist {
    /// SPEC §3's default names.
    pub const DEFAULT_NAMES: [&'static str; 11] = [
        "read",
        "grep",
        "glob",
        "find",
        "ls",
        "repo_map",
        "git_inspect",
        "lsp",
        "create_plan",
        "user_input",
        "request_user_input",
    ];

    /// Exactly these names (plus, always, read-only tools).
    pub fn new<S: Into<Box<str>>>(names: impl IntoIterator<Item = S>) -> Self {
        Self {
            names: names.into_iter().collect(),
        }
    }

    /// The same whitelist with one more name.
    #[must_use]
    pub fn with(mut self, name: impl Into<Box<str>>) -> Self {
        self.names.insert(name);
        self
    }

    /// Whether `name` is whitelisted by name.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// Whether a planning turn admits the tool: read-only, a plan writer, or whitelisted by
    /// name.
    #[must_use]
    pub fn admits(&self, spec: &ToolSpec) -> bool {
        spec.side_effect == SideEffect::ReadOnly
            || spec.role == ToolRole::PlanWriter
            || self.names.contains(&spec.name)
    }
}

impl Default for PlanWhitelist {
    fn default() -> Self {
        Self::new(Self::DEFAULT_NAMES)
    }
}

/// What the catalog filters need besides the turn: gate one's policy and the plan whitelist.
///
/// [`CatalogFilters::list`] keeps a tool only if every filter passes, in this order (SPEC §3):
///
/// | # | filter | refuses when |
/// |---|---|---|
/// | 1 | provider | the provider is disabled or unavailable, in `blocked_provider_ids`, outside `allowed_provider_ids` (when given), or a `gui` provider on a non-GUI client surface |
/// | 2 | tool lists | the name is in `blocked_tool_names`, or outside `allowed_tool_names` (when given); deny always wins, an allow-list only shrinks |
/// | 3 | plan whitelist | the turn is planning and the tool is neither whitelisted by name, nor `side_effect = read-only`, nor a [`ToolRole::PlanWriter`] |
/// | 4 | sandbox | the [`SandboxPolicy`] blocks the tool's kind in the turn's mode (every other verdict is listed; `user_interaction` tools are exempt) |
/// | 5 | the tool | [`Tool::should_advertise`](kun_ports::Tool::should_advertise) says no |
///
/// Tools with `model_advertised = false` are never listed (they are left out of the listing
/// index at registration) but stay callable. The listing is sorted by name.
///
/// [`CatalogFilters::resolve`] repeats filters 1–3 and 5 for a call (never trusting an earlier
/// listing); the sandbox is re-checked by the execution pipeline, where a refusal is an error
/// result rather than a fault.
#[derive(Clone)]
pub struct CatalogFilters {
    sandbox: Arc<dyn SandboxPolicy>,
    plan_whitelist: PlanWhitelist,
}

impl fmt::Debug for CatalogFilters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CatalogFilters")
            .field("plan_whitelist", &self.plan_whitelist)
            .finish_non_exhaustive()
    }
}

/// Which tool kinds the sandbox lets a listing show, decided once per listing.
///
/// Relies on the [`SandboxPolicy::check_tool`] contract that the tool name is only used for
/// the message, and that blocking depends on the kind and the mode alone.
#[derive(Debug, Clone, Copy)]
struct ListedKinds([bool; 3]);

impl ListedKinds {
    fn for_mode(sandbox: &dyn SandboxPolicy, ctx: &ToolHostContext) -> Self {
        let listed = |kind| {
            !matches!(
                sandbox.check_tool("(catalog)", SandboxQuery::kind(kind), ctx.sandbox),
                SandboxVerdict::Blocked(_)
            )
        };
        Self([
            listed(ToolKind::ToolCall),
            listed(ToolKind::FileChange),
            listed(ToolKind::CommandExecution),
        ])
    }

    const fn admits(self, kind: ToolKind) -> bool {
        match kind {
            ToolKind::ToolCall => self.0[0],
            ToolKind::FileChange => self.0[1],
            ToolKind::CommandExecution => self.0[2],
        }
    }
}

impl CatalogFilters {
    /// Filters with this sandbox policy and the default plan whitelist.
    #[must_use]
    pub fn new(sandbox: Arc<dyn SandboxPolicy>) -> Self {
        Self {
            sandbox,
            plan_whitelist: PlanWhitelist::default(),
        }
    }

    /// The same filters with another plan whitelist.
    #[must_use]
    pub fn with_plan_whitelist(mut self, whitelist: PlanWhitelist) -> Self {
        self.plan_whitelist = whitelist;
        self
    }

    /// Gate one's policy.
    #[must_use]
    pub fn sandbox(&self) -> &Arc<dyn SandboxPolicy> {
        &self.sandbox
    }

    /// The plan whitelist.
    #[must_use]
    pub const fn plan_whitelist(&self) -> &PlanWhitelist {
        &self.plan_whitelist
    }

    /// The catalog of `snapshot` for `ctx`: filters 1–5 in order, sorted by name. The
    /// descriptors share the registered tools (`Arc` clones; no schema is copied).
    #[must_use]
    pub fn list(&self, snapshot: &RegistrySnapshot, ctx: &ToolHostContext) -> Vec<ToolDescriptor> {
        let providers_ok: Vec<bool> = snapshot
            .provider_entries()
            .iter()
            .map(|p| provider_admits(p, ctx))
            .collect();
        let planning = ctx.is_plan_context();
        let listed_kinds = ListedKinds::for_mode(self.sandbox.as_ref(), ctx);
        let has_tool_lists =
            !ctx.lists.blocked_tool_names.is_empty() || ctx.lists.allowed_tool_names.is_some();
        let tools = snapshot.tool_entries();

        let mut out = Vec::with_capacity(snapshot.advertised_indices().len());
        for &index in snapshot.advertised_indices() {
            let entry = &tools[index];
            let keep = providers_ok[entry.provider]
                && (!has_tool_lists || ctx.lists.admits_tool(&entry.name))
                && (!planning
                    || entry.read_only
                    || self.plan_whitelist.admits(entry.descriptor.spec()))
                && (entry.user_interaction || listed_kinds.admits(entry.kind))
                && entry.descriptor.tool().should_advertise(ctx);
            if keep {
                out.push(entry.descriptor.clone());
            }
        }
        out
    }

    /// Finds the tool a call names and re-checks filters 1–3 and 5 (not the sandbox, and not
    /// `model_advertised`: hidden tools stay callable).
    ///
    /// # Errors
    /// [`HostError::UnknownTool`] when no tool has that name; [`HostError::NotAdvertised`]
    /// when a filter refuses it, with the filter as the reason. A `provider_id` the caller
    /// gives must name the serving provider ([`NotAdvertisedReason::WrongProvider`]).
    pub fn resolve<'s>(
        &self,
        snapshot: &'s RegistrySnapshot,
        name: &str,
        provider_id: Option<&str>,
        ctx: &ToolHostContext,
    ) -> Result<&'s ToolDescriptor, HostError> {
        let entry = snapshot.entry(name).ok_or_else(|| HostError::UnknownTool {
            name: name.to_owned(),
        })?;
        self.check_entry(snapshot, entry, provider_id, ctx)
            .map_err(|reason| HostError::NotAdvertised {
                name: name.to_owned(),
                reason,
            })?;
        Ok(&entry.descriptor)
    }

    /// Whether `name` is callable in this turn: [`CatalogFilters::resolve`]'s checks plus the
    /// sandbox advertising the tool's kind (filter 4). What gateway tools ask through
    /// [`CatalogView`](kun_ports::CatalogView).
    ///
    /// # Errors
    /// As [`CatalogFilters::resolve`], and [`NotAdvertisedReason::Sandbox`] when the sandbox
    /// mode blocks the kind.
    pub fn visible(
        &self,
        snapshot: &RegistrySnapshot,
        name: &str,
        ctx: &ToolHostContext,
    ) -> Result<(), HostError> {
        let descriptor = self.resolve(snapshot, name, None, ctx)?;
        let spec = descriptor.spec();
        let blocked = !spec.user_interaction
            && matches!(
                self.sandbox
                    .check_tool(name, SandboxQuery::of(spec), ctx.sandbox),
                SandboxVerdict::Blocked(_)
            );
        if blocked {
            return Err(HostError::NotAdvertised {
                name: name.to_owned(),
                reason: NotAdvertisedReason::Sandbox,
            });
        }
        Ok(())
    }

    fn check_entry(
        &self,
        snapshot: &RegistrySnapshot,
        entry: &ToolEntry,
        provider_id: Option<&str>,
        ctx: &ToolHostContext,
    ) -> Result<(), NotAdvertisedReason> {
        let provider = snapshot.provider_at(entry.provider);
        if provider_id.is_some_and(|id| id != &*provider.id) {
            return Err(NotAdvertisedReason::WrongProvider);
        }
        if !provider_admits(provider, ctx) {
            return Err(NotAdvertisedReason::Provider);
        }
        let spec = entry.descriptor.spec();
        if !ctx.lists.admits_tool(&spec.name)
            || (ctx.is_plan_context() && !self.plan_whitelist.admits(spec))
        {
            return Err(NotAdvertisedReason::ToolPolicy);
        }
        if !entry.descriptor.tool().should_advertise(ctx) {
            return Err(NotAdvertisedReason::Context);
        }
        Ok(())
    }
}

/// Filter 1: the provider is usable, admitted by the provider lists, and not a GUI provider on
/// a non-GUI surface.
fn provider_admits(provider: &ProviderEntry, ctx: &ToolHostContext) -> bool {
    provider.provider.policy().is_usable()
        && ctx.lists.admits_provider(&provider.id)
        && (provider.kind != ProviderKind::Gui || ctx.client_surface == ClientSurface::Gui)
}
