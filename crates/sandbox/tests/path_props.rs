//! Property: whatever sequence of names, `.` and `..` a model sends, through whatever links the
//! workspace holds, an accepted path's physical target lies inside the canonical root, and it
//! agrees with `realpath` whenever the target exists.

#![allow(
    clippy::unwrap_used,
    reason = "fixture helpers outside #[test] fns fail the test by panicking"
)]

use kun_ports::{ErrorCode, PathAccess, SandboxMode};
use kun_sandbox::{ProtectedPaths, resolve_workspace_path};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

struct Fixture {
    _temp: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
    canonical_ws: PathBuf,
}

fn fixture() -> Fixture {
    let temp = tempfile::tempdir().unwrap();
    let base = temp.path().to_path_buf();
    let ws = base.join("ws");
    let outside = base.join("outside");
    fs::create_dir_all(ws.join("a/b")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(ws.join("a/f"), "inside").unwrap();
    fs::write(outside.join("f"), "outside").unwrap();
    let links: &[(&str, PathBuf)] = &[
        ("in", "a".into()),
        ("a/up", "../..".into()),
        ("a/back", "..".into()),
        ("a/self", ".".into()),
        ("out", outside.clone()),
        ("dang_out", "../outside/nope".into()),
        ("dang_in", "a/missing".into()),
        ("loop", "loop".into()),
        ("a/b/etc", "/etc".into()),
    ];
    for (link, target) in links {
        symlink(target, ws.join(link)).unwrap();
    }
    let canonical_ws = fs::canonicalize(&ws).unwrap();
    Fixture {
        _temp: temp,
        base,
        ws,
        canonical_ws,
    }
}

const SEGMENTS: &[&str] = &[
    ".", "..", "a", "b", "f", "in", "up", "back", "self", "out", "dang_out", "dang_in", "loop",
    "etc", "passwd", "new", "ws", "outside", "missing",
];

#[derive(Debug, Clone, Copy)]
enum Prefix {
    Relative,
    Workspace,
    Base,
}

fn inputs() -> impl Strategy<Value = (Prefix, Vec<&'static str>)> {
    (
        prop_oneof![
            4 => Just(Prefix::Relative),
            1 => Just(Prefix::Workspace),
            1 => Just(Prefix::Base),
        ],
        prop::collection::vec(prop::sample::select(SEGMENTS), 0..8),
    )
}

fn spell(fx: &Fixture, prefix: Prefix, segments: &[&str]) -> String {
    let tail = segments.join("/");
    match prefix {
        Prefix::Relative if tail.is_empty() => ".".to_owned(),
        Prefix::Relative => tail,
        Prefix::Workspace => format!("{}/{tail}", fx.ws.display()),
        Prefix::Base => format!("{}/{tail}", fx.base.display()),
    }
}

fn check(fx: &Fixture, input: &str) -> Result<(), TestCaseError> {
    let roots = [fx.ws.clone()];
    // Danger-full-access answers with the lexical path and checks nothing.
    let lexical = resolve_workspace_path(
        input,
        &roots,
        SandboxMode::DangerFullAccess,
        PathAccess::Read,
        &ProtectedPaths::default(),
    )
    .map_err(|e| TestCaseError::fail(format!("danger-full-access refused `{input}`: {e:?}")))?
    .lexical;
    let realpath = fs::canonicalize(&lexical);

    for (mode, access) in [
        (SandboxMode::WorkspaceWrite, PathAccess::Read),
        (SandboxMode::WorkspaceWrite, PathAccess::Write),
        (SandboxMode::ReadOnly, PathAccess::Read),
        (SandboxMode::ExternalSandbox, PathAccess::Read),
    ] {
        let result =
            resolve_workspace_path(input, &roots, mode, access, &ProtectedPaths::default());
        match &result {
            Ok(got) => {
                prop_assert!(
                    got.physical.starts_with(&fx.canonical_ws),
                    "`{input}` accepted in {mode} with physical {} outside {}",
                    got.physical.display(),
                    fx.canonical_ws.display()
                );
                prop_assert_eq!(&got.lexical, &lexical);
                prop_assert_eq!(got.root.as_deref(), Some(fx.ws.as_path()));
                if let Ok(real) = &realpath {
                    prop_assert_eq!(&got.physical, real, "`{}` disagrees with realpath", input);
                }
            }
            Err(err) => {
                let outside = match access {
                    PathAccess::Read => ErrorCode::SandboxReadBlocked,
                    PathAccess::Write => ErrorCode::SandboxWriteBlocked,
                };
                prop_assert_eq!(err.code, outside, "`{}`: {:?}", input, err);
                if let Ok(real) = &realpath {
                    prop_assert!(
                        !real.starts_with(&fx.canonical_ws),
                        "`{input}` refused in {mode} though realpath {} is inside",
                        real.display()
                    );
                }
            }
        }
        #[cfg(target_os = "linux")]
        if realpath
            .as_ref()
            .err()
            .and_then(std::io::Error::raw_os_error)
            == Some(40)
        {
            prop_assert!(
                result.is_err(),
                "`{input}` loops (ELOOP) yet was accepted in {mode}"
            );
        }
    }

    let write = resolve_workspace_path(
        input,
        &roots,
        SandboxMode::ReadOnly,
        PathAccess::Write,
        &ProtectedPaths::default(),
    );
    prop_assert_eq!(write.map_err(|e| e.code), Err(ErrorCode::SandboxReadOnly));
    Ok(())
}

#[test]
fn accepted_paths_stay_inside_the_canonical_root() {
    let fx = fixture();
    let mut runner = TestRunner::new(Config {
        cases: 768,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&inputs(), |(prefix, segments)| {
            check(&fx, &spell(&fx, prefix, &segments))
        })
        .unwrap();
}

#[test]
fn the_property_sees_both_outcomes() {
    // Guard against a vacuous property: the fixture admits some inputs and refuses others.
    let fx = fixture();
    let roots = [fx.ws.clone()];
    let resolve = |input: &str| {
        resolve_workspace_path(
            input,
            &roots,
            SandboxMode::WorkspaceWrite,
            PathAccess::Write,
            &ProtectedPaths::default(),
        )
    };
    assert!(resolve("in/self/b/new").is_ok());
    assert!(resolve("a/back/a/f").is_ok());
    assert!(resolve("dang_in/new").is_ok());
    assert!(resolve("a/up/outside/f").is_err());
    assert!(resolve("a/b/etc/passwd").is_err());
    assert!(resolve("out/new").is_err());
    assert!(resolve("dang_out").is_err());
    assert!(resolve("loop/x").is_err());
}
