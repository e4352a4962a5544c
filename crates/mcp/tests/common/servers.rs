//! Third-party MCP servers installed by `.ci/install-mcp.sh` (pinned versions), and a real
//! registry and host to put them behind.
//!
//! A server is found through its environment variable, else at the path the install script
//! uses. When it is missing, a test fails under `CI=true` and is skipped (with a message)
//! otherwise.

use kun_approval::{ApprovalInbox, channel_gate};
use kun_mcp::{McpManager, McpProvider};
use kun_ports::{ToolHostContext, ToolProvider};
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::WorkspaceSandbox;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn locate(env: &str, default: &str, install_hint: &str) -> Option<PathBuf> {
    let path = std::env::var_os(env).map_or_else(|| workspace_root().join(default), PathBuf::from);
    if path.is_file() {
        return Some(path);
    }
    let message = format!(
        "{} not found (set {env}, or run {install_hint})",
        path.display()
    );
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true: {message}"
    );
    eprintln!("skipping: {message}");
    None
}

/// `@modelcontextprotocol/server-everything`'s launcher.
pub fn everything() -> Option<PathBuf> {
    locate(
        "KUN_MCP_SERVER_EVERYTHING",
        "target/ci-node/node_modules/.bin/mcp-server-everything",
        ".ci/install-mcp.sh",
    )
}

/// `mcp-server-time` (PyPI).
pub fn time() -> Option<PathBuf> {
    locate(
        "KUN_MCP_SERVER_TIME",
        "target/ci-venv/bin/mcp-server-time",
        ".ci/install-mcp.sh",
    )
}

/// A registry over the real (unconfined) sandbox, filled with the manager's providers.
pub fn registry_with(manager: &McpManager) -> Arc<CapabilityRegistry> {
    let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
    let providers: Vec<Arc<dyn ToolProvider>> = manager
        .providers()
        .into_iter()
        .map(|p: Arc<McpProvider>| p as Arc<dyn ToolProvider>)
        .collect();
    Arc::new(CapabilityRegistry::with_providers(filters, providers).unwrap())
}

/// A host over `registry`.
pub fn host(registry: &Arc<CapabilityRegistry>) -> Host {
    Host::builder(Arc::clone(registry)).build()
}

/// A context in `workspace` with a channel approval gate.
pub fn context(workspace: &Path, turn: &str) -> (ToolHostContext, ApprovalInbox) {
    let (gate, inbox) = channel_gate();
    let ctx = ToolHostContext::builder("thread", turn)
        .workspace(workspace)
        .approver(Arc::new(gate))
        .build();
    (ctx, inbox)
}

/// Waits (up to 15 s) until process `pid` is gone or a zombie.
pub async fn wait_gone(pid: u32) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let gone = stat.is_empty()
            || stat
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'));
        if gone {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "process {pid} still runs"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
