//! Whether the workspace counts as the user's own.

use serde::{Deserialize, Serialize};

/// The standing of the workspace's own definitions (its configuration, skills and agent
/// profiles). A repository is untrusted unless the user trusts it; then what it defines may
/// only **narrow** what the user configured, never widen it.
///
/// The assembly decides it (from the user's configuration) and hands it to every crate that
/// reads workspace files; those crates apply it, each to its own concept:
///
/// | crate | untrusted workspace |
/// |---|---|
/// | kun-skills | a skill's `allowed-tools` pre-approve nothing; `restrict-tools` still narrows |
/// | kun-delegation | a profile may narrow a built-in or host profile of the same name, never widen it |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceStanding {
    /// Not trusted: its definitions may only narrow.
    #[default]
    Untrusted,
    /// Trusted by the user: its definitions count as the user's own.
    Trusted,
}

impl WorkspaceStanding {
    /// Whether the workspace is trusted.
    #[must_use]
    pub const fn is_trusted(self) -> bool {
        matches!(self, Self::Trusted)
    }
}
