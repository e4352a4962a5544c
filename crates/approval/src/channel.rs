//! The in-memory approver: requests go out on a channel, answers come back on a one-shot.

use crate::approver::{Approver, NoAnswer};
use crate::gate::Gate;
use async_trait::async_trait;
use kun_ports::{ApprovalDecision, ApprovalRequest};
use tokio::sync::{mpsc, oneshot};

/// How many unanswered requests may queue before the host side waits (inside the gate's
/// timeout) for the approver to catch up.
pub const DEFAULT_QUEUE: usize = 64;

/// A gate whose approver is whoever holds the returned [`ApprovalInbox`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use kun_approval::channel_gate;
/// use kun_ports::{ApprovalDecision, ApprovalGate, ApprovalReason, ApprovalRequest, GrantKey};
///
/// let (gate, mut inbox) = channel_gate();
/// tokio::spawn(async move {
///     while let Some(pending) = inbox.recv().await {
///         pending.respond(ApprovalDecision::Allow);
///     }
/// });
/// let request = ApprovalRequest {
///     approval_id: "appr_1".into(),
///     thread_id: "t".into(),
///     turn_id: "u".into(),
///     call_id: "c1".into(),
///     tool_name: "write".into(),
///     arguments: serde_json::json!({"path": "notes.md"}),
///     reason: ApprovalReason::RuntimePolicy,
///     grant_key: GrantKey::tool("write"),
///     delegated_agent: None,
/// };
/// assert_eq!(gate.request_approval(&request).await, ApprovalDecision::Allow);
/// # }
/// ```
#[must_use]
pub fn channel_gate() -> (Gate<ChannelApprover>, ApprovalInbox) {
    let (approver, inbox) = ChannelApprover::new(DEFAULT_QUEUE);
    (Gate::new(approver), inbox)
}

/// The host side of the channel: sends each question to the [`ApprovalInbox`].
#[derive(Debug, Clone)]
pub struct ChannelApprover {
    outbox: mpsc::Sender<PendingApproval>,
}

impl ChannelApprover {
    /// A connected pair; `queue` (at least 1) bounds the unanswered requests in flight.
    #[must_use]
    pub fn new(queue: usize) -> (Self, ApprovalInbox) {
        let (outbox, requests) = mpsc::channel(queue.max(1));
        (Self { outbox }, ApprovalInbox { requests })
    }
}

#[async_trait]
impl Approver for ChannelApprover {
    async fn ask(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, NoAnswer> {
        let (responder, answer) = oneshot::channel();
        let pending = PendingApproval {
            request: request.clone(),
            responder: Responder(responder),
        };
        self.outbox
            .send(pending)
            .await
            .map_err(|_closed| NoAnswer::NoApprover)?;
        answer.await.map_err(|_dropped| NoAnswer::Dropped)
    }
}

/// The approver side of the channel: receives the questions.
///
/// Dropping the inbox disconnects the approver: queued and later requests are denied.
#[derive(Debug)]
pub struct ApprovalInbox {
    requests: mpsc::Receiver<PendingApproval>,
}

impl ApprovalInbox {
    /// The next question, or `None` once every gate holding the other side is gone.
    pub async fn recv(&mut self) -> Option<PendingApproval> {
        self.requests.recv().await
    }

    /// The next question if one is already waiting; never waits.
    pub fn try_recv(&mut self) -> Option<PendingApproval> {
        self.requests.try_recv().ok()
    }
}

/// One question waiting for an answer. Dropping it unanswered denies the call.
#[derive(Debug)]
pub struct PendingApproval {
    /// What is asked.
    pub request: ApprovalRequest,
    /// Where the answer goes.
    pub responder: Responder,
}

impl PendingApproval {
    /// Answers the question.
    pub fn respond(self, decision: ApprovalDecision) {
        self.responder.respond(decision);
    }
}

/// The one-shot answer slot of a [`PendingApproval`].
#[derive(Debug)]
pub struct Responder(oneshot::Sender<ApprovalDecision>);

impl Responder {
    /// Sends the answer. If the gate stopped waiting (timeout), the answer is discarded: the
    /// call was already denied.
    pub fn respond(self, decision: ApprovalDecision) {
        // An Err means the gate gave up on this request; there is nobody left to tell.
        let _ = self.0.send(decision);
    }

    /// Whether the gate has stopped waiting for this answer (it timed out or was dropped).
    #[must_use]
    pub fn is_abandoned(&self) -> bool {
        self.0.is_closed()
    }
}
