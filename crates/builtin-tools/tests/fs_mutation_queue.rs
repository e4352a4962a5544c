//! The file mutation queue across real processes, and how abandoned locks are taken over.
//!
//! The multi-process test re-runs this test binary: `child_appends_through_the_edit_tool`
//! does the child's work when `KUN_QUEUE_CHILD` is set and nothing otherwise.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::fs::{EditTool, LockError, LockSettings, MutationQueue};
use kun_builtin_tools::testing::SimpleSandbox;
use kun_ports::{NoProgress, Tool, ToolContext, ToolHostContext};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

const CHILDREN: usize = 4;
const EDITS_PER_CHILD: usize = 100;
const MARKER: &str = "END-OF-LOG";

fn settings(root: &Path, timeout: Duration) -> LockSettings {
    LockSettings {
        root: root.to_path_buf(),
        poll: Duration::from_millis(5),
        timeout,
        ownerless_stale_after: Duration::from_secs(600),
    }
}

#[tokio::test]
async fn child_appends_through_the_edit_tool() {
    let Ok(id) = std::env::var("KUN_QUEUE_CHILD") else {
        return; // Only runs as a child of `four_processes_lose_no_edit`.
    };
    let workspace = PathBuf::from(std::env::var("KUN_QUEUE_WORKSPACE").unwrap());
    let locks = PathBuf::from(std::env::var("KUN_QUEUE_LOCKS").unwrap());
    let tool = EditTool::new(Arc::new(MutationQueue::new(settings(
        &locks,
        Duration::from_secs(120),
    ))));
    let turn = ToolHostContext::builder("thread-child", "turn-1")
        .workspace(workspace)
        .build();
    for n in 0..EDITS_PER_CHILD {
        let ctx = ToolContext {
            turn: kun_ports::ToolTurn::of(&turn, &kun_ports::OpenCatalog),
            call_id: "call",
            sandbox: &SimpleSandbox,
            progress: &NoProgress,
        };
        let args = json!({"path": "log.txt", "oldText": MARKER, "newText": format!("child {id} edit {n}\n{MARKER}")});
        let result = tool.execute(args, ctx).await.unwrap();
        assert!(!result.is_error, "child {id} edit {n}: {}", result.output);
    }
}

#[test]
fn four_processes_lose_no_edit() {
    let workspace = tempfile::tempdir().unwrap();
    let locks = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    std::fs::write(root.join("log.txt"), format!("{MARKER}\n")).unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..CHILDREN)
        .map(|id| {
            Command::new(&exe)
                .args([
                    "child_appends_through_the_edit_tool",
                    "--exact",
                    "--test-threads=1",
                    "--nocapture",
                ])
                .env("KUN_QUEUE_CHILD", id.to_string())
                .env("KUN_QUEUE_WORKSPACE", &root)
                .env("KUN_QUEUE_LOCKS", locks.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a child process failed");
    }
    let log = std::fs::read_to_string(root.join("log.txt")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines.len(),
        CHILDREN * EDITS_PER_CHILD + 1,
        "every edit survives"
    );
    assert_eq!(lines.last(), Some(&MARKER));
    for id in 0..CHILDREN {
        let mine: Vec<usize> = lines
            .iter()
            .filter_map(|l| l.strip_prefix(&format!("child {id} edit ")))
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(
            mine,
            (0..EDITS_PER_CHILD).collect::<Vec<_>>(),
            "child {id}'s edits are all there, in order"
        );
    }
    assert!(
        std::fs::read_dir(locks.path()).unwrap().next().is_none(),
        "every lock was released"
    );
}

/// The pid of a process that has exited.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[tokio::test]
async fn a_dead_owners_lock_is_taken_over() {
    let locks = tempfile::tempdir().unwrap();
    let queue = MutationQueue::new(settings(locks.path(), Duration::from_secs(30)));
    let file = locks.path().join("target.txt");
    let lock_dir = queue.lock_dir_for(&MutationQueue::key_for(&file));
    std::fs::create_dir(&lock_dir).unwrap();
    let owner = json!({"pid": dead_pid(), "created_at_ms": 1, "key": file.display().to_string()});
    std::fs::write(lock_dir.join("owner.json"), owner.to_string()).unwrap();
    let guard = tokio::time::timeout(Duration::from_secs(20), queue.lock(&file))
        .await
        .unwrap()
        .unwrap();
    let now_owner: serde_json::Value =
        serde_json::from_slice(&std::fs::read(lock_dir.join("owner.json")).unwrap()).unwrap();
    assert_eq!(now_owner["pid"], std::process::id());
    drop(guard);
    assert!(!lock_dir.exists());
}

#[tokio::test]
async fn a_live_owners_lock_is_waited_for_then_times_out() {
    let locks = tempfile::tempdir().unwrap();
    let queue = MutationQueue::new(settings(locks.path(), Duration::from_millis(300)));
    let file = locks.path().join("target.txt");
    let lock_dir = queue.lock_dir_for(&MutationQueue::key_for(&file));
    std::fs::create_dir(&lock_dir).unwrap();
    let owner = json!({"pid": std::process::id(), "created_at_ms": 1, "key": "x"});
    std::fs::write(lock_dir.join("owner.json"), owner.to_string()).unwrap();
    let err = queue.lock(&file).await.unwrap_err();
    assert!(matches!(err, LockError::Timeout { .. }), "{err}");
    assert!(
        err.to_string().contains(&lock_dir.display().to_string()),
        "the error names the lock directory: {err}"
    );
    assert!(lock_dir.exists(), "a live owner's lock is left alone");
}

#[tokio::test]
async fn an_ownerless_lock_is_stale_only_after_ten_minutes() {
    let locks = tempfile::tempdir().unwrap();
    let queue = MutationQueue::new(settings(locks.path(), Duration::from_millis(300)));
    let file = locks.path().join("target.txt");
    let lock_dir = queue.lock_dir_for(&MutationQueue::key_for(&file));
    std::fs::create_dir(&lock_dir).unwrap();
    // Fresh and ownerless: someone is setting it up right now.
    assert!(matches!(
        queue.lock(&file).await,
        Err(LockError::Timeout { .. })
    ));
    assert!(lock_dir.exists());
    // Eleven minutes old and ownerless: abandoned.
    let old = SystemTime::now() - Duration::from_secs(11 * 60);
    std::fs::File::open(&lock_dir)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let guard = queue.lock(&file).await.unwrap();
    assert!(lock_dir.join("owner.json").exists());
    drop(guard);
    assert!(!lock_dir.exists());
}

#[tokio::test]
async fn same_file_mutations_in_one_process_run_one_at_a_time() {
    let locks = tempfile::tempdir().unwrap();
    let queue = Arc::new(MutationQueue::new(settings(
        locks.path(),
        Duration::from_secs(30),
    )));
    let file = locks.path().join("counter.txt");
    std::fs::write(&file, "0").unwrap();
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (queue, file) = (Arc::clone(&queue), file.clone());
            tokio::spawn(async move {
                let _guard = queue.lock(&file).await.unwrap();
                let n: u32 = std::fs::read_to_string(&file).unwrap().parse().unwrap();
                tokio::task::yield_now().await;
                tokio::time::sleep(Duration::from_millis(1)).await;
                std::fs::write(&file, (n + 1).to_string()).unwrap();
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "16");
}

#[tokio::test]
async fn a_lock_is_released_when_the_waiting_future_is_dropped() {
    let locks = tempfile::tempdir().unwrap();
    let queue = MutationQueue::new(settings(locks.path(), Duration::from_secs(30)));
    let file = locks.path().join("f.txt");
    let held = queue.lock(&file).await.unwrap();
    // A second locker waits in process; cancel it.
    assert!(
        tokio::time::timeout(Duration::from_millis(50), queue.lock(&file))
            .await
            .is_err()
    );
    drop(held);
    let again = tokio::time::timeout(Duration::from_secs(5), queue.lock(&file)).await;
    assert!(
        again.is_ok(),
        "the lock is free again after the holder and the cancelled waiter are gone"
    );
}
