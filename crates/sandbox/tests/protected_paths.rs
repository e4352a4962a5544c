//! The protected-path corpus (SPEC §2 `sandbox_protected_path`, issue 9): a real workspace with
//! real guards and symbolic links, and a table of writes with the outcome each must have.

#![allow(
    clippy::unwrap_used,
    reason = "fixture helpers outside #[test] fns fail the test by panicking"
)]

use kun_ports::{ErrorCode, PathAccess, SandboxMode, SandboxPolicy};
use kun_sandbox::{ProtectedPaths, WorkspaceSandbox, resolve_workspace_path};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::PathBuf;

struct Fixture {
    _temp: tempfile::TempDir,
    ws: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path().join("ws");
        for dir in [
            ".git/hooks",
            ".kun",
            ".claude/commands",
            ".agents/skills",
            "vendor/dep/.git",
            "src",
        ] {
            fs::create_dir_all(ws.join(dir)).unwrap();
        }
        fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        fs::write(ws.join(".claude/settings.json"), "{}").unwrap();
        let links: &[(&str, &str)] = &[
            ("innocent.txt", ".git/config"),
            ("gitdir", ".git"),
            ("hooks", ".git/hooks"),
            ("dangling_hook", ".git/hooks/post-checkout"),
            ("chain", "gitdir/hooks/pre-push"),
            ("src/up", ".."),
            (".claude/commands/escape.md", "../settings.json"),
            ("kun_link", ".kun"),
            ("mcp", ".mcp.json"),
        ];
        for (link, target) in links {
            symlink(target, ws.join(link)).unwrap();
        }
        Self { _temp: temp, ws }
    }

    fn write(&self, input: &str, protected: &ProtectedPaths) -> Result<String, ErrorCode> {
        resolve_workspace_path(
            input,
            std::slice::from_ref(&self.ws),
            SandboxMode::WorkspaceWrite,
            PathAccess::Write,
            protected,
        )
        .map(|resolved| resolved.relative)
        .map_err(|err| {
            if err.code == ErrorCode::SandboxProtectedPath {
                assert!(
                    err.message.contains(input),
                    "names the path: {}",
                    err.message
                );
                assert!(
                    err.message.contains("protected_path_exceptions"),
                    "says how to allow it: {}",
                    err.message
                );
            }
            err.code
        })
    }
}

/// Whether a write is refused as a guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Protected,
    Allowed,
}

use Want::{Allowed, Protected};

#[rustfmt::skip]
const CORPUS: &[(&str, &str, Want)] = &[
    // the guards themselves, at the top
    ("git_config",              ".git/config",                        Protected),
    ("git_hook",                ".git/hooks/pre-commit",              Protected),
    ("git_dir_itself",          ".git",                               Protected),
    ("kun_config",              ".kun/config.toml",                   Protected),
    ("kun_new_hook",            ".kun/hooks/guard.sh",                Protected),
    ("mcp_json",                ".mcp.json",                          Protected),
    ("claude_settings",         ".claude/settings.json",              Protected),
    ("claude_local_settings",   ".claude/settings.local.json",        Protected),
    ("claude_agent",            ".claude/agents/reviewer.md",         Protected),
    ("claude_skill",            ".claude/skills/s/SKILL.md",          Protected),
    ("claude_command",          ".claude/commands/deploy.md",         Protected),
    ("agents_skill",            ".agents/skills/s/SKILL.md",          Protected),
    // at any depth: nested repositories and packages have their own guards
    ("nested_git",              "vendor/dep/.git/config",             Protected),
    ("nested_git_file",         "vendor/other/.git",                  Protected),
    ("nested_kun",              "packages/app/.kun/config.toml",      Protected),
    ("nested_mcp",              "packages/app/.mcp.json",             Protected),
    // spellings that open the same file on some file system
    ("upper_case",              ".GIT/config",                        Protected),
    ("mixed_case",              ".Claude/settings.json",              Protected),
    ("hfs_ignorable",           ".g\u{200c}it/config",                Protected),
    ("bom_prefix",              "\u{feff}.kun/config.toml",           Protected),
    ("ntfs_trailing_dot",       ".git./config",                       Protected),
    ("ntfs_trailing_space",     ".mcp.json ",                         Protected),
    ("ntfs_short_name",         "GIT~1/config",                       Protected),
    // lexical tricks
    ("dotdot_back_in",          "./.git/../.git/config",              Protected),
    ("through_src_and_back",    "src/../.kun/config.toml",            Protected),
    ("absolute",                "{ws}/.git/config",                   Protected),
    // symbolic links leading into a guard
    ("link_to_git_config",      "innocent.txt",                       Protected),
    ("dir_link_to_git",         "gitdir/hooks/pre-commit",            Protected),
    ("dir_link_to_hooks",       "hooks/post-merge",                   Protected),
    ("dangling_into_hooks",     "dangling_hook",                      Protected),
    ("chain_into_git",          "chain",                              Protected),
    ("up_and_into_kun",         "src/up/.kun/config.toml",            Protected),
    ("link_to_kun_dir",         "kun_link/config.toml",               Protected),
    ("dangling_to_mcp",         "mcp",                                Protected),
    // not guards
    ("plain",                   "src/main.rs",                        Allowed),
    ("github",                  ".github/workflows/ci.yml",           Allowed),
    ("gitignore",               ".gitignore",                         Allowed),
    ("gitattributes",           ".gitattributes",                     Allowed),
    ("kunrc",                   ".kunrc",                             Allowed),
    ("git_without_dot",         "git/config",                         Allowed),
    ("cyrillic_lookalike",      ".g\u{456}t/config",                  Allowed),
    ("dotless_i_lookalike",     ".g\u{131}t/config",                  Allowed),
];

#[test]
fn the_corpus_outcomes_hold() {
    let fx = Fixture::new();
    let none = ProtectedPaths::default();
    let mut protected = 0;
    for (name, template, want) in CORPUS {
        let input = template.replace("{ws}", &fx.ws.display().to_string());
        let got = fx.write(&input, &none);
        match want {
            Protected => {
                assert_eq!(
                    got,
                    Err(ErrorCode::SandboxProtectedPath),
                    "{name} (`{input}`)"
                );
                protected += 1;
            }
            Allowed => assert!(got.is_ok(), "{name} (`{input}`): {got:?}"),
        }
    }
    assert!(
        protected > 30 && protected < CORPUS.len(),
        "both outcomes are exercised"
    );
}

#[test]
fn reads_of_guards_are_allowed_and_other_modes_keep_their_own_codes() {
    let fx = Fixture::new();
    let roots = [fx.ws.clone()];
    let none = ProtectedPaths::default();
    let resolve = |input: &str, mode, access| {
        resolve_workspace_path(input, &roots, mode, access, &none).map_err(|e| e.code)
    };
    for input in [".git/config", "innocent.txt", ".claude/settings.json"] {
        for mode in [
            SandboxMode::WorkspaceWrite,
            SandboxMode::ReadOnly,
            SandboxMode::ExternalSandbox,
        ] {
            assert!(
                resolve(input, mode, PathAccess::Read).is_ok(),
                "{input} {mode}"
            );
        }
        assert_eq!(
            resolve(input, SandboxMode::ReadOnly, PathAccess::Write),
            Err(ErrorCode::SandboxReadOnly)
        );
        assert_eq!(
            resolve(input, SandboxMode::ExternalSandbox, PathAccess::Write),
            Err(ErrorCode::SandboxWriteBlocked)
        );
        assert!(resolve(input, SandboxMode::DangerFullAccess, PathAccess::Write).is_ok());
    }
}

#[test]
fn exceptions_open_only_what_they_name_and_never_through_a_link() {
    let fx = Fixture::new();
    let rule = ProtectedPaths::with_exceptions([".claude/commands", ".kun/plans"]).unwrap();
    let sandbox = WorkspaceSandbox::default().with_protected_paths(rule.clone());
    let roots = [fx.ws.clone()];
    let through_port = |input: &str| {
        sandbox
            .resolve_path(
                input,
                &roots,
                SandboxMode::WorkspaceWrite,
                PathAccess::Write,
            )
            .map(|r| r.relative)
            .map_err(|e| e.code)
    };
    let table: &[(&str, Want)] = &[
        (".claude/commands/deploy.md", Allowed),
        (".claude/commands/sub/x.md", Allowed),
        (".kun/plans/plan-1.md", Allowed),
        (".kun/config.toml", Protected),
        (".claude/settings.json", Protected),
        (".claude/commandsX/x.md", Protected),
        // the link inside the exception leads back to the settings
        (".claude/commands/escape.md", Protected),
        // another spelling is another directory on this file system: not the exception
        (".CLAUDE/commands/deploy.md", Protected),
    ];
    for (input, want) in table {
        let expected = match want {
            Allowed => Ok(()),
            Protected => Err(ErrorCode::SandboxProtectedPath),
        };
        assert_eq!(fx.write(input, &rule).map(|_| ()), expected, "{input}");
        assert_eq!(
            through_port(input).map(|_| ()),
            expected,
            "{input} via the port"
        );
    }
    assert_eq!(sandbox.protected_paths(), &rule);
    assert_eq!(
        through_port(".git/config"),
        Err(ErrorCode::SandboxProtectedPath),
        "the default policy has no exceptions"
    );
}

#[test]
fn every_root_has_its_own_guards() {
    let fx = Fixture::new();
    let second = fx.ws.parent().unwrap().join("second");
    fs::create_dir_all(second.join(".git")).unwrap();
    let input = second.join(".git/config");
    let err = resolve_workspace_path(
        input.to_str().unwrap(),
        &[fx.ws.clone(), second],
        SandboxMode::WorkspaceWrite,
        PathAccess::Write,
        &ProtectedPaths::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::SandboxProtectedPath);
}
