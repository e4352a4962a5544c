//! Edit that never misleads: `read`, `edit` and `write` through the real host pipeline and
//! read tracker (step 9), on real files.
//!
//! | situation | answer |
//! |---|---|
//! | edit of a file never read | `read_before_edit_required` |
//! | full read, then an `oldText` that is not in the file | `edit_not_found` with the closest region |
//! | edit, then an edit of the text it just inserted | applied, no re-read |
//! | write, then an edit of what it wrote | applied, no re-read |
//! | read, then the file changes on disk, then an edit | `read_before_edit_required` (changed on disk) |
//! | partial read, unchanged file | the edit runs |

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::fs::{LockSettings, MutationQueue, edit_tool, read_tool, write_tool};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{
    ApprovalPolicy, ProviderKind, ProviderPolicy, Tool, ToolCall, ToolHost, ToolProvider,
    ToolResult,
};
use kun_registry::read_tracker::InMemoryReadTracker;
use kun_registry::{CapabilityRegistry, CatalogFilters, Host};
use kun_sandbox::WorkspaceSandbox;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Files(Vec<Arc<dyn Tool>>);

impl ToolProvider for Files {
    fn id(&self) -> &str {
        "builtin"
    }
    fn kind(&self) -> ProviderKind {
        ProviderKind::BuiltIn
    }
    fn policy(&self) -> ProviderPolicy {
        ProviderPolicy::ready()
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.0.clone()
    }
}

struct Session {
    ws: TestWorkspace,
    host: Host,
    _locks: tempfile::TempDir,
    calls: AtomicUsize,
}

impl Session {
    fn new() -> Self {
        let locks = tempfile::tempdir().unwrap();
        let queue = Arc::new(MutationQueue::new(LockSettings {
            root: locks.path().to_path_buf(),
            ..LockSettings::default()
        }));
        let tools = vec![
            read_tool(OutputLimits::new(3, 50 * 1024)),
            edit_tool(Arc::clone(&queue)),
            write_tool(queue),
        ];
        let registry = CapabilityRegistry::with_providers(
            CatalogFilters::new(Arc::new(WorkspaceSandbox::default())),
            vec![Arc::new(Files(tools)) as Arc<dyn ToolProvider>],
        )
        .unwrap();
        let tracker = InMemoryReadTracker::with_normaliser(|text: &str| {
            kun_builtin_tools::fs::normalize_for_fuzzy_match(text)
        });
        let host = Host::builder(Arc::new(registry))
            .read_tracker(Arc::new(tracker))
            .build();
        Self {
            ws: TestWorkspace::new(),
            host,
            _locks: locks,
            calls: AtomicUsize::new(0),
        }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        let mut ctx = self.ws.ctx.clone();
        ctx.approval = ApprovalPolicy::Auto;
        let id = format!("call-{}", self.calls.fetch_add(1, Ordering::SeqCst));
        self.host
            .execute(ToolCall::new(id, tool, args), &ctx)
            .await
            .unwrap()
    }
}

const LIB: &str = "fn one() {}\nfn two() {}\n";

#[tokio::test]
async fn an_edit_of_a_file_never_read_asks_for_a_read() {
    let s = Session::new();
    s.ws.write("lib.rs", LIB);
    let result = s
        .call(
            "edit",
            json!({"path": "lib.rs", "oldText": "fn one() {}", "newText": "fn uno() {}"}),
        )
        .await;
    assert_eq!(
        result.error_code(),
        Some("read_before_edit_required"),
        "{}",
        result.output
    );
    assert_eq!(s.ws.read("lib.rs"), LIB, "nothing changed");
}

#[tokio::test]
async fn text_missing_after_a_full_read_is_edit_not_found_with_the_closest_region() {
    let s = Session::new();
    s.ws.write("lib.rs", LIB);
    assert!(!s.call("read", json!({"path": "lib.rs"})).await.is_error);
    let result = s
        .call(
            "edit",
            json!({"path": "lib.rs", "oldText": "fn three() {}\nfn two() {}", "newText": "x"}),
        )
        .await;
    assert_eq!(
        result.error_code(),
        Some("edit_not_found"),
        "{}",
        result.output
    );
    let text = result.model_text();
    assert!(text.contains("closest region starts at line"), "{text}");
    assert!(text.contains("fn two() {}"), "{text}");
}

#[tokio::test]
async fn chained_edits_need_no_re_read() {
    let s = Session::new();
    s.ws.write("lib.rs", LIB);
    assert!(!s.call("read", json!({"path": "lib.rs"})).await.is_error);
    let first = s
        .call("edit", json!({"path": "lib.rs", "oldText": "fn two() {}", "newText": "fn two() {}\nfn three() {}"}))
        .await;
    assert!(!first.is_error, "{}", first.output);
    let second = s
        .call("edit", json!({"path": "lib.rs", "oldText": "fn three() {}", "newText": "fn three() -> u8 { 3 }"}))
        .await;
    assert!(
        !second.is_error,
        "the text the first edit inserted: {}",
        second.output
    );
    assert_eq!(
        s.ws.read("lib.rs"),
        "fn one() {}\nfn two() {}\nfn three() -> u8 { 3 }\n"
    );
}

#[tokio::test]
async fn a_written_file_can_be_edited_without_a_read() {
    let s = Session::new();
    let written = s
        .call("write", json!({"path": "new.rs", "content": LIB}))
        .await;
    assert!(!written.is_error, "{}", written.output);
    let edited = s
        .call(
            "edit",
            json!({"path": "new.rs", "oldText": "fn one() {}", "newText": "fn uno() {}"}),
        )
        .await;
    assert!(!edited.is_error, "{}", edited.output);
    assert_eq!(s.ws.read("new.rs"), "fn uno() {}\nfn two() {}\n");
}

#[tokio::test]
async fn a_file_changed_on_disk_since_the_read_asks_for_a_new_read() {
    let s = Session::new();
    s.ws.write("lib.rs", LIB);
    assert!(!s.call("read", json!({"path": "lib.rs"})).await.is_error);
    // Another program rewrites it (same text plus a line): the revision changes.
    std::thread::sleep(std::time::Duration::from_millis(10));
    s.ws.write("lib.rs", format!("{LIB}fn extra() {{}}\n"));
    let result = s
        .call(
            "edit",
            json!({"path": "lib.rs", "oldText": "fn one() {}", "newText": "fn uno() {}"}),
        )
        .await;
    assert_eq!(
        result.error_code(),
        Some("read_before_edit_required"),
        "{}",
        result.output
    );
    assert!(
        result.model_text().contains("changed on disk"),
        "{}",
        result.model_text()
    );
    assert!(
        s.ws.read("lib.rs").contains("fn one() {}"),
        "nothing changed"
    );
    // A new read lets it through.
    assert!(!s.call("read", json!({"path": "lib.rs"})).await.is_error);
    let again = s
        .call(
            "edit",
            json!({"path": "lib.rs", "oldText": "fn one() {}", "newText": "fn uno() {}"}),
        )
        .await;
    assert!(!again.is_error, "{}", again.output);
}

#[tokio::test]
async fn a_partial_read_of_an_unchanged_file_lets_the_edit_run() {
    let s = Session::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    s.ws.write("long.txt", &text);
    let page = s.call("read", json!({"path": "long.txt"})).await;
    assert!(
        page.model_text()
            .starts_with("lines 1–3 of 10; continue with offset 4")
    );
    let edited = s
        .call(
            "edit",
            json!({"path": "long.txt", "oldText": "line 9\n", "newText": "line nine\n"}),
        )
        .await;
    assert!(!edited.is_error, "{}", edited.output);
}

#[tokio::test]
async fn a_read_counts_for_an_edit_that_spells_the_path_another_way() {
    let s = Session::new();
    s.ws.write("src/lib.rs", LIB);
    let read = s.call("read", json!({"path": "./src/../src/lib.rs"})).await;
    assert!(!read.is_error, "{}", read.output);
    let absolute = s.ws.path("src/lib.rs").to_string_lossy().into_owned();
    let edited = s
        .call(
            "edit",
            json!({"path": absolute, "oldText": "fn one() {}", "newText": "fn uno() {}"}),
        )
        .await;
    assert!(!edited.is_error, "{}", edited.output);
    // A file next to it, never read, is still refused.
    s.ws.write("src/other.rs", LIB);
    let refused = s
        .call(
            "edit",
            json!({"path": "src/./other.rs", "oldText": "fn one() {}", "newText": "x"}),
        )
        .await;
    assert_eq!(refused.error_code(), Some("read_before_edit_required"));
}
