//! A memory provider on a real SQLite file, behind the real host and sandbox.
#![allow(dead_code, reason = "each test file uses a part")]

use kun_memory::{MemoryProvider, SqliteMemoryStore};
use kun_ports::{
    ApprovalPolicy, MemoryStore, SandboxMode, ThreadMode, ToolCall, ToolHost, ToolHostContext,
    ToolProvider, ToolResult,
};
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::WorkspaceSandbox;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A data directory with the memory file, the store and a host serving its tools.
pub struct Rig {
    pub data: tempfile::TempDir,
    pub store: Arc<SqliteMemoryStore>,
    pub host: Host,
}

impl Rig {
    pub fn new() -> Self {
        let data = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteMemoryStore::open(&data.path().join("memory.sqlite")).unwrap());
        let host = host_for(Arc::new(MemoryProvider::new(
            Arc::clone(&store) as Arc<dyn MemoryStore>
        )));
        Self { data, store, host }
    }

    pub fn file(&self) -> PathBuf {
        self.data.path().join("memory.sqlite")
    }

    /// Calls `tool` from `workspace` under `sandbox`, approvals granted by policy.
    pub async fn call(
        &self,
        workspace: &Path,
        sandbox: SandboxMode,
        tool: &str,
        args: Value,
    ) -> ToolResult {
        self.call_in(workspace, sandbox, ThreadMode::Agent, tool, args)
            .await
    }

    pub async fn call_in(
        &self,
        workspace: &Path,
        sandbox: SandboxMode,
        mode: ThreadMode,
        tool: &str,
        args: Value,
    ) -> ToolResult {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let n = CALLS.fetch_add(1, Ordering::SeqCst);
        let ctx = context(workspace, sandbox, mode);
        self.host
            .execute(ToolCall::new(format!("call-{n}"), tool, args), &ctx)
            .await
            .unwrap_or_else(|e| panic!("{tool}: host error {e}"))
    }

    pub fn listed(&self, workspace: &Path, sandbox: SandboxMode, mode: ThreadMode) -> Vec<String> {
        self.host
            .list_tools(&context(workspace, sandbox, mode))
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    }
}

pub fn context(workspace: &Path, sandbox: SandboxMode, mode: ThreadMode) -> ToolHostContext {
    ToolHostContext::builder("thread", "turn")
        .workspace(workspace)
        .sandbox(sandbox)
        .approval(ApprovalPolicy::Auto)
        .mode(mode)
        .build()
}

pub fn host_for(provider: Arc<dyn ToolProvider>) -> Host {
    let filters = CatalogFilters::new(Arc::new(WorkspaceSandbox::default()));
    let registry = Arc::new(CapabilityRegistry::with_providers(filters, vec![provider]).unwrap());
    Host::builder(registry).build()
}

/// A workspace directory whose git `origin` is `remote` (none when `None`).
pub fn workspace(remote: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    if let Some(remote) = remote {
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git/config"),
            format!("[remote \"origin\"]\n\turl = {remote}\n"),
        )
        .unwrap();
    }
    dir
}
