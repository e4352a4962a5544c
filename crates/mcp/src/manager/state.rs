//! The manager's shared state: per-server records and providers, the search decision, and
//! publishing a new [`McpCatalog`] on every change.

use crate::access::ServerAccess;
use crate::config::{McpServerConfig, SearchSettings};
use crate::link::ServerLink;
use crate::naming::{NameLimit, NameTable};
use crate::provider::{GatewayMode, McpProvider};
use crate::record::{McpToolRecord, SchemaSanitizer, records_for_server};
use crate::remote::RemoteTool;
use crate::search::gateway::{GatewayCatalog, ServerView, gateway_tools};
use crate::status::{ServerState, ServerStatus};
use crate::tool::{Listing, McpTool};
use kun_ports::Tool;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::{Notify, watch};

/// What the manager publishes: every provider, and the reverse map of every tool name.
#[derive(Debug, Clone)]
pub struct McpCatalog {
    /// Increases with every change (state or tools).
    pub version: u64,
    /// One provider per configured server, in configuration order, then `mcp:search`.
    pub providers: Vec<Arc<McpProvider>>,
    /// Whether search mode is on.
    pub search_active: bool,
    /// Catalog name → (server, original tool name), for every tool of every server.
    pub names: NameTable,
    /// Each server's state when this catalog was published, in configuration order.
    pub statuses: Vec<ServerStatus>,
}

/// One configured server and what lives as long as it does.
pub(crate) struct ServerSlot {
    pub config: McpServerConfig,
    pub slug: String,
    pub access: Arc<ServerAccess>,
    pub link: Arc<ServerLink>,
    pub status: Arc<Mutex<ServerStatus>>,
    /// Asks the supervisor to list the tools again.
    pub refresh: Notify,
    /// Whether a supervisor was started for it (at most once).
    pub launched: AtomicBool,
}

impl ServerSlot {
    pub(crate) fn status(&self) -> MutexGuard<'_, ServerStatus> {
        self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct ServerTools {
    remote: Vec<RemoteTool>,
    records: Vec<Arc<McpToolRecord>>,
}

#[derive(Default)]
struct CatalogState {
    version: u64,
    tools: BTreeMap<String, ServerTools>,
    providers: BTreeMap<String, Arc<McpProvider>>,
    gateway: Option<Arc<McpProvider>>,
    search_active: bool,
}

/// Everything the supervisors and the manager share.
pub(crate) struct Shared {
    pub search: SearchSettings,
    pub sanitizer: SchemaSanitizer,
    pub name_limit: NameLimit,
    pub servers: Vec<Arc<ServerSlot>>,
    state: Mutex<CatalogState>,
    tx: watch::Sender<Arc<McpCatalog>>,
}

impl Shared {
    pub(crate) fn new(
        search: SearchSettings,
        sanitizer: SchemaSanitizer,
        name_limit: NameLimit,
        servers: Vec<Arc<ServerSlot>>,
    ) -> Arc<Self> {
        let (tx, _) = watch::channel(Arc::new(McpCatalog {
            version: 0,
            providers: Vec::new(),
            search_active: false,
            names: NameTable::new(),
            statuses: Vec::new(),
        }));
        let shared = Arc::new(Self {
            search,
            sanitizer,
            name_limit,
            servers,
            state: Mutex::new(CatalogState::default()),
            tx,
        });
        {
            let mut state = shared.lock();
            shared.rebuild_all(&mut state);
            shared.publish(&mut state);
        }
        shared
    }

    fn lock(&self) -> MutexGuard<'_, CatalogState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<Arc<McpCatalog>> {
        self.tx.subscribe()
    }

    pub(crate) fn current(&self) -> Arc<McpCatalog> {
        self.tx.borrow().clone()
    }

    /// Records a state change and publishes.
    pub(crate) fn set_state(&self, slot: &ServerSlot, state: ServerState, pid: Option<u32>) {
        {
            let mut status = slot.status();
            status.state = state;
            status.pid = pid;
        }
        let mut catalog = self.lock();
        self.publish(&mut catalog);
    }

    /// Records a server's tool list; rebuilds its provider (and the gateway) when it changed.
    pub(crate) fn set_tools(&self, slot: &ServerSlot, remote: Vec<RemoteTool>) {
        let mut state = self.lock();
        let name = &slot.config.name;
        let unchanged = state.tools.get(name).is_some_and(|t| t.remote == remote);
        if !unchanged {
            let records = records_for_server(
                name,
                &slot.slug,
                remote.clone(),
                &self.sanitizer,
                self.name_limit,
            )
            .into_iter()
            .map(Arc::new)
            .collect();
            state
                .tools
                .insert(name.clone(), ServerTools { remote, records });
            let count: usize = state.tools.values().map(|t| t.records.len()).sum();
            let search_active = self.search.uses_search(count);
            if search_active == state.search_active {
                let provider = self.server_provider(slot, &state);
                state.providers.insert(name.clone(), provider);
                state.gateway = Some(self.gateway_provider(&state));
            } else {
                state.search_active = search_active;
                self.rebuild_all(&mut state);
            }
        }
        self.publish(&mut state);
    }

    fn rebuild_all(&self, state: &mut CatalogState) {
        let count: usize = state.tools.values().map(|t| t.records.len()).sum();
        state.search_active = self.search.uses_search(count);
        for slot in &self.servers {
            let provider = self.server_provider(slot, state);
            state.providers.insert(slot.config.name.clone(), provider);
        }
        state.gateway = Some(self.gateway_provider(state));
    }

    fn server_provider(&self, slot: &ServerSlot, state: &CatalogState) -> Arc<McpProvider> {
        let listing = if state.search_active {
            Listing::Hidden
        } else {
            Listing::Listed
        };
        let tools: Vec<Arc<dyn Tool>> = state
            .tools
            .get(&slot.config.name)
            .map(|t| {
                t.records
                    .iter()
                    .map(|record| {
                        Arc::new(McpTool::new(
                            Arc::clone(record),
                            Arc::clone(&slot.access),
                            Arc::clone(&slot.link),
                            listing,
                        )) as Arc<dyn Tool>
                    })
                    .collect()
            })
            .unwrap_or_default();
        Arc::new(McpProvider::server(
            slot.config.provider_id(),
            Arc::clone(&slot.status),
            tools,
        ))
    }

    fn gateway_provider(&self, state: &CatalogState) -> Arc<McpProvider> {
        if !state.search_active {
            return Arc::new(McpProvider::gateway(GatewayMode::Off, Vec::new()));
        }
        let mut records: Vec<Arc<McpToolRecord>> = state
            .tools
            .values()
            .flat_map(|t| t.records.iter().cloned())
            .collect();
        records.sort_by(|a, b| a.name.cmp(&b.name));
        let servers: HashMap<String, ServerView> = self
            .servers
            .iter()
            .map(|slot| {
                let view = ServerView {
                    access: Arc::clone(&slot.access),
                    status: Arc::clone(&slot.status),
                };
                (slot.config.name.clone(), view)
            })
            .collect();
        let catalog = Arc::new(GatewayCatalog::new(records, servers, self.search));
        Arc::new(McpProvider::gateway(
            GatewayMode::Active,
            gateway_tools(&catalog),
        ))
    }

    fn publish(&self, state: &mut CatalogState) {
        state.version += 1;
        let mut providers: Vec<Arc<McpProvider>> = self
            .servers
            .iter()
            .filter_map(|slot| state.providers.get(&slot.config.name).cloned())
            .collect();
        providers.extend(state.gateway.clone());
        let mut names = NameTable::new();
        for tools in state.tools.values() {
            for record in &tools.records {
                names.insert(record.name.clone(), record.address.clone());
            }
        }
        self.tx.send_replace(Arc::new(McpCatalog {
            version: state.version,
            providers,
            search_active: state.search_active,
            names,
            statuses: self.servers.iter().map(|s| s.status().clone()).collect(),
        }));
    }
}
