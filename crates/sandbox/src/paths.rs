//! Workspace path resolution (SPEC §5): where a path argument points, and whether the sandbox
//! lets a tool read or write there.
//!
//! The steps, in order:
//! 1. Reject malformed input (empty, NUL bytes): `invalid_arguments`.
//! 2. Make the path absolute against the primary root (`roots[0]`) and normalise it
//!    lexically. Under danger-full-access, stop here: the lexical path is the answer (its
//!    `physical` field repeats it) and nothing is checked.
//! 3. Refuse writes the mode forbids: read-only → `sandbox_read_only`, external-sandbox →
//!    `sandbox_write_blocked`.
//! 4. Find the physical target (symlinks followed, dangling ones by hand; see
//!    [`crate::physical`]) and require it inside some root's canonical path, for reads as
//!    well as writes. Anything else (an escape, a link loop, a missing primary root) is
//!    refused — `sandbox_read_blocked` for a read, `sandbox_write_blocked` for a write: the
//!    sandbox refuses what it cannot prove inside.
//! 5. For a write, refuse the agent's own guards (`.git`, `.kun`, `.mcp.json`, `.claude`,
//!    `.agents`, at any depth, in the spellings file systems fold) on the lexical and the
//!    physical path, unless the user listed an exception: `sandbox_protected_path` (see
//!    [`crate::protected`]). Every file-changing tool resolves its path here, so the rule
//!    holds for tools that do not exist yet.
//!
//! The answer carries the lexical path (for display and as a command's cwd), the physical one
//! (what was checked), the root and the `/`-separated path relative to it. A tool that writes
//! should open the lexical path without following a final symlink, so a link swapped in
//! after this check cannot redirect the write.

use crate::lexical::{absolute_against, normalize, relative_to};
use crate::matrix::MODE_SETTING;
use crate::physical::{MAX_LINK_FOLLOWS, Unresolvable, physical_path};
use crate::protected::ProtectedPaths;
use kun_ports::{ErrorCode, PathAccess, PathError, ResolvedPath, SandboxMode};
use std::fs;
use std::path::{Path, PathBuf};

/// A workspace root, as configured and as it exists on disk.
struct Root {
    /// Absolute and normalised.
    lexical: PathBuf,
    /// Canonical.
    physical: PathBuf,
}

/// Resolves a tool's path argument against the workspace `roots` under `mode` for `access`,
/// with `protected` deciding which guards a write may not touch. This is what
/// [`crate::WorkspaceSandbox`] answers for
/// [`SandboxPolicy::resolve_path`](kun_ports::SandboxPolicy::resolve_path).
///
/// Relative roots are taken against the process's working directory. Missing roots other
/// than the primary one are ignored.
///
/// # Errors
/// A [`PathError`] naming the path as given: `invalid_arguments` for malformed input,
/// `sandbox_read_only` / `sandbox_write_blocked` for writes the mode refuses;
/// `sandbox_read_blocked` (reads) or `sandbox_write_blocked` (writes) for paths outside every
/// root, link loops and a missing primary root; `sandbox_protected_path` for a write to a
/// guard.
pub fn resolve_workspace_path(
    input: &str,
    roots: &[PathBuf],
    mode: SandboxMode,
    access: PathAccess,
    protected: &ProtectedPaths,
) -> Result<ResolvedPath, PathError> {
    check_input(input)?;
    let roots = lexical_roots(roots)?;
    if mode == SandboxMode::DangerFullAccess {
        return unchecked(input, &roots);
    }
    check_access(input, mode, access)?;
    let Some(primary) = roots.first() else {
        return Err(error(
            boundary_code(access),
            format!(
                "cannot check `{}`: no workspace root is configured, so the sandbox has \
                 nothing to keep paths inside; start with a workspace directory",
                shown(input)
            ),
        ));
    };
    let lexical = absolute_against(Path::new(input), primary);
    let existing = physical_roots(&roots, access)?;
    let physical = physical_path(&lexical).map_err(|why| unresolvable(input, why, access))?;
    let Some(container) = existing.iter().find(|r| physical.starts_with(&r.physical)) else {
        return Err(escape(input, &physical, &roots, mode, access));
    };
    // Name the root the path was written under when there is one; otherwise the root the
    // path physically lies in.
    let (root, relative) = existing
        .iter()
        .find_map(|r| relative_to(&lexical, &r.lexical).map(|rel| (&r.lexical, rel)))
        .or_else(|| {
            relative_to(&physical, &container.physical).map(|rel| (&container.lexical, rel))
        })
        .unwrap_or((&container.lexical, ".".to_owned()));
    if access == PathAccess::Write {
        let physical_relative = physical
            .strip_prefix(&container.physical)
            .unwrap_or(&physical);
        protected.check_write(input, Path::new(&relative), physical_relative)?;
    }
    Ok(ResolvedPath {
        root: Some(root.clone()),
        relative,
        lexical,
        physical,
    })
}

/// The code for a path the sandbox cannot prove inside the roots.
const fn boundary_code(access: PathAccess) -> ErrorCode {
    match access {
        PathAccess::Read => ErrorCode::SandboxReadBlocked,
        PathAccess::Write => ErrorCode::SandboxWriteBlocked,
    }
}

/// Rejects input no file name can match.
fn check_input(input: &str) -> Result<(), PathError> {
    if input.trim().is_empty() {
        return Err(error(
            ErrorCode::InvalidArguments,
            "the path is empty; pass a file or directory path, relative to the workspace \
             root or absolute"
                .to_owned(),
        ));
    }
    if input.contains('\0') {
        return Err(error(
            ErrorCode::InvalidArguments,
            format!(
                "the path `{}` contains a NUL byte, which no file name can hold; pass the \
                 path without it",
                shown(input)
            ),
        ));
    }
    Ok(())
}

/// Refuses writes the mode forbids, whatever the path.
fn check_access(input: &str, mode: SandboxMode, access: PathAccess) -> Result<(), PathError> {
    match (mode, access) {
        (SandboxMode::ReadOnly, PathAccess::Write) => Err(error(
            ErrorCode::SandboxReadOnly,
            format!(
                "writing `{}` is refused: the sandbox is read-only. Ask the user to set \
                 {MODE_SETTING} to workspace-write if the change is needed.",
                shown(input)
            ),
        )),
        (SandboxMode::ExternalSandbox, PathAccess::Write) => Err(error(
            ErrorCode::SandboxWriteBlocked,
            format!(
                "writing `{}` is refused: under external-sandbox, in-process tools do not \
                 write files. Ask the user to set {MODE_SETTING} to workspace-write if the \
                 change is needed.",
                shown(input)
            ),
        )),
        _ => Ok(()),
    }
}

/// Danger-full-access: the lexical path, unchecked; the physical path is the lexical one.
fn unchecked(input: &str, roots: &[PathBuf]) -> Result<ResolvedPath, PathError> {
    let given = Path::new(input);
    let lexical = match roots.first() {
        Some(primary) => absolute_against(given, primary),
        None if given.is_absolute() => normalize(given),
        None => {
            return Err(error(
                ErrorCode::InvalidArguments,
                format!(
                    "the relative path `{}` has nothing to be relative to: no workspace root \
                     is configured; pass an absolute path",
                    shown(input)
                ),
            ));
        }
    };
    let inside = roots
        .iter()
        .find_map(|root| relative_to(&lexical, root).map(|rel| (root.clone(), rel)));
    let (root, relative) = match inside {
        Some((root, rel)) => (Some(root), rel),
        None => (None, lexical.to_string_lossy().into_owned()),
    };
    Ok(ResolvedPath {
        physical: lexical.clone(),
        lexical,
        root,
        relative,
    })
}

/// The roots made absolute, normalised and de-duplicated, in their given order.
fn lexical_roots(roots: &[PathBuf]) -> Result<Vec<PathBuf>, PathError> {
    let mut out: Vec<PathBuf> = Vec::with_capacity(roots.len());
    for root in roots {
        let absolute = std::path::absolute(root).map_err(|err| {
            error(
                ErrorCode::SandboxWriteBlocked,
                format!(
                    "the workspace root `{}` cannot be made absolute ({err}); configure it as \
                     an absolute path",
                    root.display()
                ),
            )
        })?;
        let absolute = normalize(&absolute);
        if !out.contains(&absolute) {
            out.push(absolute);
        }
    }
    Ok(out)
}

/// The roots that exist, canonicalised. The primary root must exist; the others may not.
fn physical_roots(roots: &[PathBuf], access: PathAccess) -> Result<Vec<Root>, PathError> {
    let mut out = Vec::with_capacity(roots.len());
    for (index, lexical) in roots.iter().enumerate() {
        match fs::canonicalize(lexical) {
            Ok(physical) if physical.is_dir() => out.push(Root {
                lexical: lexical.clone(),
                physical,
            }),
            _ if index == 0 => {
                return Err(error(
                    boundary_code(access),
                    format!(
                        "the workspace root `{}` does not exist or is not a directory, so no \
                         path can be checked against it; create it or start with an existing \
                         workspace directory",
                        lexical.display()
                    ),
                ));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The error for a path whose target lies outside every root.
fn escape(
    input: &str,
    physical: &Path,
    roots: &[PathBuf],
    mode: SandboxMode,
    access: PathAccess,
) -> PathError {
    let listed: Vec<_> = roots.iter().map(|r| r.display().to_string()).collect();
    error(
        boundary_code(access),
        format!(
            "`{}` resolves to `{}`, outside the workspace ({}); under {mode} tools read and \
             write only inside the workspace roots. Use a path inside the workspace, or ask \
             the user to add that directory as a workspace root or to change {MODE_SETTING}.",
            shown(input),
            physical.display(),
            listed.join(", "),
        ),
    )
}

/// The error for a path whose links cannot be followed.
fn unresolvable(input: &str, why: Unresolvable, access: PathAccess) -> PathError {
    let message = match why {
        Unresolvable::TooManyLinks => format!(
            "`{}` cannot be resolved: following its symbolic links took more than \
             {MAX_LINK_FOLLOWS} steps, so they probably form a loop. Fix or remove the links, \
             or use another path.",
            shown(input)
        ),
        Unresolvable::UnreadableLink { link, source } => format!(
            "`{}` cannot be checked: the symbolic link `{}` on the way could not be read \
             ({source}). Try again, or use another path.",
            shown(input),
            link.display()
        ),
    };
    error(boundary_code(access), message)
}

/// The input with control characters escaped, so a message stays on one line.
fn shown(input: &str) -> String {
    input
        .chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// A [`PathError`].
fn error(code: ErrorCode, message: String) -> PathError {
    PathError { code, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_in_messages() {
        assert_eq!(shown("a\nb\0c"), "a\\nb\\u{0}c");
        assert_eq!(shown("it's ü.txt"), "it's ü.txt");
    }

    #[test]
    fn roots_are_normalised_and_deduplicated() {
        let roots = [
            PathBuf::from("/ws/./a/"),
            PathBuf::from("/ws/a"),
            PathBuf::from("/other/../ws2"),
        ];
        assert_eq!(
            lexical_roots(&roots).unwrap(),
            [PathBuf::from("/ws/a"), PathBuf::from("/ws2")]
        );
    }
}
