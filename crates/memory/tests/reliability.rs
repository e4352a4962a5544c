//! Several processes on one file, and files that cannot be used.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code"
)]

mod support;

use async_trait::async_trait;
use kun_memory::{MemoryProvider, SqliteMemoryStore};
use kun_ports::{
    MemoryErrorKind, MemoryListing, MemoryPlace, MemoryScope, MemoryStore, NewMemory, ProviderKind,
    ProviderPolicy, SandboxMode, ThreadMode, Tool, ToolContext, ToolFailure, ToolHost,
    ToolProvider, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

const WRITER_FILE: &str = "KUN_MEMORY_TEST_WRITER_FILE";
const WRITER_NAME: &str = "KUN_MEMORY_TEST_WRITER_NAME";
const PER_WRITER: usize = 200;

/// Not a test on its own: the body of each writer process of
/// `two_processes_writing_at_once_lose_nothing`, which runs this binary again with the
/// variables set.
#[test]
#[ignore = "run by two_processes_writing_at_once_lose_nothing in child processes"]
fn writer_process() {
    let (Some(file), Some(name)) = (
        std::env::var_os(WRITER_FILE),
        std::env::var(WRITER_NAME).ok(),
    ) else {
        eprintln!(
            "writer_process only runs as a child of two_processes_writing_at_once_lose_nothing"
        );
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = SqliteMemoryStore::open(Path::new(&file)).unwrap();
        let place = MemoryPlace::new("/shared", "shared");
        for i in 0..PER_WRITER {
            store
                .create(
                    &place,
                    NewMemory {
                        scope: MemoryScope::User,
                        content: format!("writer {name} fact {i}"),
                        tags: vec![name.clone()],
                    },
                )
                .await
                .unwrap_or_else(|e| panic!("writer {name}, memory {i}: {e}"));
        }
    });
}

#[tokio::test]
async fn two_processes_writing_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // The file does not exist yet: both processes also race to create and migrate it.
    let file = dir.path().join("memory.sqlite");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = ["alpha", "beta"]
        .into_iter()
        .map(|name| {
            Command::new(&exe)
                .args([
                    "writer_process",
                    "--exact",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(WRITER_FILE, &file)
                .env(WRITER_NAME, name)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        let status = child.wait().unwrap();
        assert!(status.success(), "a writer process failed: {status}");
    }
    let store = SqliteMemoryStore::open(&file).unwrap();
    assert_eq!(
        store.status().unwrap().memories,
        2 * PER_WRITER as u64,
        "400 rows, none lost"
    );
    let place = MemoryPlace::new("/shared", "shared");
    let mut contents = std::collections::BTreeSet::new();
    for offset in [0, 200] {
        let page = store
            .list(
                &place,
                &MemoryListing {
                    scopes: Vec::new(),
                    limit: 200,
                    offset,
                },
            )
            .await
            .unwrap();
        contents.extend(page.into_iter().map(|m| m.content));
    }
    assert_eq!(
        contents.len(),
        2 * PER_WRITER,
        "every memory distinct and readable"
    );
    for name in ["alpha", "beta"] {
        for i in [0, 99, 199] {
            assert!(
                contents.contains(&format!("writer {name} fact {i}")),
                "{name} {i}"
            );
        }
    }
}

/// A provider with one tool, to show the rest of the catalog still works.
struct Echo(ToolSpec);

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct EchoOut {
    text: String,
}

#[async_trait]
impl TypedTool for Echo {
    type Args = EchoArgs;
    type Output = EchoOut;
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn render(&self, out: &EchoOut) -> String {
        out.text.clone()
    }
    async fn run(&self, args: EchoArgs, _ctx: ToolContext<'_>) -> Result<EchoOut, ToolFailure> {
        Ok(EchoOut { text: args.text })
    }
}

struct Others;

impl ToolProvider for Others {
    fn id(&self) -> &str {
        "others"
    }
    fn kind(&self) -> ProviderKind {
        ProviderKind::Extension
    }
    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(Echo(ToolSpec::typed::<EchoArgs, EchoOut>(
            "echo", "Echoes.",
        )))]
    }
}

/// The provider is unavailable with a reason naming the file; the other provider's tools are
/// listed and callable.
async fn assert_unavailable_but_catalog_works(file: &Path, needle: &str) {
    let provider = MemoryProvider::open_sqlite(file);
    let policy = provider.policy();
    assert!(policy.enabled && !policy.available, "{policy:?}");
    let reason = policy.reason.clone().unwrap();
    assert!(
        reason.contains(&file.display().to_string()),
        "the reason names the file: {reason}"
    );
    assert!(reason.contains(needle), "{reason}");
    assert!(provider.tools().is_empty());

    let filters =
        kun_registry::CatalogFilters::new(Arc::new(kun_sandbox::WorkspaceSandbox::default()));
    let registry = Arc::new(
        kun_registry::CapabilityRegistry::with_providers(
            filters,
            vec![
                Arc::new(provider) as Arc<dyn ToolProvider>,
                Arc::new(Others),
            ],
        )
        .unwrap(),
    );
    let diagnostics = registry.diagnostics();
    let memory = diagnostics.iter().find(|p| &*p.id == "memory").unwrap();
    assert_eq!(memory.policy.reason.as_deref(), Some(reason.as_str()));
    let host = kun_registry::Host::builder(registry).build();
    let ws = support::workspace(None);
    let ctx = support::context(ws.path(), SandboxMode::WorkspaceWrite, ThreadMode::Agent);
    let names: Vec<String> = host
        .list_tools(&ctx)
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["echo"]);
    let result = host
        .execute(
            kun_ports::ToolCall::new("c1", "echo", serde_json::json!({"text": "still here"})),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(result.model_text(), "still here");
    let err = host
        .execute(
            kun_ports::ToolCall::new("c2", "memory_search", serde_json::json!({"query": "x"})),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("memory_search"), "{err}");
}

#[tokio::test]
async fn a_file_that_is_not_a_database_makes_the_provider_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.sqlite");
    std::fs::write(&file, vec![0x5a_u8; 8192]).unwrap();
    let before = std::fs::read(&file).unwrap();
    let err = SqliteMemoryStore::open(&file).unwrap_err();
    assert_eq!(err.kind, MemoryErrorKind::Unavailable);
    assert_unavailable_but_catalog_works(&file, "not a database").await;
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "the file is left as it was"
    );
}

#[tokio::test]
async fn a_damaged_database_header_makes_the_provider_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.sqlite");
    drop(SqliteMemoryStore::open(&file).unwrap());
    let mut bytes = std::fs::read(&file).unwrap();
    // Keep the magic string, garble the page size and the rest of the header.
    for byte in &mut bytes[16..100] {
        *byte = 0xff;
    }
    std::fs::write(&file, &bytes).unwrap();
    let _ = std::fs::remove_file(dir.path().join("memory.sqlite-wal"));
    let _ = std::fs::remove_file(dir.path().join("memory.sqlite-shm"));
    assert_unavailable_but_catalog_works(&file, "cannot be used").await;
}

#[tokio::test]
async fn a_newer_schema_makes_the_provider_unavailable_and_is_not_touched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.sqlite");
    drop(SqliteMemoryStore::open(&file).unwrap());
    {
        // A later build's file: schema version 99, journal back to a single file.
        let conn = rusqlite::Connection::open(&file).unwrap();
        conn.pragma_update(None, "journal_mode", "DELETE").unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let before = std::fs::read(&file).unwrap();
    assert_unavailable_but_catalog_works(&file, "schema version 99").await;
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "a newer file is never migrated or changed"
    );
    assert!(
        !dir.path().join("memory.sqlite-wal").exists(),
        "not even switched to WAL"
    );
}

#[tokio::test]
async fn a_missing_file_is_created_by_the_first_call_only() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data/kun/memory.sqlite");
    let provider = MemoryProvider::open_sqlite(&file);
    assert!(provider.policy().is_usable());
    assert!(!file.exists(), "listing the provider creates nothing");
    let host = {
        let filters =
            kun_registry::CatalogFilters::new(Arc::new(kun_sandbox::WorkspaceSandbox::default()));
        let registry = kun_registry::CapabilityRegistry::with_providers(
            filters,
            vec![Arc::new(provider) as Arc<dyn ToolProvider>],
        )
        .unwrap();
        kun_registry::Host::builder(Arc::new(registry)).build()
    };
    let ws = support::workspace(None);
    let ctx = support::context(ws.path(), SandboxMode::WorkspaceWrite, ThreadMode::Agent);
    assert_eq!(host.list_tools(&ctx).len(), 4);
    assert!(!file.exists());
    let made = host
        .execute(
            kun_ports::ToolCall::new(
                "c",
                "memory_create",
                serde_json::json!({"content": "x marks the spot", "scope": "user"}),
            ),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!made.is_error, "{made:?}");
    assert!(
        file.exists(),
        "the first write creates the file and its directories"
    );
}
