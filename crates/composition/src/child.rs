//! The child registry: what a delegated agent may call.
//!
//! It accepts only providers that implement [`Delegable`], so a provider without it (such as
//! `computer_use`'s) cannot reach a child agent: a compile error, not a name list.
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
//! The same provider becomes acceptable only by implementing the marker on purpose:
//!
//! ```
//! use std::sync::Arc;
//! use kun_ports::{Delegable, ProviderKind, ProviderPolicy, Tool, ToolProvider};
//! use kun_composition::ChildRegistryBuilder;
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
//! let mut child = ChildRegistryBuilder::default();
//! child.add(Arc::new(Search));
//! assert_eq!(child.len(), 1);
//! ```

use kun_ports::{Delegable, ToolProvider};
use std::sync::Arc;

/// Collects the providers of the child registry; only [`Delegable`] ones type-check.
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

    /// The providers, for the registry constructor.
    #[must_use]
    pub fn into_providers(self) -> Vec<Arc<dyn ToolProvider>> {
        self.providers
    }
}
