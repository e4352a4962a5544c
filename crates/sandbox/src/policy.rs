//! [`WorkspaceSandbox`]: the [`SandboxPolicy`] adapter, the matrix and the path rules behind
//! one port.

use crate::{resolve_workspace_path, tool_verdict};
use kun_ports::{
    CommandConfinement, ConfinementTier, PathAccess, PathError, ResolvedPath, SandboxMode,
    SandboxPolicy, SandboxQuery, SandboxVerdict,
};
use std::path::PathBuf;

/// Gate one. Holds the confinement tier in force, which decides whether workspace-write runs
/// commands directly (confined) or asks first (unconfined); everything else is the fixed
/// matrix and [`resolve_workspace_path`].
///
/// The default is the unconfined tier, the safe assumption: commands then need approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkspaceSandbox {
    tier: ConfinementTier,
}

impl WorkspaceSandbox {
    /// A policy for commands confined under `tier`.
    #[must_use]
    pub const fn new(tier: ConfinementTier) -> Self {
        Self { tier }
    }

    /// A policy for the tier `confinement` applies.
    #[must_use]
    pub fn for_confinement(confinement: &dyn CommandConfinement) -> Self {
        Self::new(confinement.tier())
    }
}

impl Default for WorkspaceSandbox {
    fn default() -> Self {
        Self::new(ConfinementTier::None)
    }
}

impl SandboxPolicy for WorkspaceSandbox {
    fn check_tool(
        &self,
        tool_name: &str,
        query: SandboxQuery,
        mode: SandboxMode,
    ) -> SandboxVerdict {
        tool_verdict(tool_name, query, mode, self.tier)
    }

    fn resolve_path(
        &self,
        input: &str,
        roots: &[PathBuf],
        mode: SandboxMode,
        access: PathAccess,
    ) -> Result<ResolvedPath, PathError> {
        resolve_workspace_path(input, roots, mode, access)
    }

    fn confinement_tier(&self) -> ConfinementTier {
        self.tier
    }
}
