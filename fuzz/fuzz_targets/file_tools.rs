//! The file tools end to end (gate one's resolution, then the open beneath the root's handle):
//! `read`, `write`, `edit`, `ls`, `glob` and `grep` with any path, under workspace-write and
//! the real `WorkspaceSandbox`, in a workspace with a link to the outside, a link inside, a
//! dangling link, a link loop and a `.git` directory. Every call answers (a result or an
//! error result), never a panic; nothing outside the root and nothing under `.git` is ever
//! created, changed or removed; no listing names a file outside the root.
#![no_main]

use kun_builtin_tools::{BuiltinOptions, BuiltinProvider};
use kun_ports::{
    ConfinementTier, NoProgress, OpenCatalog, SandboxMode, Tool, ToolContext, ToolHostContext,
    ToolProvider, ToolTurn,
};
use kun_sandbox::{NoConfinement, WorkspaceSandbox};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// What the fuzzer may never change: every entry under `outside/` and `ws/.git/`, with its
/// content (files) or target (links).
type Snapshot = BTreeMap<PathBuf, String>;

struct Fixture {
    _dir: tempfile::TempDir,
    outside: PathBuf,
    git: PathBuf,
    before: Snapshot,
    ctx: ToolHostContext,
    sandbox: WorkspaceSandbox,
    tools: BTreeMap<String, Arc<dyn Tool>>,
    runtime: tokio::runtime::Runtime,
}

fn snapshot(dirs: &[&Path]) -> Snapshot {
    let mut out = Snapshot::new();
    for dir in dirs {
        for entry in walkdir::WalkDir::new(dir).follow_links(false) {
            let Ok(entry) = entry else { continue };
            let path = entry.path().to_path_buf();
            let what = if entry.path_is_symlink() {
                format!("link {:?}", std::fs::read_link(&path).ok())
            } else if entry.file_type().is_file() {
                format!("file {:?}", std::fs::read(&path).ok())
            } else {
                "dir".to_owned()
            };
            out.insert(path, what);
        }
    }
    out
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary directory");
        let base = dir.path().canonicalize().expect("canonical temporary directory");
        let root = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("a/b")).expect("dirs");
        std::fs::create_dir_all(root.join(".git/hooks")).expect(".git");
        std::fs::create_dir_all(&outside).expect("outside");
        std::fs::write(root.join("a/b/f.txt"), "x\ny\n").expect("file");
        std::fs::write(root.join(".git/config"), "[core]\n").expect("git config");
        std::fs::write(outside.join("secret.txt"), "secret\n").expect("secret");
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, root.join(name)).expect("link");
        };
        link(&outside, "out");
        link(&outside.join("secret.txt"), "leak");
        link(Path::new("a/b"), "in");
        link(Path::new("missing/x"), "dangling");
        link(Path::new("loop2"), "loop1");
        link(Path::new("loop1"), "loop2");
        link(Path::new(".git/hooks"), "hooks");
        let git = root.join(".git");
        let before = snapshot(&[&outside, &git]);
        let ctx = ToolHostContext::builder("thread-fuzz", "turn-fuzz")
            .workspace(root)
            .sandbox(SandboxMode::WorkspaceWrite)
            .build();
        let tools = BuiltinProvider::new(BuiltinOptions::new(Arc::new(NoConfinement)))
            .tools()
            .into_iter()
            .map(|tool| (tool.spec().name.clone(), tool))
            .collect();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        Fixture {
            _dir: dir,
            outside,
            git,
            before,
            ctx,
            sandbox: WorkspaceSandbox::new(ConfinementTier::None),
            tools,
            runtime,
        }
    })
}

/// The call an input makes.
fn call(op: u8, path: &str, text: &str) -> (&'static str, Value) {
    match op % 6 {
        0 => ("read", json!({"path": path})),
        1 => ("write", json!({"path": path, "content": text})),
        2 => ("edit", json!({"path": path, "oldText": "x", "newText": text})),
        3 => ("ls", json!({"path": path})),
        4 => ("glob", json!({"pattern": path})),
        _ => ("grep", json!({"pattern": "x", "path": path})),
    }
}

fuzz_target!(|input: (u8, &str, &str)| {
    let (op, path, text) = input;
    let fixture = fixture();
    let (name, arguments) = call(op, path, text);
    let Some(tool) = fixture.tools.get(name) else {
        panic!("the built-in provider has no `{name}` tool");
    };
    let ctx = ToolContext {
        turn: ToolTurn::of(&fixture.ctx, &OpenCatalog),
        call_id: "call-fuzz",
        sandbox: &fixture.sandbox,
        progress: &NoProgress,
    };
    let result = fixture.runtime.block_on(tool.execute(arguments, ctx));
    let innocent = !path.contains("secret") && !text.contains("secret");
    if let (Ok(result), true) = (&result, innocent) {
        let shown = result.output.to_string();
        assert!(
            !shown.contains("secret"),
            "`{name}` of {path:?} showed a file outside the root: {shown}"
        );
    }
    let after = snapshot(&[&fixture.outside, &fixture.git]);
    assert_eq!(
        after, fixture.before,
        "`{name}` of {path:?} changed something outside the root or under .git"
    );
});
