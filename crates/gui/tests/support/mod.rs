//! A real host (kun-registry's pipeline over kun-sandbox's policy) around kun-gui's
//! providers, and a context builder.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod xvfb;

use kun_ports::{
    ToolCall, ToolHost, ToolHostContext, ToolHostContextBuilder, ToolProvider, ToolResult,
};
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::WorkspaceSandbox;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// A host over these providers.
pub fn host(providers: Vec<Arc<dyn ToolProvider>>) -> Host {
    let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
    let registry = CapabilityRegistry::with_providers(filters, providers).unwrap();
    Host::builder(Arc::new(registry)).build()
}

/// A context in `workspace`, thread `thread`, a fresh turn id each call.
pub fn ctx(workspace: &Path, thread: &str) -> ToolHostContextBuilder {
    use std::sync::atomic::{AtomicU64, Ordering};
    static TURN: AtomicU64 = AtomicU64::new(0);
    let turn = format!("turn-{}", TURN.fetch_add(1, Ordering::Relaxed));
    ToolHostContext::builder(thread, turn).workspace(workspace.to_path_buf())
}

/// Runs one call.
pub async fn call(host: &Host, ctx: &ToolHostContext, tool: &str, args: Value) -> ToolResult {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALL: AtomicU64 = AtomicU64::new(0);
    let id = format!("call-{}", CALL.fetch_add(1, Ordering::Relaxed));
    host.execute(ToolCall::new(id, tool, args), ctx)
        .await
        .unwrap_or_else(|err| panic!("{tool}: {err}"))
}

/// The names a listing shows.
pub fn listed(host: &Host, ctx: &ToolHostContext) -> Vec<String> {
    host.list_tools(ctx)
        .iter()
        .map(|t| t.name().to_owned())
        .collect()
}
