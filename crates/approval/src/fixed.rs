//! The fixed-answer approver behind `--yes` and `--no`.

use crate::approver::{Approver, NoAnswer};
use crate::gate::Gate;
use async_trait::async_trait;
use kun_ports::{ApprovalDecision, ApprovalRequest};

/// Answers every question the same way, without asking anyone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedAnswer {
    decision: ApprovalDecision,
}

impl FixedAnswer {
    /// Always `Allow` (`--yes`). Each call is allowed on its own; no session grants are made.
    #[must_use]
    pub const fn allow() -> Self {
        Self {
            decision: ApprovalDecision::Allow,
        }
    }

    /// Always `Deny` with `reason` (`--no`, or a host with no way to ask).
    #[must_use]
    pub fn deny(reason: impl Into<String>) -> Self {
        Self {
            decision: ApprovalDecision::deny(reason),
        }
    }

    /// The answer given to every question.
    #[must_use]
    pub const fn decision(&self) -> &ApprovalDecision {
        &self.decision
    }
}

#[async_trait]
impl Approver for FixedAnswer {
    async fn ask(&self, _request: &ApprovalRequest) -> Result<ApprovalDecision, NoAnswer> {
        Ok(self.decision.clone())
    }
}

impl Gate<FixedAnswer> {
    /// A gate that allows every call (`--yes`).
    #[must_use]
    pub fn allow_all() -> Self {
        Self::new(FixedAnswer::allow())
    }

    /// A gate that denies every call with `reason` (`--no`).
    #[must_use]
    pub fn deny_all(reason: impl Into<String>) -> Self {
        Self::new(FixedAnswer::deny(reason))
    }
}
