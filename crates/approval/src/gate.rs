//! [`Gate`]: the one implementation of [`ApprovalGate`], wrapped around any [`Approver`].

use crate::approver::{Approver, NoAnswer};
use crate::events::{ApprovalEvent, DecisionSource, EventLog, EventSubscription};
use crate::grants::SessionGrants;
use async_trait::async_trait;
use futures_util::FutureExt as _;
use kun_ports::{ApprovalDecision, ApprovalGate, ApprovalRequest, GrantKey};
use std::panic::AssertUnwindSafe;
use std::time::Duration;

/// How long a gate waits for an answer before denying: five minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// An approval gate for one session: asks its [`Approver`], remembers session grants, logs
/// every question and answer, and fails closed.
///
/// `request_approval` reads top to bottom:
/// 1. log `approval_requested`;
/// 2. a session grant that covers the request's [`GrantKey`] answers `Allow` without asking
///    (for command keys: every key of the command was granted);
/// 3. otherwise ask the approver, bounded by the timeout; no answer (gone, dropped, closed,
///    timed out, failed or panicked) is a `Deny` whose reason says which;
/// 4. an approver's `AllowForSession` records a grant for the request's key — each command
///    key of it — unless the key is one-call only, which records nothing;
/// 5. log `approval_resolved` and return the decision.
///
/// Invariants: it never hangs longer than its timeout and never errors. Grants only grow and
/// belong to this gate: a new gate is a new session. Two concurrent requests with the same key
/// may both be asked before either grant lands; that asks twice but never allows wrongly.
#[derive(Debug)]
pub struct Gate<A> {
    approver: A,
    timeout: Duration,
    grants: SessionGrants,
    events: EventLog,
}

impl<A: Approver> Gate<A> {
    /// A gate around `approver`, with [`DEFAULT_TIMEOUT`], no grants and an empty log.
    #[must_use]
    pub fn new(approver: A) -> Self {
        Self {
            approver,
            timeout: DEFAULT_TIMEOUT,
            grants: SessionGrants::default(),
            events: EventLog::new(),
        }
    }

    /// Sets how long to wait for an answer before denying.
    #[must_use]
    pub const fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long the gate waits for an answer.
    #[must_use]
    pub const fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The approver behind the gate.
    #[must_use]
    pub const fn approver(&self) -> &A {
        &self.approver
    }

    /// The session grants so far, one key per granted tool, action or command key: whole
    /// tools first, then actions, then command keys.
    #[must_use]
    pub fn grants(&self) -> Vec<GrantKey> {
        self.grants.sorted()
    }

    /// The event log.
    #[must_use]
    pub const fn events(&self) -> &EventLog {
        &self.events
    }

    /// Shorthand for `self.events().subscribe()`: replays every past event, then follows.
    #[must_use]
    pub fn subscribe(&self) -> EventSubscription {
        self.events.subscribe()
    }

    /// Asks the approver under the timeout, catching a panic: always a decision.
    async fn ask_approver(&self, request: &ApprovalRequest) -> (ApprovalDecision, DecisionSource) {
        let asked = AssertUnwindSafe(self.approver.ask(request)).catch_unwind();
        let answer = match tokio::time::timeout(self.timeout, asked).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_panic)) => Err(NoAnswer::Failed("it panicked".to_owned())),
            Err(_elapsed) => Err(NoAnswer::TimedOut(self.timeout)),
        };
        match answer {
            Ok(decision) => (decision, DecisionSource::Approver),
            Err(no_answer) => {
                tracing::warn!(
                    approval_id = %request.approval_id,
                    tool = %request.tool_name,
                    "approval denied, no answer: {no_answer:?}"
                );
                (
                    ApprovalDecision::deny(no_answer.denial_reason()),
                    DecisionSource::FailClosed,
                )
            }
        }
    }
}

#[async_trait]
impl<A: Approver> ApprovalGate for Gate<A> {
    async fn request_approval(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.events.record(ApprovalEvent::ApprovalRequested {
            approval_id: request.approval_id.clone(),
            call_id: request.call_id.clone(),
            tool_name: request.tool_name.clone(),
            reason: request.reason,
            grant_key: request.grant_key.clone(),
        });
        let (decision, source) = if self.grants.covers(&request.grant_key) {
            (ApprovalDecision::Allow, DecisionSource::SessionGrant)
        } else {
            self.ask_approver(request).await
        };
        if decision == ApprovalDecision::AllowForSession {
            self.grants.grant(&request.grant_key);
        }
        self.events.record(ApprovalEvent::ApprovalResolved {
            approval_id: request.approval_id.clone(),
            tool_name: request.tool_name.clone(),
            source,
            decision: decision.clone(),
        });
        decision
    }
}
