//! Workspace roots: the primary root anchors relative paths and must exist; extra roots widen
//! the boundary and are ignored when missing.

#![allow(
    clippy::unwrap_used,
    reason = "fixture helpers outside #[test] fns fail the test by panicking"
)]

use kun_ports::{ErrorCode, PathAccess, SandboxMode};
use kun_sandbox::{ProtectedPaths, resolve_workspace_path};
use std::fs;
use std::path::PathBuf;

const MODE: SandboxMode = SandboxMode::WorkspaceWrite;

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let first = temp.path().join("first");
    let second = temp.path().join("second");
    fs::create_dir_all(&first).unwrap();
    fs::create_dir_all(&second).unwrap();
    (temp, first, second)
}

#[test]
fn relative_paths_resolve_against_the_primary_root() {
    let (_temp, first, second) = dirs();
    let got = resolve_workspace_path(
        "a.txt",
        &[first.clone(), second],
        MODE,
        PathAccess::Write,
        &ProtectedPaths::default(),
    )
    .unwrap();
    assert_eq!(got.lexical, first.join("a.txt"));
    assert_eq!(got.root, Some(first));
}

#[test]
fn an_extra_root_admits_its_own_paths() {
    let (_temp, first, second) = dirs();
    let input = second.join("b/c.txt");
    let got = resolve_workspace_path(
        input.to_str().unwrap(),
        &[first, second.clone()],
        MODE,
        PathAccess::Write,
        &ProtectedPaths::default(),
    )
    .unwrap();
    assert_eq!(got.root, Some(second));
    assert_eq!(got.relative, "b/c.txt");
}

#[test]
fn a_path_in_an_unlisted_sibling_is_refused() {
    let (_temp, first, second) = dirs();
    let input = second.join("c.txt");
    let err = resolve_workspace_path(
        input.to_str().unwrap(),
        &[first],
        MODE,
        PathAccess::Read,
        &ProtectedPaths::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::SandboxReadBlocked);
}

#[test]
fn a_missing_primary_root_is_a_clear_error() {
    let (temp, _first, second) = dirs();
    let missing = temp.path().join("gone");
    for access in [PathAccess::Read, PathAccess::Write] {
        let err = resolve_workspace_path(
            "a.txt",
            &[missing.clone(), second.clone()],
            MODE,
            access,
            &ProtectedPaths::default(),
        )
        .unwrap_err();
        let expected = match access {
            PathAccess::Read => ErrorCode::SandboxReadBlocked,
            PathAccess::Write => ErrorCode::SandboxWriteBlocked,
        };
        assert_eq!(err.code, expected);
        assert!(err.message.contains("does not exist"), "{}", err.message);
        assert!(
            err.message.contains(&missing.display().to_string()),
            "{}",
            err.message
        );
    }
}

#[test]
fn a_primary_root_that_is_a_file_is_refused() {
    let (temp, _first, _second) = dirs();
    let file = temp.path().join("file");
    fs::write(&file, "x").unwrap();
    let err = resolve_workspace_path(
        "a.txt",
        &[file],
        MODE,
        PathAccess::Read,
        &ProtectedPaths::default(),
    )
    .unwrap_err();
    assert!(err.message.contains("not a directory"), "{}", err.message);
}

#[test]
fn missing_extra_roots_are_ignored() {
    let (temp, first, _second) = dirs();
    let gone = temp.path().join("gone");
    let ok = resolve_workspace_path(
        "a.txt",
        &[first.clone(), gone.clone()],
        MODE,
        PathAccess::Write,
        &ProtectedPaths::default(),
    )
    .unwrap();
    assert_eq!(ok.root, Some(first.clone()));
    let inside_gone = gone.join("x.txt");
    let err = resolve_workspace_path(
        inside_gone.to_str().unwrap(),
        &[first, gone],
        MODE,
        PathAccess::Write,
        &ProtectedPaths::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::SandboxWriteBlocked);
}

#[test]
fn no_roots_at_all() {
    let err = resolve_workspace_path(
        "a.txt",
        &[],
        MODE,
        PathAccess::Read,
        &ProtectedPaths::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::SandboxReadBlocked);
    assert!(err.message.contains("no workspace root"), "{}", err.message);

    let danger = SandboxMode::DangerFullAccess;
    let err = resolve_workspace_path(
        "a.txt",
        &[],
        danger,
        PathAccess::Read,
        &ProtectedPaths::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArguments);
    let ok = resolve_workspace_path(
        "/etc/hosts",
        &[],
        danger,
        PathAccess::Read,
        &ProtectedPaths::default(),
    )
    .unwrap();
    assert_eq!(ok.lexical, PathBuf::from("/etc/hosts"));
    assert_eq!(ok.root, None);
}

#[test]
fn a_link_from_the_first_root_into_the_second_is_inside() {
    let (_temp, first, second) = dirs();
    std::os::unix::fs::symlink(&second, first.join("to_second")).unwrap();
    let got = resolve_workspace_path(
        "to_second/new.txt",
        &[first.clone(), second.clone()],
        MODE,
        PathAccess::Write,
        &ProtectedPaths::default(),
    )
    .unwrap();
    assert_eq!(got.root, Some(first));
    assert_eq!(got.relative, "to_second/new.txt");
    assert_eq!(
        got.physical,
        fs::canonicalize(&second).unwrap().join("new.txt")
    );
    // Without the second root the same link escapes.
    let err = resolve_workspace_path(
        "to_second/new.txt",
        &[got.root.unwrap()],
        MODE,
        PathAccess::Write,
        &ProtectedPaths::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::SandboxWriteBlocked);
}
