//! `allowed-tools` as Claude Code means it: calls the active skills name run without a prompt.
//!
//! [`PreApprovingGate`] wraps the turn's approver. A request is answered `Allow` without
//! asking only when all of these hold; otherwise it goes to the wrapped approver:
//!
//! | condition | why |
//! |---|---|
//! | the reason is the approval matrix ([`ApprovalReason::RuntimePolicy`]) | forced approvals (a command that cannot run confined, a tool that always asks) are never skipped, as a hook's `allow` never skips them |
//! | a rule covers the tool, and for a scoped rule (`Bash(git add *)`) the call's parsed command prefix | a scoped rule never covers a compound command |
//! | the agent itself asks (no `delegated_agent`) | a child agent's calls are approved on their own |
//!
//! Rules come from [`Activation::pre_approved`](crate::Activation): skills from an untrusted
//! workspace contribute none.

use crate::names::ToolRule;
use async_trait::async_trait;
use kun_ports::{ApprovalDecision, ApprovalGate, ApprovalReason, ApprovalRequest};
use std::sync::Arc;

/// An approver that pre-approves what the active skills allow; see the module docs.
pub struct PreApprovingGate {
    inner: Arc<dyn ApprovalGate>,
    rules: Vec<ToolRule>,
}

impl std::fmt::Debug for PreApprovingGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreApprovingGate")
            .field("rules", &self.rules)
            .finish_non_exhaustive()
    }
}

impl PreApprovingGate {
    /// Wraps `inner` with these rules.
    #[must_use]
    pub fn new(inner: Arc<dyn ApprovalGate>, rules: Vec<ToolRule>) -> Self {
        Self { inner, rules }
    }

    /// Whether a request is pre-approved.
    #[must_use]
    pub fn covers(&self, request: &ApprovalRequest) -> bool {
        if request.reason != ApprovalReason::RuntimePolicy || request.delegated_agent.is_some() {
            return false;
        }
        let scope = request
            .grant_key
            .session_grantable
            .then_some(request.grant_key.scope.as_deref())
            .flatten();
        self.rules
            .iter()
            .any(|rule| rule.covers(&request.tool_name, scope))
    }
}

#[async_trait]
impl ApprovalGate for PreApprovingGate {
    async fn request_approval(&self, request: &ApprovalRequest) -> ApprovalDecision {
        if self.covers(request) {
            return ApprovalDecision::Allow;
        }
        self.inner.request_approval(request).await
    }
}
