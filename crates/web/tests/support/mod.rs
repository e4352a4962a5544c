//! The web tools behind the real host (so step 17 runs), against servers on 127.0.0.1.
#![allow(dead_code, reason = "each test file uses a part")]

use kun_ports::{ApprovalPolicy, ToolCall, ToolHost, ToolHostContext, ToolProvider, ToolResult};
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::WorkspaceSandbox;
use kun_web::{AddressGuard, PrivateAddresses, WebOptions, WebProvider};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub fn host_for(providers: Vec<Arc<dyn ToolProvider>>) -> Host {
    let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
    let registry = Arc::new(CapabilityRegistry::with_providers(filters, providers).unwrap());
    Host::builder(registry).build()
}

/// Options for tests: private addresses allowed (the servers are on 127.0.0.1), a short
/// time limit.
pub fn options() -> WebOptions {
    WebOptions {
        private_addresses: PrivateAddresses::Allowed,
        timeout: Duration::from_secs(10),
        user_agent: "kun-tools-test/1".to_owned(),
        ..WebOptions::default()
    }
}

/// A host with `web_fetch` on these options and guard.
pub fn fetch_host(options: &WebOptions, guard: AddressGuard) -> Host {
    host_for(vec![Arc::new(WebProvider::with_guard(options, guard))])
}

/// A host with `web_fetch` that may reach private addresses.
pub fn open_host() -> Host {
    let options = options();
    fetch_host(&options, AddressGuard::new(PrivateAddresses::Allowed))
}

pub fn context() -> ToolHostContext {
    ToolHostContext::builder("thread", "turn")
        .workspace(std::env::temp_dir())
        .approval(ApprovalPolicy::Auto)
        .build()
}

pub async fn call(host: &Host, tool: &str, args: Value) -> ToolResult {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let n = CALLS.fetch_add(1, Ordering::SeqCst);
    host.execute(ToolCall::new(format!("call-{n}"), tool, args), &context())
        .await
        .unwrap_or_else(|e| panic!("{tool}: host error {e}"))
}
