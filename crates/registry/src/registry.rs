//! The capability registry: one flat namespace of tools contributed by providers.

use crate::filters::CatalogFilters;
use crate::fingerprint::CatalogFingerprint;
use crate::snapshot::{ProviderEntry, RegistrySnapshot};
use arc_swap::ArcSwap;
use kun_ports::{
    HostError, ProviderKind, ProviderPolicy, ToolDescriptor, ToolHostContext, ToolProvider,
};
use serde::Serialize;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

/// A registration was refused; the registry is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Two providers share an id.
    #[error(
        "a provider with id `{id}` is already registered; unregister it first or use replace_provider"
    )]
    DuplicateProvider {
        /// The id.
        id: String,
    },
    /// Two tools share a name (one flat namespace across all providers).
    #[error(
        "tool `{name}` of provider `{second_provider}` collides with the tool of that name from provider `{first_provider}`; tool names must be unique across providers"
    )]
    DuplicateTool {
        /// The name.
        name: String,
        /// The provider that registered it first.
        first_provider: String,
        /// The provider that tried to register it again.
        second_provider: String,
    },
    /// A tool name model APIs would reject.
    #[error(
        "tool name `{name}` of provider `{provider}` is not accepted by model APIs; use 1-64 characters of a-z, A-Z, 0-9, `_` and `-`"
    )]
    InvalidToolName {
        /// The name.
        name: String,
        /// Its provider.
        provider: String,
    },
    /// A provider without an id.
    #[error("a provider has an empty id; give every provider a unique, non-empty id")]
    EmptyProviderId,
}

/// Whether an edit of the provider list changed anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    Changed,
    Unchanged,
}

/// One provider as diagnostics show it: id, kind, switches (and why it is off or broken).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderDiagnostic {
    /// The provider id.
    pub id: String,
    /// Its kind.
    pub kind: ProviderKind,
    /// `enabled`, `available` and the reason when either is false.
    pub policy: ProviderPolicy,
    /// How many tools it registered.
    pub tool_count: usize,
}

/// The registry of providers and their tools.
///
/// Writers build a complete new [`RegistrySnapshot`] and swap it in (`arc-swap`); readers
/// load the current one without locking. A failed change leaves the registry exactly as it
/// was, so every mutation is all or nothing — including [`CapabilityRegistry::register`],
/// unlike the upstream original which left half a provider behind on a name collision.
///
/// ```
/// use std::sync::Arc;
/// use kun_ports::{MockSandboxPolicy, ProviderKind, ProviderPolicy, ToolProvider, Tool};
/// use kun_registry::{CapabilityRegistry, CatalogFilters, RegistryError};
///
/// struct Empty(&'static str);
/// impl ToolProvider for Empty {
///     fn id(&self) -> &str { self.0 }
///     fn kind(&self) -> ProviderKind { ProviderKind::Extension }
///     fn policy(&self) -> ProviderPolicy { ProviderPolicy::ready() }
///     fn tools(&self) -> Vec<Arc<dyn Tool>> { Vec::new() }
/// }
///
/// let registry = CapabilityRegistry::new(CatalogFilters::new(Arc::new(MockSandboxPolicy::new())));
/// registry.register(Arc::new(Empty("ext"))).unwrap();
/// let err = registry.register(Arc::new(Empty("ext"))).unwrap_err();
/// assert_eq!(err, RegistryError::DuplicateProvider { id: "ext".into() });
/// assert_eq!(registry.diagnostics().len(), 1);
/// ```
pub struct CapabilityRegistry {
    filters: CatalogFilters,
    current: ArcSwap<RegistrySnapshot>,
    /// Serialises writers so that two concurrent changes cannot lose one another.
    writer: Mutex<()>,
}

impl fmt::Debug for CapabilityRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CapabilityRegistry")
            .field("snapshot", &*self.current.load())
            .field("filters", &self.filters)
            .finish()
    }
}

impl CapabilityRegistry {
    /// An empty registry listing through these filters.
    #[must_use]
    pub fn new(filters: CatalogFilters) -> Self {
        Self {
            filters,
            current: ArcSwap::from_pointee(RegistrySnapshot::empty()),
            writer: Mutex::new(()),
        }
    }

    /// A registry holding `providers` (in this order).
    ///
    /// # Errors
    /// As [`CapabilityRegistry::replace_providers`].
    pub fn with_providers(
        filters: CatalogFilters,
        providers: Vec<Arc<dyn ToolProvider>>,
    ) -> Result<Self, RegistryError> {
        let registry = Self::new(filters);
        registry.replace_providers(providers)?;
        Ok(registry)
    }

    /// The filters listings go through.
    #[must_use]
    pub const fn filters(&self) -> &CatalogFilters {
        &self.filters
    }

    /// The current snapshot. A turn that holds it keeps seeing exactly these tools.
    #[must_use]
    pub fn snapshot(&self) -> Arc<RegistrySnapshot> {
        self.current.load_full()
    }

    /// Adds a provider after the others.
    ///
    /// # Errors
    /// A duplicate provider id, a tool name already registered, or an invalid tool name. The
    /// registry is unchanged on error.
    pub fn register(&self, provider: Arc<dyn ToolProvider>) -> Result<(), RegistryError> {
        self.change(|entries| {
            entries.push(ProviderEntry::capture(provider));
            Edit::Changed
        })
    }

    /// Replaces the provider with the same id in place (keeping its position), or adds it
    /// after the others when no provider has that id. Re-registering a reconnected MCP server
    /// this way never registers it twice.
    ///
    /// # Errors
    /// A tool name registered by another provider, or an invalid tool name. The registry is
    /// unchanged on error.
    pub fn replace_provider(&self, provider: Arc<dyn ToolProvider>) -> Result<(), RegistryError> {
        self.change(|entries| {
            let entry = ProviderEntry::capture(provider);
            match entries.iter_mut().find(|e| e.id == entry.id) {
                Some(slot) => *slot = entry,
                None => entries.push(entry),
            }
            Edit::Changed
        })
    }

    /// Removes a provider and its tools; returns it, or `None` when no provider has that id.
    pub fn unregister(&self, id: &str) -> Option<Arc<dyn ToolProvider>> {
        let mut removed = None;
        let changed = self.change(|entries| {
            let position = entries.iter().position(|e| &*e.id == id);
            removed = position.map(|i| entries.remove(i).provider);
            if removed.is_some() {
                Edit::Changed
            } else {
                Edit::Unchanged
            }
        });
        // Removing a provider cannot create a conflict; if it ever did, nothing was removed.
        changed.ok().and(removed)
    }

    /// Replaces every provider at once: all or nothing.
    ///
    /// # Errors
    /// A duplicate provider id, a duplicate tool name, or an invalid tool name among
    /// `providers`. The previous content stays untouched on error.
    pub fn replace_providers(
        &self,
        providers: Vec<Arc<dyn ToolProvider>>,
    ) -> Result<(), RegistryError> {
        self.change(|entries| {
            *entries = providers.into_iter().map(ProviderEntry::capture).collect();
            Edit::Changed
        })
    }

    /// The providers in registration order, with their switches read now.
    #[must_use]
    pub fn diagnostics(&self) -> Vec<ProviderDiagnostic> {
        self.current
            .load()
            .provider_entries()
            .iter()
            .map(|entry| ProviderDiagnostic {
                id: entry.id.to_string(),
                kind: entry.kind,
                policy: entry.provider.policy(),
                tool_count: entry.tools.len(),
            })
            .collect()
    }

    /// The catalog for `ctx` from the current snapshot (see [`CatalogFilters::list`]).
    #[must_use]
    pub fn list_tools(&self, ctx: &ToolHostContext) -> Vec<ToolDescriptor> {
        self.filters.list(&self.current.load(), ctx)
    }

    /// The catalog for `ctx` and its fingerprint, both from the current snapshot: each
    /// registered tool is hashed once (see [`RegistrySnapshot::fingerprint`]), so polling the
    /// fingerprint of an unchanged catalog costs microseconds per hundred tools.
    ///
    /// ```
    /// use kun_ports::{MockSandboxPolicy, SandboxVerdict, ToolHostContext};
    /// use kun_registry::{CapabilityRegistry, CatalogFilters, fingerprint_catalog};
    /// use std::sync::Arc;
    /// let mut sandbox = MockSandboxPolicy::new();
    /// sandbox.expect_check_tool().return_const(SandboxVerdict::Allowed);
    /// let registry = CapabilityRegistry::new(CatalogFilters::new(Arc::new(sandbox)));
    /// let ctx = ToolHostContext::builder("thread", "turn").build();
    /// let (tools, fingerprint) = registry.fingerprinted_tools(&ctx);
    /// assert_eq!(fingerprint, fingerprint_catalog(&tools));
    /// assert_eq!(fingerprint.tool_count, 0);
    /// ```
    #[must_use]
    pub fn fingerprinted_tools(
        &self,
        ctx: &ToolHostContext,
    ) -> (Vec<ToolDescriptor>, CatalogFingerprint) {
        let snapshot = self.current.load();
        let tools = self.filters.list(&snapshot, ctx);
        let fingerprint = snapshot.fingerprint(&tools);
        (tools, fingerprint)
    }

    /// Resolves a tool name for a call in `ctx` from the current snapshot (see
    /// [`CatalogFilters::resolve`]).
    ///
    /// # Errors
    /// [`HostError::UnknownTool`] or [`HostError::NotAdvertised`].
    pub fn resolve(&self, name: &str, ctx: &ToolHostContext) -> Result<ToolDescriptor, HostError> {
        let snapshot = self.current.load();
        self.filters.resolve(&snapshot, name, None, ctx).cloned()
    }

    /// The kind of the provider serving `tool_name` (looked up, never guessed from a prefix).
    #[must_use]
    pub fn provider_kind_of(&self, tool_name: &str) -> Option<ProviderKind> {
        self.current.load().provider_kind_of(tool_name)
    }

    /// Applies `edit` to a copy of the provider list, builds a snapshot, and swaps it in only
    /// when the build succeeds.
    fn change(
        &self,
        edit: impl FnOnce(&mut Vec<ProviderEntry>) -> Edit,
    ) -> Result<(), RegistryError> {
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let mut entries = self.current.load().provider_entries().to_vec();
        if edit(&mut entries) == Edit::Unchanged {
            return Ok(());
        }
        let next = RegistrySnapshot::build(entries)?;
        self.current.store(Arc::new(next));
        Ok(())
    }
}
