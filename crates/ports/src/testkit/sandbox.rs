//! The contract suite of gate one's policy: [`SandboxPolicy`] (the SPEC §5 matrix and the path
//! rules). The [`CommandConfinement`](crate::CommandConfinement) suite is in `confinement.rs`.
//!
//! The path rules build a real workspace in a temporary directory, with real symbolic links,
//! so they need a Unix filesystem.

use crate::{
    ErrorCode, PathAccess, PathError, ResolvedPath, SandboxMode, SandboxPolicy, SandboxVerdict,
    ToolKind,
};
use std::path::Path;

/// The tool name the suite asks about; blocked verdicts must mention it.
const TOOL: &str = "contract_probe_tool";

/// Every rule a [`SandboxPolicy`] must satisfy. Panics naming the first broken rule.
///
/// * `tool_call` is allowed in every mode;
/// * read-only blocks `file_change` (`sandbox_read_only`) and commands
///   (`sandbox_command_blocked`);
/// * workspace-write allows `file_change`, and commands when the policy's tier is confined
///   (otherwise it asks for approval);
/// * danger-full-access allows every kind;
/// * external-sandbox blocks `file_change` (`sandbox_write_blocked`) and commands
///   (`sandbox_command_blocked`);
/// * blocked verdicts carry a `sandbox_*` code and a message naming the tool;
/// * paths, on a workspace in a temporary directory (Unix only): a plain relative path
///   resolves against the root with the right relative, lexical and physical paths; `..`
///   escapes, absolute paths outside, a symlink to an outside file and a path through a
///   symlink to an outside directory are refused, naming the path as given, with
///   `sandbox_read_blocked` for reads and `sandbox_write_blocked` for writes; read-only
///   refuses writes with `sandbox_read_only` and external-sandbox with
///   `sandbox_write_blocked`; danger-full-access returns the lexical path; empty input and
///   NUL bytes are `invalid_arguments`;
/// * protected paths (a policy without exceptions): under workspace-write a write to `.git`,
///   `.kun`, `.mcp.json`, `.claude` or `.agents` — at any depth, in another case, through
///   `..`, or through a symlink (dangling or not) leading into one — is
///   `sandbox_protected_path`, while reading them is allowed and danger-full-access writes
///   them.
pub fn sandbox_policy_contract(policy: &dyn SandboxPolicy) {
    check_matrix(policy);
    #[cfg(unix)]
    sandbox_path_rules(policy);
}

/// The matrix rules of [`sandbox_policy_contract`].
fn check_matrix(policy: &dyn SandboxPolicy) {
    let confined = policy.confinement_tier().is_confined();
    for &mode in SandboxMode::ALL {
        for &kind in ToolKind::ALL {
            let verdict = policy.check_tool(TOOL, kind, mode);
            let expected = expected_verdict(mode, kind, confined);
            match (&verdict, expected) {
                (SandboxVerdict::Allowed, Expected::Allowed)
                | (SandboxVerdict::ApprovalRequired, Expected::Approval) => {}
                (SandboxVerdict::Blocked(block), Expected::Blocked(code)) => {
                    assert_eq!(
                        block.code, code,
                        "{mode} must block {kind} with {code}, got {}",
                        block.code
                    );
                    assert!(
                        block.message.contains(TOOL),
                        "the {code} message for {kind} in {mode} must name the tool: {:?}",
                        block.message
                    );
                }
                _ => panic!(
                    "{mode} / {kind} (tier confined: {confined}): expected {expected:?}, got \
                     {verdict:?}"
                ),
            }
        }
    }
}

/// One cell of SPEC §5's table.
#[derive(Debug, Clone, Copy)]
enum Expected {
    Allowed,
    Approval,
    Blocked(ErrorCode),
}

fn expected_verdict(mode: SandboxMode, kind: ToolKind, confined: bool) -> Expected {
    use SandboxMode as M;
    use ToolKind as K;
    match (mode, kind) {
        (_, K::ToolCall) | (M::DangerFullAccess, _) | (M::WorkspaceWrite, K::FileChange) => {
            Expected::Allowed
        }
        (M::WorkspaceWrite, K::CommandExecution) if confined => Expected::Allowed,
        (M::WorkspaceWrite, K::CommandExecution) => Expected::Approval,
        (M::ReadOnly, K::FileChange) => Expected::Blocked(ErrorCode::SandboxReadOnly),
        (M::ExternalSandbox, K::FileChange) => Expected::Blocked(ErrorCode::SandboxWriteBlocked),
        (M::ReadOnly | M::ExternalSandbox, K::CommandExecution) => {
            Expected::Blocked(ErrorCode::SandboxCommandBlocked)
        }
    }
}

/// The path rules of [`sandbox_policy_contract`].
#[cfg(unix)]
fn sandbox_path_rules(policy: &dyn SandboxPolicy) {
    use std::os::unix::fs::symlink;

    let temp = tempfile::tempdir().expect("create a temporary directory");
    let ws = temp.path().join("ws");
    let outside = temp.path().join("outside");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "// inside\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "outside\n").unwrap();
    symlink(outside.join("secret.txt"), ws.join("evil")).unwrap();
    symlink(&outside, ws.join("outdir")).unwrap();
    let canonical_ws = std::fs::canonicalize(&ws).unwrap();
    let roots = [ws.clone()];
    let resolve = |input: &str, mode, access| policy.resolve_path(input, &roots, mode, access);

    for access in [PathAccess::Read, PathAccess::Write] {
        let mode = SandboxMode::WorkspaceWrite;
        for (input, relative) in [
            ("notes/todo.md", "notes/todo.md"),
            ("src/lib.rs", "src/lib.rs"),
        ] {
            let got = resolve(input, mode, access)
                .unwrap_or_else(|e| panic!("`{input}` ({access:?}) lies inside: {e:?}"));
            assert_inside(&got, input, &ws, &canonical_ws, relative);
        }
        let root = resolve(".", mode, access).expect("the root itself resolves");
        assert_eq!(root.relative, ".", "the root's relative path is `.`");

        let absolute_outside = outside.join("secret.txt");
        let escapes = [
            "../outside/secret.txt",
            "src/../../outside/new.txt",
            absolute_outside.to_str().expect("a UTF-8 temporary path"),
            "evil",
            "outdir/secret.txt",
            "outdir/new.txt",
        ];
        let outside_code = match access {
            PathAccess::Read => ErrorCode::SandboxReadBlocked,
            PathAccess::Write => ErrorCode::SandboxWriteBlocked,
        };
        for input in escapes {
            let err = refused(
                resolve(input, mode, access),
                input,
                "leads outside the workspace",
            );
            assert_refused(&err, outside_code, input);
            let err = refused(
                resolve(input, SandboxMode::ReadOnly, PathAccess::Read),
                input,
                "is outside, and read-only checks reads too",
            );
            assert_refused(&err, ErrorCode::SandboxReadBlocked, input);
        }
    }

    protected_path_rules(policy, &ws);

    for (mode, code) in [
        (SandboxMode::ReadOnly, ErrorCode::SandboxReadOnly),
        (SandboxMode::ExternalSandbox, ErrorCode::SandboxWriteBlocked),
    ] {
        let err = refused(
            resolve("src/lib.rs", mode, PathAccess::Write),
            "src/lib.rs",
            &format!("is a write, which {mode} refuses"),
        );
        assert_refused(&err, code, "src/lib.rs");
        let read = resolve("src/lib.rs", mode, PathAccess::Read)
            .unwrap_or_else(|e| panic!("{mode} must allow reading inside: {e:?}"));
        assert_inside(&read, "src/lib.rs", &ws, &canonical_ws, "src/lib.rs");
    }

    let danger = resolve(
        "../outside/secret.txt",
        SandboxMode::DangerFullAccess,
        PathAccess::Write,
    )
    .expect("danger-full-access allows paths outside the workspace");
    assert_eq!(
        danger.lexical,
        outside.join("secret.txt"),
        "danger-full-access returns the lexical path"
    );

    for input in ["", "bad\0name"] {
        for &mode in SandboxMode::ALL {
            let err = refused(
                resolve(input, mode, PathAccess::Read),
                input,
                "is malformed",
            );
            assert_eq!(
                err.code,
                ErrorCode::InvalidArguments,
                "{input:?} in {mode}: {err:?}"
            );
        }
    }
}

/// The protected-path rules of [`sandbox_policy_contract`].
#[cfg(unix)]
fn protected_path_rules(policy: &dyn SandboxPolicy, ws: &Path) {
    use std::os::unix::fs::symlink;

    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    symlink(".git/config", ws.join("innocent.txt")).unwrap();
    symlink(".git", ws.join("gitlink")).unwrap();
    symlink(".git/hooks/post-checkout", ws.join("dangling_hook")).unwrap();
    let roots = [ws.to_path_buf()];
    let resolve = |input: &str, mode, access| policy.resolve_path(input, &roots, mode, access);
    let guarded = [
        ".git/config",
        ".git/hooks/pre-commit",
        ".git",
        ".GIT/config",
        "./.git/../.git/config",
        "vendor/lib/.git/config",
        ".kun/config.toml",
        "sub/.kun/hooks.json",
        ".mcp.json",
        "packages/app/.mcp.json",
        ".claude/settings.json",
        ".claude/agents/helper.md",
        ".claude/skills/x/SKILL.md",
        ".claude/commands/deploy.md",
        ".agents/skills/x/SKILL.md",
        "innocent.txt",
        "gitlink/hooks/pre-commit",
        "dangling_hook",
    ];
    for input in guarded {
        let err = refused(
            resolve(input, SandboxMode::WorkspaceWrite, PathAccess::Write),
            input,
            "writes one of the agent's own guards",
        );
        assert_refused(&err, ErrorCode::SandboxProtectedPath, input);
        assert!(
            resolve(input, SandboxMode::DangerFullAccess, PathAccess::Write).is_ok(),
            "danger-full-access writes `{input}`"
        );
    }
    for input in [".git/config", "innocent.txt", ".kun/config.toml"] {
        resolve(input, SandboxMode::WorkspaceWrite, PathAccess::Read)
            .unwrap_or_else(|e| panic!("reading the guard `{input}` is allowed: {e:?}"));
    }
    for input in [
        ".github/workflows/ci.yml",
        ".gitignore",
        "git/config",
        "kun.toml",
    ] {
        resolve(input, SandboxMode::WorkspaceWrite, PathAccess::Write)
            .unwrap_or_else(|e| panic!("`{input}` is not a guard and may be written: {e:?}"));
    }
}

fn assert_inside(got: &ResolvedPath, input: &str, ws: &Path, canonical: &Path, relative: &str) {
    assert_eq!(got.lexical, ws.join(relative), "lexical path of `{input}`");
    assert_eq!(got.root.as_deref(), Some(ws), "root of `{input}`");
    assert_eq!(got.relative, relative, "relative path of `{input}`");
    assert!(
        got.physical.starts_with(canonical),
        "the physical path of `{input}` ({}) must lie inside {}",
        got.physical.display(),
        canonical.display()
    );
}

fn refused(result: Result<ResolvedPath, PathError>, input: &str, why: &str) -> PathError {
    match result {
        Err(err) => err,
        Ok(got) => panic!("{input:?} {why} and must be refused, but resolved to {got:?}"),
    }
}

fn assert_refused(err: &PathError, code: ErrorCode, input: &str) {
    assert_eq!(err.code, code, "`{input}`: {}", err.message);
    assert!(
        err.message.contains(input),
        "the refusal must name the path as given (`{input}`): {:?}",
        err.message
    );
}
