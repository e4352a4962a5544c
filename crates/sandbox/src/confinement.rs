//! OS confinement of commands: the start-up probe and the tiers it can choose.
//!
//! SPEC §5 orders three tiers: bubblewrap, then Landlock + seccomp, then none. Only the last
//! exists today, so the probe always reports [`ConfinementTier::None`] and workspace-write asks
//! before every command. Adding a tier means adding its [`CommandConfinement`] type, a variant
//! of the private `Choice` enum and a check in [`SandboxCapabilities::probe`]; nothing else
//! changes, because the policy only looks at the tier.

use kun_ports::{CommandConfinement, ConfinementError, ConfinementScope, ConfinementTier};
use std::fmt;
use std::process::Command;
use std::sync::Arc;

/// The tier of no confinement: commands run as they are.
///
/// Under workspace-write that means every command needs an approval (see
/// [`crate::tool_verdict`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoConfinement;

impl CommandConfinement for NoConfinement {
    fn tier(&self) -> ConfinementTier {
        ConfinementTier::None
    }

    /// Leaves `command` untouched.
    fn confine(
        &self,
        _command: &mut Command,
        _scope: &ConfinementScope,
    ) -> Result<(), ConfinementError> {
        Ok(())
    }
}

/// The confinement a probe chose. Invariant: each variant's tier is the one it reports.
#[derive(Debug, Clone, Copy)]
enum Choice {
    /// Commands run unconfined.
    None(NoConfinement),
}

/// What the start-up probe found: the tier commands will run under, and why that one.
/// `kun-tools doctor` prints it.
///
/// ```
/// use kun_ports::ConfinementTier;
/// use kun_sandbox::SandboxCapabilities;
///
/// let caps = SandboxCapabilities::probe();
/// assert_eq!(caps.tier(), ConfinementTier::None);
/// assert_eq!(caps.confinement().tier(), caps.tier());
/// println!("{caps}"); // command confinement: none (…)
/// ```
#[derive(Debug, Clone)]
pub struct SandboxCapabilities {
    choice: Choice,
    reason: String,
}

impl SandboxCapabilities {
    /// Probes the machine for the strongest usable tier.
    #[must_use]
    pub fn probe() -> Self {
        Self {
            choice: Choice::None(NoConfinement),
            reason: "OS confinement of commands is not built yet; workspace-write asks before \
                     every command"
                .to_owned(),
        }
    }

    /// The tier commands run under.
    #[must_use]
    pub const fn tier(&self) -> ConfinementTier {
        match self.choice {
            Choice::None(_) => ConfinementTier::None,
        }
    }

    /// Why this tier, in words for diagnostics.
    #[must_use]
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The confinement adapter for the chosen tier.
    #[must_use]
    pub fn confinement(&self) -> Arc<dyn CommandConfinement> {
        match self.choice {
            Choice::None(none) => Arc::new(none),
        }
    }
}

impl fmt::Display for SandboxCapabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tier = match self.tier() {
            ConfinementTier::Bubblewrap => "bubblewrap",
            ConfinementTier::Landlock => "landlock + seccomp",
            ConfinementTier::None => "none",
        };
        write!(f, "command confinement: {tier} ({})", self.reason)
    }
}
