//! Shared pieces of the end-to-end tests: the fixture server's command, a manager over it,
//! real registries kept in sync with the manager, and a host with a channel approval gate.
#![allow(dead_code, reason = "each test binary uses a different part")]

use kun_approval::{ApprovalInbox, channel_gate};
use kun_mcp::{McpManager, McpProvider, McpServerConfig, ReconnectPolicy, SearchSettings};
use kun_ports::{ToolHostContext, ToolProvider};
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::WorkspaceSandbox;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The fixture server built by Cargo for these tests.
pub const FIXTURE: &str = env!("CARGO_BIN_EXE_kun-mcp-fixture-server");

/// A fixture server named `name`, quick to reconnect (tests run on a loaded machine, so the
/// start-up and call timeouts stay generous).
pub fn fixture(name: &str) -> McpServerConfig {
    McpServerConfig::stdio(name, FIXTURE)
        .with_timeouts(Duration::from_secs(30), Duration::from_secs(30))
        .with_reconnect(ReconnectPolicy {
            initial_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(500),
            max_attempts: 20,
        })
}

/// Starts a manager with the real schema sanitiser.
pub async fn start(servers: Vec<McpServerConfig>, search: SearchSettings) -> McpManager {
    McpManager::builder()
        .servers(servers)
        .search(search)
        .start()
        .await
        .expect("valid configuration")
}

/// An empty registry over the real sandbox (unconfined: commands ask under workspace-write).
pub fn registry() -> Arc<CapabilityRegistry> {
    let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
    Arc::new(CapabilityRegistry::new(filters))
}

/// Puts every provider of the manager's current catalog into `registries` (replacing the
/// one with the same id), then keeps doing so on every change — what the assembly root does
/// for the main and the child registry.
pub fn keep_in_sync(
    manager: &McpManager,
    registries: Vec<Arc<CapabilityRegistry>>,
) -> tokio::task::JoinHandle<()> {
    let mut changes = manager.changes();
    let apply = move |providers: &[Arc<McpProvider>], registries: &[Arc<CapabilityRegistry>]| {
        for registry in registries {
            for provider in providers {
                registry
                    .replace_provider(Arc::clone(provider) as Arc<dyn ToolProvider>)
                    .expect("MCP providers never collide");
            }
        }
    };
    let first = changes.borrow_and_update().providers.clone();
    apply(&first, &registries);
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            let providers = changes.borrow_and_update().providers.clone();
            apply(&providers, &registries);
        }
    })
}

/// A host over `registry`.
pub fn host(registry: &Arc<CapabilityRegistry>) -> Host {
    Host::builder(Arc::clone(registry)).build()
}

/// A context for `workspace`, turn `turn`, with a channel approval gate.
pub fn context(workspace: &Path, turn: &str) -> (ToolHostContext, ApprovalInbox) {
    let (gate, inbox) = channel_gate();
    let ctx = ToolHostContext::builder("thread", turn)
        .workspace(workspace)
        .approver(Arc::new(gate))
        .build();
    (ctx, inbox)
}

/// Polls `condition` every 20 ms until it holds or `limit` passes.
pub async fn wait_until(limit: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether a process with this id exists (and is not a zombie).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}
