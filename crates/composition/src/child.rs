//! The child registry: what a delegated agent may call.
//!
//! [`ChildRegistry`] is the only way to the child's catalog, and every way in —
//! [`ChildRegistry::with_providers`] (through [`ChildRegistryBuilder::add`]),
//! [`ChildRegistry::register`], [`ChildRegistry::replace_provider`], and so the MCP follow
//! and reconnect path of [`attach_mcp`](crate::attach_mcp) — takes `P: Delegable`. A
//! provider without the marker (such as `computer_use`'s) cannot reach a child agent: a
//! compile error, not a name list. The registry inside is never handed out, so there is no
//! type-erased way around the marker either.
//!
//! A provider that does not implement [`Delegable`] is refused at every entrance:
//!
//! ```compile_fail
//! use std::sync::Arc;
//! use kun_ports::{ProviderKind, ProviderPolicy, Tool, ToolProvider};
//! use kun_composition::ChildRegistryBuilder;
//!
//! /// Drives the desktop: main registry only, so it does not implement `Delegable`.
//! struct ComputerUse;
//! impl ToolProvider for ComputerUse {
//!     fn id(&self) -> &str { "computer_use" }
//!     fn kind(&self) -> ProviderKind { ProviderKind::Gui }
//!     fn policy(&self) -> ProviderPolicy { ProviderPolicy::ready() }
//!     fn tools(&self) -> Vec<Arc<dyn Tool>> { Vec::new() }
//! }
//!
//! let mut child = ChildRegistryBuilder::default();
//! child.add(Arc::new(ComputerUse)); // error: `ComputerUse` does not implement `Delegable`
//! ```
//!
//! ```compile_fail
//! # use std::sync::Arc;
//! # use kun_ports::{ProviderKind, ProviderPolicy, Tool, ToolProvider};
//! # use kun_composition::ChildRegistry;
//! # struct ComputerUse;
//! # impl ToolProvider for ComputerUse {
//! #     fn id(&self) -> &str { "computer_use" }
//! #     fn kind(&self) -> ProviderKind { ProviderKind::Gui }
//! #     fn policy(&self) -> ProviderPolicy { ProviderPolicy::ready() }
//! #     fn tools(&self) -> Vec<Arc<dyn Tool>> { Vec::new() }
//! # }
//! # fn wire(child: &ChildRegistry) {
//! // The path providers take after start-up (registering, an MCP server reconnecting):
//! child.replace_provider(Arc::new(ComputerUse)); // error: not `Delegable`
//! # }
//! ```
//!
//! Erasing the type first does not help: `dyn ToolProvider` is not `Delegable`, which is
//! what once let the MCP wiring put any provider into the child registry.
//!
//! ```compile_fail
//! # use std::sync::Arc;
//! # use kun_ports::{ProviderKind, ProviderPolicy, Tool, ToolProvider};
//! # use kun_composition::ChildRegistry;
//! # struct ComputerUse;
//! # impl ToolProvider for ComputerUse {
//! #     fn id(&self) -> &str { "computer_use" }
//! #     fn kind(&self) -> ProviderKind { ProviderKind::Gui }
//! #     fn policy(&self) -> ProviderPolicy { ProviderPolicy::ready() }
//! #     fn tools(&self) -> Vec<Arc<dyn Tool>> { Vec::new() }
//! # }
//! # fn wire(child: &ChildRegistry) {
//! let erased: Arc<dyn ToolProvider> = Arc::new(ComputerUse);
//! child.register(erased); // error: `dyn ToolProvider` does not implement `Delegable`
//! # }
//! ```
//!
//! The same provider becomes acceptable only by implementing the marker on purpose:
//!
//! ```
//! use std::sync::Arc;
//! use kun_ports::{Delegable, ProviderKind, ProviderPolicy, Tool, ToolProvider};
//! use kun_composition::{ChildRegistry, ChildRegistryBuilder};
//! use kun_registry::CatalogFilters;
//! use kun_sandbox::WorkspaceSandbox;
//!
//! struct Search;
//! impl ToolProvider for Search {
//!     fn id(&self) -> &str { "search" }
//!     fn kind(&self) -> ProviderKind { ProviderKind::Web }
//!     fn policy(&self) -> ProviderPolicy { ProviderPolicy::ready() }
//!     fn tools(&self) -> Vec<Arc<dyn Tool>> { Vec::new() }
//! }
//! impl Delegable for Search {}
//!
//! let mut builder = ChildRegistryBuilder::default();
//! builder.add(Arc::new(Search));
//! assert_eq!(builder.len(), 1);
//! let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
//! let child = ChildRegistry::with_providers(filters, builder).unwrap();
//! assert_eq!(child.diagnostics()[0].id, "search");
//! child.replace_provider(Arc::new(Search)).unwrap(); // replaced in place, not twice
//! assert_eq!(child.diagnostics().len(), 1);
//! ```

use kun_ports::{Delegable, HostError, ToolDescriptor, ToolHostContext, ToolProvider};
use kun_registry::{
    CapabilityRegistry, CatalogFilters, Host, HostBuilder, ProviderDiagnostic, RegistryError,
    RegistrySnapshot,
};
use std::sync::Arc;

/// Collects the first providers of the child registry; only [`Delegable`] ones type-check.
#[derive(Default)]
pub struct ChildRegistryBuilder {
    providers: Vec<Arc<dyn ToolProvider>>,
}

impl std::fmt::Debug for ChildRegistryBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.providers.iter().map(|p| p.id()))
            .finish()
    }
}

impl ChildRegistryBuilder {
    /// Adds a delegable provider.
    pub fn add<P: Delegable + 'static>(&mut self, provider: Arc<P>) -> &mut Self {
        self.providers.push(provider);
        self
    }

    /// How many providers were added.
    #[must_use]
    pub fn len(&self) -> usize {
        self.providers.len()
    }

    /// Whether none was added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }
}

/// The catalog a delegated agent sees: [`Delegable`] providers only (see the module docs).
/// Cloning shares the same registry.
#[derive(Clone)]
pub struct ChildRegistry {
    registry: Arc<CapabilityRegistry>,
}

impl std::fmt::Debug for ChildRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildRegistry")
            .field("registry", &self.registry)
            .finish()
    }
}

impl ChildRegistry {
    /// A child registry listing through `filters`, holding the builder's providers.
    ///
    /// # Errors
    /// Two providers with one id, or a tool name registered twice.
    pub fn with_providers(
        filters: CatalogFilters,
        providers: ChildRegistryBuilder,
    ) -> Result<Self, RegistryError> {
        let registry = CapabilityRegistry::with_providers(filters, providers.providers)?;
        Ok(Self {
            registry: Arc::new(registry),
        })
    }

    /// Adds a delegable provider after the others.
    ///
    /// # Errors
    /// As [`CapabilityRegistry::register`].
    pub fn register<P: Delegable + 'static>(&self, provider: Arc<P>) -> Result<(), RegistryError> {
        self.registry.register(provider)
    }

    /// Replaces the delegable provider with the same id in place (or adds it): how a
    /// reconnected MCP server is registered again without being registered twice.
    ///
    /// # Errors
    /// As [`CapabilityRegistry::replace_provider`].
    pub fn replace_provider<P: Delegable + 'static>(
        &self,
        provider: Arc<P>,
    ) -> Result<(), RegistryError> {
        self.registry.replace_provider(provider)
    }

    /// Removes a provider and its tools (taking out needs no marker).
    pub fn unregister(&self, id: &str) -> Option<Arc<dyn ToolProvider>> {
        self.registry.unregister(id)
    }

    /// The providers in registration order, with their switches read now.
    #[must_use]
    pub fn diagnostics(&self) -> Vec<ProviderDiagnostic> {
        self.registry.diagnostics()
    }

    /// The child's catalog for `ctx`.
    #[must_use]
    pub fn list_tools(&self, ctx: &ToolHostContext) -> Vec<ToolDescriptor> {
        self.registry.list_tools(ctx)
    }

    /// Resolves a tool name for a call in `ctx`.
    ///
    /// # Errors
    /// [`HostError::UnknownTool`] or [`HostError::NotAdvertised`].
    pub fn resolve(&self, name: &str, ctx: &ToolHostContext) -> Result<ToolDescriptor, HostError> {
        self.registry.resolve(name, ctx)
    }

    /// The current snapshot.
    #[must_use]
    pub fn snapshot(&self) -> Arc<RegistrySnapshot> {
        self.registry.snapshot()
    }

    /// A host builder over this catalog: where delegated children run, through every gate.
    /// The registry itself stays inside, so nothing can add an undelegable provider to it.
    pub fn host(&self) -> HostBuilder {
        Host::builder(Arc::clone(&self.registry))
    }
}
