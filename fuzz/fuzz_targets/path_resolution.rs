//! Path resolution (gate one): any path argument, in any mode, for reads and writes,
//! resolves or fails with a `PathError`, never a panic. Outside danger-full-access a
//! resolved path lies inside the root (physically), and a write never lands in `.git`.
//! The workspace has the shapes that make resolution hard: nested directories, a link to
//! the outside, a link inside, a dangling link, a link loop, and a `.git` directory.
#![no_main]

use kun_ports::{PathAccess, SandboxMode};
use kun_sandbox::{ProtectedPaths, resolve_workspace_path};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    real_root: PathBuf,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("a/b")).expect("dirs");
        std::fs::create_dir_all(root.join(".git/hooks")).expect(".git");
        std::fs::create_dir_all(dir.path().join("outside")).expect("outside");
        std::fs::write(root.join("a/b/f.txt"), "x").expect("file");
        let link = |target: &std::path::Path, name: &str| {
            std::os::unix::fs::symlink(target, root.join(name)).expect("link");
        };
        link(&dir.path().join("outside"), "out");
        link(std::path::Path::new("a/b"), "in");
        link(std::path::Path::new("missing/x"), "dangling");
        link(std::path::Path::new("loop2"), "loop1");
        link(std::path::Path::new("loop1"), "loop2");
        link(std::path::Path::new(".git/hooks"), "hooks");
        let real_root = root.canonicalize().expect("canonical root");
        Fixture {
            _dir: dir,
            root,
            real_root,
        }
    })
}

const MODES: [SandboxMode; 4] = [
    SandboxMode::ReadOnly,
    SandboxMode::WorkspaceWrite,
    SandboxMode::DangerFullAccess,
    SandboxMode::ExternalSandbox,
];

fuzz_target!(|input: (u8, bool, &str)| {
    let (mode, write, path) = input;
    let fixture = fixture();
    let mode = MODES[usize::from(mode) % MODES.len()];
    let access = if write {
        PathAccess::Write
    } else {
        PathAccess::Read
    };
    let roots = [fixture.root.clone()];
    let Ok(resolved) =
        resolve_workspace_path(path, &roots, mode, access, &ProtectedPaths::default())
    else {
        return;
    };
    if mode != SandboxMode::DangerFullAccess {
        assert!(
            resolved.physical.starts_with(&fixture.real_root),
            "{path:?} resolved outside the root: {}",
            resolved.physical.display()
        );
        if write {
            assert!(
                !resolved
                    .physical
                    .starts_with(fixture.real_root.join(".git")),
                "{path:?} may be written inside .git: {}",
                resolved.physical.display()
            );
        }
    }
});
