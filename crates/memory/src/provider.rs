//! The `memory` provider: the four memory tools on one store, or none with the reason the
//! store cannot be used.

use crate::LazySqliteStore;
use crate::tools::{MemoryCreateTool, MemoryDeleteTool, MemorySearchTool, MemoryUpdateTool};
use kun_ports::{Delegable, MemoryStore, ProviderKind, ProviderPolicy, Tool, ToolProvider};
use std::path::Path;
use std::sync::Arc;

/// The `memory` provider (kind `memory`).
///
/// It is [`Delegable`]: a child agent runs under its parent's sandbox and approval policy, so
/// its memory writes are `file_change` calls that prompt like the parent's; `memory_search`
/// only reads; and a child that inherits its parent's tools should see the same memories.
///
/// ```
/// use kun_memory::MemoryProvider;
/// use kun_ports::ToolProvider;
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("memory.sqlite"), b"not a database, not at all").unwrap();
/// let provider = MemoryProvider::open_sqlite(&dir.path().join("memory.sqlite"));
/// assert!(!provider.policy().available);
/// assert!(provider.policy().reason.unwrap().contains("memory.sqlite"));
/// ```
pub struct MemoryProvider {
    state: Result<Vec<Arc<dyn Tool>>, String>,
}

impl std::fmt::Debug for MemoryProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.state {
            Ok(tools) => f
                .debug_list()
                .entries(tools.iter().map(|t| t.spec().name.clone()))
                .finish(),
            Err(reason) => f.debug_tuple("Unavailable").field(reason).finish(),
        }
    }
}

impl MemoryProvider {
    /// The tools on `store`.
    #[must_use]
    pub fn new(store: Arc<dyn MemoryStore>) -> Self {
        let tools: Vec<Arc<dyn Tool>> = vec![
            Arc::new(MemoryCreateTool::new(Arc::clone(&store))),
            Arc::new(MemoryUpdateTool::new(Arc::clone(&store))),
            Arc::new(MemoryDeleteTool::new(Arc::clone(&store))),
            Arc::new(MemorySearchTool::new(store)),
        ];
        Self { state: Ok(tools) }
    }

    /// A provider without tools, unavailable for `reason`.
    #[must_use]
    pub fn unavailable(reason: impl Into<String>) -> Self {
        Self {
            state: Err(reason.into()),
        }
    }

    /// The tools on the SQLite file at `path`, or unavailable with the reason (naming the
    /// file) when an existing file cannot be used. A missing file is created by the first
    /// call ([`LazySqliteStore`]), so listing the catalog creates nothing.
    #[must_use]
    pub fn open_sqlite(path: &Path) -> Self {
        match LazySqliteStore::new(path) {
            Ok(store) => Self::new(Arc::new(store)),
            Err(err) => Self::unavailable(err.message),
        }
    }
}

impl ToolProvider for MemoryProvider {
    fn id(&self) -> &str {
        "memory"
    }

    fn kind(&self) -> ProviderKind {
        ProviderKind::Memory
    }

    fn policy(&self) -> ProviderPolicy {
        match &self.state {
            Ok(_) => ProviderPolicy::ready(),
            Err(reason) => ProviderPolicy::unavailable(reason.clone()),
        }
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.state.clone().unwrap_or_default()
    }
}

impl Delegable for MemoryProvider {}
