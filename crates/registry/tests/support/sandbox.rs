//! A minimal in-test `SandboxPolicy` implementing SPEC §5's table (kun-sandbox is the real
//! one; kun-registry does not depend on it). Paths are resolved lexically: no symlinks.

use kun_ports::{
    ConfinementTier, ErrorCode, PathAccess, PathError, ResolvedPath, SandboxBlock, SandboxMode,
    SandboxPolicy, SandboxVerdict, ToolKind,
};
use std::path::{Component, Path, PathBuf};

/// SPEC §5's matrix, with a fixed confinement tier.
#[derive(Debug, Clone, Copy)]
pub struct SpecSandbox {
    pub tier: ConfinementTier,
}

impl SpecSandbox {
    /// Commands run confined (bubblewrap).
    pub const fn confined() -> Self {
        Self {
            tier: ConfinementTier::Bubblewrap,
        }
    }

    /// Commands cannot be confined: workspace-write forces approval.
    pub const fn unconfined() -> Self {
        Self {
            tier: ConfinementTier::None,
        }
    }
}

fn block(code: ErrorCode, message: String) -> SandboxVerdict {
    SandboxVerdict::Blocked(SandboxBlock { code, message })
}

fn lexical(root: &Path, input: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for component in root.join(input).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

impl SandboxPolicy for SpecSandbox {
    fn check_tool(&self, tool_name: &str, kind: ToolKind, mode: SandboxMode) -> SandboxVerdict {
        use SandboxMode as M;
        use ToolKind as K;
        match (mode, kind) {
            (_, K::ToolCall) | (M::DangerFullAccess, _) | (M::WorkspaceWrite, K::FileChange) => {
                SandboxVerdict::Allowed
            }
            (M::WorkspaceWrite, K::CommandExecution) => {
                if self.tier.is_confined() {
                    SandboxVerdict::Allowed
                } else {
                    SandboxVerdict::ApprovalRequired
                }
            }
            (M::ReadOnly, K::FileChange) => block(
                ErrorCode::SandboxReadOnly,
                format!("{tool_name} changes files; the sandbox is read-only"),
            ),
            (M::ExternalSandbox, K::FileChange) => block(
                ErrorCode::SandboxWriteBlocked,
                format!("{tool_name} changes files in process; external-sandbox refuses that"),
            ),
            (M::ReadOnly | M::ExternalSandbox, K::CommandExecution) => block(
                ErrorCode::SandboxCommandBlocked,
                format!("{tool_name} runs commands; this sandbox mode refuses them"),
            ),
        }
    }

    fn resolve_path(
        &self,
        input: &str,
        roots: &[PathBuf],
        mode: SandboxMode,
        access: PathAccess,
    ) -> Result<ResolvedPath, PathError> {
        let primary = roots.first().map_or(Path::new("/"), PathBuf::as_path);
        let path = lexical(primary, input);
        let root = roots.iter().find(|r| path.starts_with(r)).cloned();
        if root.is_none() && mode != SandboxMode::DangerFullAccess {
            return Err(PathError {
                code: match access {
                    PathAccess::Read => ErrorCode::SandboxReadBlocked,
                    PathAccess::Write => ErrorCode::SandboxWriteBlocked,
                },
                message: format!("{input} is outside the workspace"),
            });
        }
        if access == PathAccess::Write {
            match mode {
                SandboxMode::ReadOnly => {
                    return Err(PathError {
                        code: ErrorCode::SandboxReadOnly,
                        message: format!("{input} cannot be written: read-only sandbox"),
                    });
                }
                SandboxMode::ExternalSandbox => {
                    return Err(PathError {
                        code: ErrorCode::SandboxWriteBlocked,
                        message: format!("{input} cannot be written: external sandbox"),
                    });
                }
                SandboxMode::WorkspaceWrite | SandboxMode::DangerFullAccess => {}
            }
        }
        let relative = root.as_ref().map_or_else(
            || path.to_string_lossy().into_owned(),
            |r| {
                let rel = path
                    .strip_prefix(r)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                if rel.is_empty() { ".".to_owned() } else { rel }
            },
        );
        Ok(ResolvedPath {
            lexical: path.clone(),
            physical: path,
            root,
            relative,
        })
    }

    fn confinement_tier(&self) -> ConfinementTier {
        self.tier
    }
}
