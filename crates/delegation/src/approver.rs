//! A child's approvals go to the parent's approver, naming the child.

use async_trait::async_trait;
use kun_ports::{ApprovalDecision, ApprovalGate, ApprovalRequest};
use std::sync::Arc;

/// Forwards a child's approval requests to the parent's approver with
/// [`ApprovalRequest::delegated_agent`] set to the profile, so the prompt (in `serve`, the
/// client's elicitation form) says which child asks.
pub struct ChildApprover {
    parent: Arc<dyn ApprovalGate>,
    profile: String,
}

impl std::fmt::Debug for ChildApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildApprover")
            .field("profile", &self.profile)
            .finish_non_exhaustive()
    }
}

impl ChildApprover {
    /// Wraps the parent's approver for a child of `profile`.
    #[must_use]
    pub fn new(parent: Arc<dyn ApprovalGate>, profile: impl Into<String>) -> Self {
        Self {
            parent,
            profile: profile.into(),
        }
    }
}

#[async_trait]
impl ApprovalGate for ChildApprover {
    async fn request_approval(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let mut request = request.clone();
        request.delegated_agent = Some(self.profile.clone());
        self.parent.request_approval(&request).await
    }
}
