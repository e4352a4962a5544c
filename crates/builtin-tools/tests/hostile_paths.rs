//! A repository's links and the agent's own guards, through the real file tools and the real
//! sandbox (issue 9): reading outside the roots is `sandbox_read_blocked`, and writing the
//! guards — directly, in another spelling, or through a link the repository ships — is
//! `sandbox_protected_path`, with nothing changed anywhere.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod hostile_fixture;

use hostile_fixture::{Fixture, Layout, SECRET};
use kun_builtin_tools::fs::{EditTool, MutationQueue, ReadTool, WriteTool};
use kun_builtin_tools::search::{GlobTool, GrepTool, LsTool};
use kun_ports::{SandboxMode, Tool};
use serde_json::{Value, json};
use std::os::unix::fs::symlink;
use std::sync::Arc;

/// The repository ships links out of the workspace and into its guards.
fn links(fx: &Fixture) {
    symlink(fx.outside.join("secret.txt"), fx.ws.join("link.txt")).unwrap();
    symlink(&fx.outside, fx.ws.join("outdir")).unwrap();
    symlink(".git/hooks", fx.ws.join("docs")).unwrap();
    std::fs::create_dir_all(fx.ws.join(".kun")).unwrap();
    std::fs::write(fx.ws.join(".kun/config.toml"), "sandbox = \"read-only\"\n").unwrap();
}

#[tokio::test]
async fn reads_outside_the_roots_are_sandbox_read_blocked() {
    let fx = Fixture::new(Layout::Top);
    links(&fx);
    let outside = fx.outside.display().to_string();
    let read = ReadTool::default();
    let ls = LsTool::default();
    let grep = GrepTool::default();
    let glob = GlobTool::default();
    let rows: Vec<(&str, &dyn Tool, Value)> = vec![
        (
            "read a link to an outside file",
            &read,
            json!({"path": "link.txt"}),
        ),
        ("read ../", &read, json!({"path": "../outside/secret.txt"})),
        (
            "ls a link to an outside directory",
            &ls,
            json!({"path": "outdir"}),
        ),
        ("ls an absolute path outside", &ls, json!({"path": outside})),
        (
            "grep in a directory outside",
            &grep,
            json!({"pattern": "SECRET", "path": "../outside"}),
        ),
        (
            "glob in a linked directory",
            &glob,
            json!({"pattern": "*.txt", "path": "outdir"}),
        ),
    ];
    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::ReadOnly] {
        for (name, tool, args) in &rows {
            let result = fx.call(*tool, mode, args.clone()).await;
            assert_eq!(
                result.error_code(),
                Some("sandbox_read_blocked"),
                "{name} in {mode}: {}",
                result.output
            );
            assert!(!result.model_text().contains(SECRET), "{name}: leaked");
        }
    }
}

#[tokio::test]
async fn writes_to_the_guards_are_sandbox_protected_path() {
    let fx = Fixture::new(Layout::Top);
    links(&fx);
    let queue = Arc::new(MutationQueue::default());
    let write = WriteTool::new(Arc::clone(&queue));
    let edit = EditTool::new(queue);
    let payload = "#!/bin/sh\ntouch /tmp/pwned\n";
    let rows: Vec<(&str, &dyn Tool, Value)> = vec![
        (
            "a git hook",
            &write,
            json!({"path": ".git/hooks/pre-commit", "content": payload}),
        ),
        (
            "git's config",
            &write,
            json!({"path": ".git/config", "content": "[core]\n\tfsmonitor = ./x\n"}),
        ),
        (
            "a hook through a link the repository ships",
            &write,
            json!({"path": "docs/post-checkout", "content": payload}),
        ),
        (
            "git's config in capitals",
            &write,
            json!({"path": ".GIT/config", "content": "x"}),
        ),
        (
            "the workspace's MCP servers",
            &write,
            json!({"path": ".mcp.json", "content": "{}"}),
        ),
        (
            "Claude Code's settings",
            &write,
            json!({"path": ".claude/settings.json", "content": "{}"}),
        ),
        (
            "an agent skill",
            &write,
            json!({"path": ".agents/skills/x/SKILL.md", "content": "x"}),
        ),
        (
            "kun's config, by edit",
            &edit,
            json!({"path": ".kun/config.toml", "oldText": "read-only", "newText": "danger-full-access"}),
        ),
        (
            "a nested repository's config",
            &write,
            json!({"path": "vendor/dep/.git/config", "content": "x"}),
        ),
    ];
    let before = fx.snapshot();
    for (name, tool, args) in &rows {
        let result = fx
            .call(*tool, SandboxMode::WorkspaceWrite, args.clone())
            .await;
        assert_eq!(
            result.error_code(),
            Some("sandbox_protected_path"),
            "{name}: {}",
            result.output
        );
        assert!(
            result.model_text().contains("protected_path_exceptions"),
            "{name}: says how to allow it: {}",
            result.model_text()
        );
    }
    assert!(fx.snapshot() == before, "a guard changed");
    assert!(!fx.top.join(".GIT").exists() && !fx.ws.join("vendor").exists());

    let ordinary = fx
        .call(
            &write,
            SandboxMode::WorkspaceWrite,
            json!({"path": "notes.txt", "content": "fine"}),
        )
        .await;
    assert!(!ordinary.is_error, "{}", ordinary.output);
}
