//! The path-escape corpus (SPEC §5, §12): a real workspace in a temporary directory with real
//! symbolic links, and a table of inputs with the outcome each must have.

#![allow(
    clippy::unwrap_used,
    reason = "fixture helpers outside #[test] fns fail the test by panicking"
)]

use kun_ports::{ErrorCode, PathAccess, ResolvedPath, SandboxMode};
use kun_sandbox::{ProtectedPaths, resolve_workspace_path};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// A workspace `ws` next to a directory `outside`, inside one temporary directory.
struct Fixture {
    _temp: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
    canonical_ws: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().to_path_buf();
        let ws = base.join("ws");
        let outside = base.join("outside");
        fs::create_dir_all(ws.join("src")).unwrap();
        fs::create_dir_all(ws.join("sub")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(ws.join("src/lib.rs"), "// inside\n").unwrap();
        fs::write(outside.join("secret.txt"), "outside\n").unwrap();

        let links: &[(&str, PathBuf)] = &[
            ("evil", "/etc/passwd".into()),
            ("dangling", "/nonexistent/x".into()),
            ("rel_dangling", "../outside/missing.txt".into()),
            ("chain1", "chain2".into()),
            ("chain2", "sub/chain3".into()),
            ("sub/chain3", outside.join("secret.txt")),
            ("loop_a", "loop_b".into()),
            ("loop_b", "loop_a".into()),
            ("self_loop", "self_loop".into()),
            ("outdir", outside.clone()),
            ("sub/up", "../..".into()),
            ("good", ws.join("data")),
            ("inlink", "src".into()),
            ("sneaky", "missing/../outdir/secret.txt".into()),
        ];
        for (link, target) in links {
            symlink(target, ws.join(link)).unwrap();
        }
        let canonical_ws = fs::canonicalize(&ws).unwrap();
        Self {
            _temp: temp,
            base,
            ws,
            canonical_ws,
        }
    }

    /// `{ws}` and `{outside}` replaced by the fixture's paths.
    fn input(&self, template: &str) -> String {
        template
            .replace("{ws}", &self.ws.display().to_string())
            .replace(
                "{outside}",
                &self.base.join("outside").display().to_string(),
            )
    }

    fn resolve(
        &self,
        input: &str,
        mode: SandboxMode,
        access: PathAccess,
    ) -> Result<ResolvedPath, kun_ports::PathError> {
        resolve_workspace_path(
            input,
            std::slice::from_ref(&self.ws),
            mode,
            access,
            &ProtectedPaths::default(),
        )
    }
}

/// What an input must come to outside danger-full-access.
enum Outcome {
    /// Accepted: the relative path (lexical, under `ws`) and the physical path under the
    /// canonical workspace.
    Inside {
        relative: &'static str,
        physical: &'static str,
    },
    /// Refused: leads outside the workspace.
    Escapes,
    /// Refused: a symlink loop.
    Loops,
}

use Outcome::{Escapes, Inside, Loops};

#[rustfmt::skip]
const CORPUS: &[(&str, &str, Outcome)] = &[
    // `..` and absolute paths
    ("dotdot",                    "../outside/secret.txt",           Escapes),
    ("dotdot_from_subdir",        "src/../../outside/new.txt",       Escapes),
    ("dotdot_past_the_root",      "../../../../../../../etc/passwd", Escapes),
    ("absolute_outside",          "{outside}/secret.txt",            Escapes),
    ("absolute_etc",              "/etc/passwd",                     Escapes),
    ("absolute_parent_of_root",   "{ws}/..",                         Escapes),
    // links to outside
    ("link_to_file_outside",      "evil",                            Escapes),
    ("dangling_absolute",         "dangling",                        Escapes),
    ("dangling_absolute_child",   "dangling/child.txt",              Escapes),
    ("dangling_relative_outside", "rel_dangling",                    Escapes),
    ("chain_ending_outside",      "chain1",                          Escapes),
    ("dir_link_outside",          "outdir",                          Escapes),
    ("dir_link_outside_child",    "outdir/secret.txt",               Escapes),
    ("dir_link_outside_new",      "outdir/new/deeper.txt",           Escapes),
    ("dir_link_upwards",          "sub/up/outside/secret.txt",       Escapes),
    ("missing_then_dotdot",       "sneaky",                          Escapes),
    // loops
    ("loop_pair",                 "loop_a",                          Loops),
    ("loop_pair_child",           "loop_b/x.txt",                    Loops),
    ("self_loop",                 "self_loop",                       Loops),
    ("self_loop_child",           "self_loop/x/y",                   Loops),
    // inside
    ("root",                      ".",                               Inside { relative: ".", physical: "" }),
    ("plain_new_file",            "notes.txt",                       Inside { relative: "notes.txt", physical: "notes.txt" }),
    ("nested_new_file",           "src/deep/er/new.rs",              Inside { relative: "src/deep/er/new.rs", physical: "src/deep/er/new.rs" }),
    ("existing_file",             "src/lib.rs",                      Inside { relative: "src/lib.rs", physical: "src/lib.rs" }),
    ("dotdot_back_inside",        "src/../notes.txt",                Inside { relative: "notes.txt", physical: "notes.txt" }),
    ("absolute_inside",           "{ws}/src/lib.rs",                 Inside { relative: "src/lib.rs", physical: "src/lib.rs" }),
    ("dangling_link_inside",      "good/note.txt",                   Inside { relative: "good/note.txt", physical: "data/note.txt" }),
    ("link_inside",               "inlink/lib.rs",                   Inside { relative: "inlink/lib.rs", physical: "src/lib.rs" }),
    ("dir_link_up_and_back",      "sub/up/ws/src",                   Inside { relative: "sub/up/ws/src", physical: "src" }),
    ("tilde_is_just_a_name",      "~/.ssh/id_rsa",                   Inside { relative: "~/.ssh/id_rsa", physical: "~/.ssh/id_rsa" }),
];

/// The code for a path outside every root: a read is `sandbox_read_blocked`, a write
/// `sandbox_write_blocked`.
const fn outside_code(access: PathAccess) -> ErrorCode {
    match access {
        PathAccess::Read => ErrorCode::SandboxReadBlocked,
        PathAccess::Write => ErrorCode::SandboxWriteBlocked,
    }
}

/// The (mode, access) pairs that check the boundary.
const CHECKED: &[(SandboxMode, PathAccess)] = &[
    (SandboxMode::WorkspaceWrite, PathAccess::Read),
    (SandboxMode::WorkspaceWrite, PathAccess::Write),
    (SandboxMode::ReadOnly, PathAccess::Read),
    (SandboxMode::ExternalSandbox, PathAccess::Read),
];

/// The corpus is the test: an emptied or one-sided table must fail, not pass vacuously.
#[test]
fn the_corpus_is_not_empty_and_covers_every_outcome() {
    assert!(CORPUS.len() >= 30, "only {} cases", CORPUS.len());
    let count = |kind: fn(&Outcome) -> bool| CORPUS.iter().filter(|(_, _, o)| kind(o)).count();
    assert!(count(|o| matches!(o, Escapes)) >= 10);
    assert!(count(|o| matches!(o, Loops)) >= 2);
    assert!(count(|o| matches!(o, Inside { .. })) >= 5);
    let mut names: Vec<&str> = CORPUS.iter().map(|(name, _, _)| *name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CORPUS.len(), "case names must be unique");
}

#[test]
fn the_corpus_outcomes_hold_in_every_checked_mode() {
    let fx = Fixture::new();
    let mut checked = 0;
    for (name, template, outcome) in CORPUS {
        let input = fx.input(template);
        for &(mode, access) in CHECKED {
            let label = format!("{name} (`{input}`, {mode}, {access:?})");
            let result = fx.resolve(&input, mode, access);
            match outcome {
                Inside { relative, physical } => {
                    let got = result.unwrap_or_else(|e| panic!("{label}: {e:?}"));
                    let expected_lexical = if *relative == "." {
                        fx.ws.clone()
                    } else {
                        fx.ws.join(relative)
                    };
                    assert_eq!(got.lexical, expected_lexical, "{label}: lexical");
                    assert_eq!(got.relative, *relative, "{label}: relative");
                    assert_eq!(got.root.as_deref(), Some(fx.ws.as_path()), "{label}: root");
                    let expected_physical = if physical.is_empty() {
                        fx.canonical_ws.clone()
                    } else {
                        fx.canonical_ws.join(physical)
                    };
                    assert_eq!(got.physical, expected_physical, "{label}: physical");
                }
                Escapes | Loops => {
                    let err = match result {
                        Err(err) => err,
                        Ok(got) => panic!("{label} must be refused, got {got:?}"),
                    };
                    assert_eq!(err.code, outside_code(access), "{label}: {err:?}");
                    assert!(err.message.contains(&input), "{label}: {}", err.message);
                    if matches!(outcome, Loops) {
                        assert!(err.message.contains("loop"), "{label}: {}", err.message);
                    } else {
                        assert!(err.message.contains("outside"), "{label}: {}", err.message);
                    }
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, CORPUS.len() * CHECKED.len());
}

#[test]
fn writes_in_read_only_and_external_sandbox_are_refused_whatever_the_path() {
    let fx = Fixture::new();
    for (name, template, _) in CORPUS {
        let input = fx.input(template);
        for (mode, code) in [
            (SandboxMode::ReadOnly, ErrorCode::SandboxReadOnly),
            (SandboxMode::ExternalSandbox, ErrorCode::SandboxWriteBlocked),
        ] {
            let err = fx.resolve(&input, mode, PathAccess::Write).unwrap_err();
            assert_eq!(err.code, code, "{name} in {mode}: {err:?}");
            assert!(err.message.contains(&input), "{name}: {}", err.message);
            assert!(err.message.contains("--sandbox"), "{name}: {}", err.message);
        }
    }
}

#[test]
fn danger_full_access_returns_lexical_paths_unchecked() {
    let fx = Fixture::new();
    let outside_secret = fx.base.join("outside/secret.txt");
    let cases: &[(&str, PathBuf, Option<&Path>, String)] = &[
        (
            "../outside/secret.txt",
            outside_secret.clone(),
            None,
            outside_secret.display().to_string(),
        ),
        ("evil", fx.ws.join("evil"), Some(&fx.ws), "evil".to_owned()),
        (
            "loop_a",
            fx.ws.join("loop_a"),
            Some(&fx.ws),
            "loop_a".to_owned(),
        ),
        (
            "outdir/secret.txt",
            fx.ws.join("outdir/secret.txt"),
            Some(&fx.ws),
            "outdir/secret.txt".to_owned(),
        ),
        (
            "/etc/passwd",
            "/etc/passwd".into(),
            None,
            "/etc/passwd".to_owned(),
        ),
    ];
    for (input, lexical, root, relative) in cases {
        for access in [PathAccess::Read, PathAccess::Write] {
            let got = fx
                .resolve(input, SandboxMode::DangerFullAccess, access)
                .unwrap_or_else(|e| panic!("`{input}`: {e:?}"));
            assert_eq!(&got.lexical, lexical, "`{input}`");
            assert_eq!(got.physical, got.lexical, "`{input}`: nothing is followed");
            assert_eq!(got.root.as_deref(), *root, "`{input}`");
            assert_eq!(&got.relative, relative, "`{input}`");
        }
    }
}

#[test]
fn malformed_input_is_invalid_arguments_in_every_mode() {
    let fx = Fixture::new();
    for input in ["", "   ", "src/\0lib.rs", "\0"] {
        for &mode in SandboxMode::ALL {
            for access in [PathAccess::Read, PathAccess::Write] {
                let err = fx.resolve(input, mode, access).unwrap_err();
                assert_eq!(err.code, ErrorCode::InvalidArguments, "{input:?} {mode}");
                assert!(!err.message.contains('\0'), "the message must escape NUL");
            }
        }
    }
}

#[test]
fn a_symlinked_workspace_root_is_followed_and_kept_lexical() {
    let fx = Fixture::new();
    let alias = fx.base.join("alias");
    symlink(&fx.ws, &alias).unwrap();
    let got = resolve_workspace_path(
        "src/lib.rs",
        std::slice::from_ref(&alias),
        SandboxMode::WorkspaceWrite,
        PathAccess::Write,
        &ProtectedPaths::default(),
    )
    .unwrap();
    assert_eq!(got.lexical, alias.join("src/lib.rs"));
    assert_eq!(got.physical, fx.canonical_ws.join("src/lib.rs"));
    assert_eq!(got.root.as_deref(), Some(alias.as_path()));
    assert_eq!(got.relative, "src/lib.rs");
}
