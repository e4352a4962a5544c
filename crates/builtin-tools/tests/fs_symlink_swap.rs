//! A path that turns into a symlink between the sandbox check and the I/O: no tool may follow
//! it. The sandbox below checks the path honestly, then swaps the file for a link to a file
//! outside the workspace — the race an attacker would try to win, made deterministic.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::fs::{EditTool, LockSettings, MutationQueue, ReadTool, WriteTool};
use kun_builtin_tools::testing::{SimpleSandbox, TestWorkspace};
use kun_ports::{
    ConfinementTier, NoProgress, PathAccess, PathError, ResolvedPath, SandboxMode, SandboxPolicy,
    SandboxQuery, SandboxVerdict, Tool, ToolContext, ToolResult,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Resolves like [`SimpleSandbox`], then replaces `victim` with a symlink to `outside`.
struct SwappingSandbox {
    victim: PathBuf,
    outside: PathBuf,
}

impl SandboxPolicy for SwappingSandbox {
    fn check_tool(&self, name: &str, query: SandboxQuery, mode: SandboxMode) -> SandboxVerdict {
        SimpleSandbox.check_tool(name, query, mode)
    }

    fn resolve_path(
        &self,
        input: &str,
        roots: &[PathBuf],
        mode: SandboxMode,
        access: PathAccess,
    ) -> Result<ResolvedPath, PathError> {
        let resolved = SimpleSandbox.resolve_path(input, roots, mode, access)?;
        std::fs::remove_file(&self.victim).unwrap();
        std::os::unix::fs::symlink(&self.outside, &self.victim).unwrap();
        Ok(resolved)
    }

    fn confinement_tier(&self) -> ConfinementTier {
        ConfinementTier::None
    }
}

struct Setup {
    ws: TestWorkspace,
    _outside_dir: tempfile::TempDir,
    outside: PathBuf,
    sandbox: SwappingSandbox,
}

fn setup() -> Setup {
    let ws = TestWorkspace::new();
    ws.write("target.txt", "inside\n");
    let outside_dir = tempfile::tempdir().unwrap();
    let outside = outside_dir.path().join("secret.txt");
    std::fs::write(&outside, "secret\n").unwrap();
    let sandbox = SwappingSandbox {
        victim: ws.path("target.txt"),
        outside: outside.clone(),
    };
    Setup {
        ws,
        _outside_dir: outside_dir,
        outside,
        sandbox,
    }
}

async fn call(tool: &dyn Tool, setup: &Setup, args: Value) -> ToolResult {
    let ctx = ToolContext {
        turn: kun_ports::ToolTurn::of(&setup.ws.ctx, &kun_ports::OpenCatalog),
        call_id: "call-swap",
        sandbox: &setup.sandbox,
        progress: &NoProgress,
    };
    tool.execute(args, ctx).await.unwrap()
}

fn queue(root: &Path) -> Arc<MutationQueue> {
    Arc::new(MutationQueue::new(LockSettings {
        root: root.to_path_buf(),
        ..LockSettings::default()
    }))
}

fn assert_refused(out: &ToolResult, outside: &Path) {
    assert!(out.is_error, "{}", out.output);
    assert_eq!(
        out.output["code"], "sandbox_write_blocked",
        "{}",
        out.output
    );
    assert!(
        !out.output.to_string().contains("secret"),
        "nothing of the outside file leaks: {}",
        out.output
    );
    assert_eq!(std::fs::read_to_string(outside).unwrap(), "secret\n");
}

#[tokio::test]
async fn write_does_not_follow_a_swapped_link() {
    let setup = setup();
    let locks = tempfile::tempdir().unwrap();
    let out = call(
        &WriteTool::new(queue(locks.path())),
        &setup,
        json!({"path": "target.txt", "content": "pwned"}),
    )
    .await;
    assert_refused(&out, &setup.outside);
}

#[tokio::test]
async fn edit_does_not_follow_a_swapped_link() {
    let setup = setup();
    let locks = tempfile::tempdir().unwrap();
    let args = json!({"path": "target.txt", "oldText": "secret", "newText": "pwned"});
    let out = call(&EditTool::new(queue(locks.path())), &setup, args).await;
    assert_refused(&out, &setup.outside);
}

#[tokio::test]
async fn read_does_not_follow_a_swapped_link() {
    let setup = setup();
    let out = call(
        &ReadTool::new(OutputLimits::default()),
        &setup,
        json!({"path": "target.txt"}),
    )
    .await;
    assert_refused(&out, &setup.outside);
}
