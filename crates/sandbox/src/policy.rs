//! [`WorkspaceSandbox`]: the [`SandboxPolicy`] adapter, the matrix and the path rules behind
//! one port.

use crate::{ProtectedPaths, resolve_workspace_path, tool_verdict};
use kun_ports::{
    CommandConfinement, ConfinementTier, PathAccess, PathError, ResolvedPath, SandboxMode,
    SandboxPolicy, SandboxVerdict, ToolKind,
};
use std::path::PathBuf;

/// Gate one. Holds the confinement tier in force, which decides whether workspace-write runs
/// commands directly (confined) or asks first (unconfined), and the protected-path rule with
/// the user's exceptions; everything else is the fixed matrix and [`resolve_workspace_path`].
///
/// The default is the unconfined tier, the safe assumption (commands then need approval), and
/// protected paths without exceptions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSandbox {
    tier: ConfinementTier,
    protected: ProtectedPaths,
}

impl WorkspaceSandbox {
    /// A policy for commands confined under `tier`, with no protected-path exceptions.
    #[must_use]
    pub fn new(tier: ConfinementTier) -> Self {
        Self {
            tier,
            protected: ProtectedPaths::default(),
        }
    }

    /// A policy for the tier `confinement` applies.
    #[must_use]
    pub fn for_confinement(confinement: &dyn CommandConfinement) -> Self {
        Self::new(confinement.tier())
    }

    /// The same policy with these protected-path exceptions (the user config's
    /// `[sandbox] protected_path_exceptions`; never the workspace's own).
    #[must_use]
    pub fn with_protected_paths(mut self, protected: ProtectedPaths) -> Self {
        self.protected = protected;
        self
    }

    /// The protected-path rule in force.
    #[must_use]
    pub const fn protected_paths(&self) -> &ProtectedPaths {
        &self.protected
    }
}

impl Default for WorkspaceSandbox {
    fn default() -> Self {
        Self::new(ConfinementTier::None)
    }
}

impl SandboxPolicy for WorkspaceSandbox {
    fn check_tool(&self, tool_name: &str, kind: ToolKind, mode: SandboxMode) -> SandboxVerdict {
        tool_verdict(tool_name, kind, mode, self.tier)
    }

    fn resolve_path(
        &self,
        input: &str,
        roots: &[PathBuf],
        mode: SandboxMode,
        access: PathAccess,
    ) -> Result<ResolvedPath, PathError> {
        resolve_workspace_path(input, roots, mode, access, &self.protected)
    }

    fn confinement_tier(&self) -> ConfinementTier {
        self.tier
    }
}
