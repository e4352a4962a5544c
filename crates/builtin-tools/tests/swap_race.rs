//! The check-then-open race, run for real: a thread keeps swapping `ws/d1` between a real
//! directory and a symbolic link to a directory outside the workspace while `read` and
//! `write` work on `d1/f` and `d1/sub/f` 2,000 times each, checked by the real sandbox (`WorkspaceSandbox`).
//! Opening from the root's handle without following links means no write lands outside and
//! no read returns outside content (the path-based code let 15 of 2,000 writes and 5 of
//! 2,000 reads through). Every call answers with a result, never a panic.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::fs::{LockSettings, MutationQueue, ReadTool, WriteTool};
use kun_builtin_tools::search::{GlobTool, GrepTool, LsTool};
use kun_builtin_tools::testing::TestWorkspace;
use kun_ports::{NoProgress, Tool, ToolContext, ToolResult};
use kun_sandbox::WorkspaceSandbox;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const CALLS: usize = 2_000;
const OUTSIDE: &str = "OUTSIDE-SECRET\n";

/// Exchanges `d1` with `.d1-other` (the real directory and the link, atomically with
/// `RENAME_EXCHANGE`, so `d1` always exists) until told to stop; counts exchanges.
fn swapper(root: PathBuf, stop: Arc<AtomicBool>, flips: Arc<AtomicUsize>) {
    let dir = std::fs::File::open(&root).unwrap();
    while !stop.load(Ordering::Relaxed) {
        rustix::fs::renameat_with(
            &dir,
            "d1",
            &dir,
            ".d1-other",
            rustix::fs::RenameFlags::EXCHANGE,
        )
        .unwrap();
        flips.fetch_add(1, Ordering::Relaxed);
        // A pause so that both states last long enough to pass the check.
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

async fn call(
    tool: &dyn Tool,
    ws: &TestWorkspace,
    sandbox: &WorkspaceSandbox,
    args: Value,
) -> ToolResult {
    let ctx = ToolContext {
        turn: kun_ports::ToolTurn::of(&ws.ctx, &kun_ports::OpenCatalog),
        call_id: "call-race",
        sandbox,
        progress: &NoProgress,
    };
    tool.execute(args, ctx)
        .await
        .expect("a swapped path is an error result, never a tool failure")
}

/// The outside tree: `f`, `sub/f` and `sub/leak-marker`, each holding [`OUTSIDE`].
fn plant_outside(outside: &Path) {
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::write(outside.join("f"), OUTSIDE).unwrap();
    std::fs::write(outside.join("sub/f"), OUTSIDE).unwrap();
    std::fs::write(outside.join("sub/leak-marker"), OUTSIDE).unwrap();
}

/// Every file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// Whether the outside tree changed in any way; restores it.
fn outside_touched(outside: &Path) -> bool {
    let found = files(outside);
    let touched = found.len() != 3
        || found
            .iter()
            .any(|file| std::fs::read_to_string(file).unwrap_or_default() != OUTSIDE);
    if touched {
        std::fs::remove_dir_all(outside).unwrap();
        std::fs::create_dir(outside).unwrap();
        plant_outside(outside);
    }
    touched
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swapped_directory_never_leaks_reads_or_writes_outside() {
    let ws = TestWorkspace::new();
    ws.write("d1/f", "inside\n");
    ws.write("d1/sub/f", "inside\n");
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().canonicalize().unwrap();
    plant_outside(&outside);
    std::os::unix::fs::symlink(&outside, ws.path(".d1-other")).unwrap();

    let sandbox = WorkspaceSandbox::default();
    let locks = tempfile::tempdir().unwrap();
    let queue = Arc::new(MutationQueue::new(LockSettings {
        root: locks.path().to_path_buf(),
        ..LockSettings::default()
    }));
    let read = ReadTool::new(OutputLimits::default());
    let write = WriteTool::new(queue);

    let stop = Arc::new(AtomicBool::new(false));
    let flips = Arc::new(AtomicUsize::new(0));
    let swap = std::thread::spawn({
        let (root, stop, flips) = (ws.root().to_path_buf(), stop.clone(), flips.clone());
        move || swapper(root, stop, flips)
    });

    let (mut reads_outside, mut reads_ok, mut reads_refused) = (0, 0, 0);
    let (mut writes_outside, mut writes_ok, mut writes_refused) = (0, 0, 0);
    let mut codes = std::collections::BTreeMap::<String, usize>::new();
    let mut others = Vec::new();
    for i in 0..CALLS {
        // Half the calls go one level deeper: `d1` is then a directory in the middle.
        let path = if i % 2 == 0 { "d1/f" } else { "d1/sub/f" };
        let out = call(&read, &ws, &sandbox, json!({"path": path})).await;
        if out.output.to_string().contains("OUTSIDE-SECRET") {
            reads_outside += 1;
        }
        if out.is_error {
            reads_refused += 1;
            *codes
                .entry(format!("read {}", out.output["code"]))
                .or_default() += 1;
            if !out.output["code"]
                .as_str()
                .unwrap_or("")
                .starts_with("sandbox_")
            {
                others.push(out.output.to_string());
            }
        } else {
            reads_ok += 1;
        }
        let out = call(
            &write,
            &ws,
            &sandbox,
            json!({"path": path, "content": format!("written {i}\n")}),
        )
        .await;
        if outside_touched(&outside) {
            writes_outside += 1;
        }
        if out.is_error {
            writes_refused += 1;
            *codes
                .entry(format!("write {}", out.output["code"]))
                .or_default() += 1;
            if !out.output["code"]
                .as_str()
                .unwrap_or("")
                .starts_with("sandbox_")
            {
                others.push(out.output.to_string());
            }
        } else {
            writes_ok += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swap.join().unwrap();

    eprintln!(
        "swap race: {} flips; reads {reads_ok} ok / {reads_refused} refused / {reads_outside} outside; \
         writes {writes_ok} ok / {writes_refused} refused / {writes_outside} outside; codes {codes:?}; other errors {others:?}",
        flips.load(Ordering::Relaxed)
    );
    assert_eq!(reads_outside, 0, "reads returned outside content");
    assert_eq!(writes_outside, 0, "writes landed outside");
    assert!(
        flips.load(Ordering::Relaxed) > 100,
        "the swapper really ran"
    );
    assert!(
        reads_ok > 0 && writes_ok > 0,
        "the tools still work between swaps"
    );
    assert!(
        reads_refused > 0 || writes_refused > 0,
        "the race was really contested"
    );
    // Every refusal is a sandbox-coded error result.
    assert!(others.is_empty(), "{others:?}");
}

const LISTINGS: usize = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swapped_directory_never_leaks_into_listings() {
    let ws = TestWorkspace::new();
    ws.write("d1/f", "inside OUTSIDE-free\n");
    ws.write("d1/sub/f", "inside\n");
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().canonicalize().unwrap();
    plant_outside(&outside);
    std::os::unix::fs::symlink(&outside, ws.path(".d1-other")).unwrap();
    let sandbox = WorkspaceSandbox::default();
    let limits = OutputLimits::default();
    let (ls, glob, grep) = (
        LsTool::new(limits),
        GlobTool::new(limits),
        GrepTool::new(limits),
    );

    let stop = Arc::new(AtomicBool::new(false));
    let flips = Arc::new(AtomicUsize::new(0));
    let swap = std::thread::spawn({
        let (root, stop, flips) = (ws.root().to_path_buf(), stop.clone(), flips.clone());
        move || swapper(root, stop, flips)
    });
    let leaks = |out: &ToolResult| {
        let text = out.output.to_string();
        text.contains("leak-marker") || text.contains("OUTSIDE-SECRET")
    };
    let (mut leaked, mut answered, mut refused) = (0, 0, 0);
    for i in 0..LISTINGS {
        let calls = [
            (
                &ls as &dyn Tool,
                json!({"path": if i % 2 == 0 { "d1" } else { "d1/sub" }}),
            ),
            (&glob, json!({"pattern": "**/*", "path": "."})),
            (&glob, json!({"pattern": "**/*", "path": "d1"})),
            (
                &grep,
                json!({"pattern": "OUTSIDE-SECRET|inside", "path": "."}),
            ),
            (
                &grep,
                json!({"pattern": "OUTSIDE-SECRET|inside", "path": "d1/sub"}),
            ),
        ];
        for (tool, args) in calls {
            let out = call(tool, &ws, &sandbox, args).await;
            if leaks(&out) {
                leaked += 1;
            }
            if out.is_error {
                refused += 1;
            } else {
                answered += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swap.join().unwrap();
    eprintln!(
        "listing swap race: {} flips; {answered} answered / {refused} refused / {leaked} leaked",
        flips.load(Ordering::Relaxed)
    );
    assert_eq!(leaked, 0, "listings showed outside names or content");
    assert!(
        answered > 0 && refused > 0,
        "the race was contested and the tools still work"
    );
}
