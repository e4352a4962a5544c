//! # kun-approval
//!
//! Gate two of kun-rs: asking whether a tool call may run (SPEC §6).
//!
//! Whether a call needs asking at all is the approval matrix, [`kun_ports::prompt_rule`].
//! This crate is what happens once it does: one [`Gate`] wraps a small [`Approver`] (who
//! answers) and adds what every approver needs, written once:
//!
//! * **session grants**: an `allow_for_session` answer covers later requests with an equal
//!   [`GrantKey`](kun_ports::GrantKey) (tool, and for shell tools the command prefix), which
//!   are allowed without asking;
//! * **an event log**: `approval_requested` / `approval_resolved` [`ApprovalEvent`]s, which a
//!   late subscriber replays from the start ([`EventLog::subscribe`]);
//! * **failing closed**: no approver, a dropped request, closed input, a panic or the timeout
//!   ([`DEFAULT_TIMEOUT`], five minutes) is a `Deny` whose reason says which. A gate never
//!   hangs and never errors.
//!
//! Approvers:
//!
//! | approver | for | build with |
//! |---|---|---|
//! | [`ChannelApprover`] | a program answering in memory (a UI, MCP elicitation, tests) | [`channel_gate`] |
//! | [`FixedAnswer`] | `--yes` / `--no` | [`Gate::allow_all`], [`Gate::deny_all`] |
//! | [`TerminalApprover`] | a person at the CLI | [`TerminalApprover::stdio_if_terminal`] |
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use kun_approval::{channel_gate, ApprovalEvent, DecisionSource};
//! use kun_ports::{ApprovalDecision, ApprovalGate, ApprovalReason, ApprovalRequest, GrantKey};
//!
//! let (gate, mut inbox) = channel_gate();
//! // The approver side: a person, a UI, an MCP client. Here: allow `cargo test` for the session.
//! tokio::spawn(async move {
//!     while let Some(pending) = inbox.recv().await {
//!         pending.respond(ApprovalDecision::AllowForSession);
//!     }
//! });
//!
//! let request = |n: u32| ApprovalRequest {
//!     approval_id: format!("appr_{n}"),
//!     thread_id: "thread".into(),
//!     turn_id: "turn".into(),
//!     call_id: format!("call-{n}"),
//!     tool_name: "bash".into(),
//!     arguments: serde_json::json!({"command": "cargo test -p kun-approval"}),
//!     reason: ApprovalReason::RuntimePolicy,
//!     grant_key: GrantKey::scoped("bash", "cargo test"),
//!     delegated_agent: None,
//! };
//! assert_eq!(gate.request_approval(&request(1)).await, ApprovalDecision::AllowForSession);
//! // Same grant key: allowed from the session grant, nobody is asked.
//! assert_eq!(gate.request_approval(&request(2)).await, ApprovalDecision::Allow);
//!
//! // A late subscriber still sees everything, in order.
//! let mut events = gate.subscribe();
//! let mut sources = Vec::new();
//! while let Some(event) = events.try_next() {
//!     if let ApprovalEvent::ApprovalResolved { source, .. } = event {
//!         sources.push(source);
//!     }
//! }
//! assert_eq!(sources, [DecisionSource::Approver, DecisionSource::SessionGrant]);
//! # }
//! ```

// The README is compiled as doctests, so its examples cannot rot.
#![cfg_attr(doctest, doc = include_str!("../README.md"))]

mod approver;
mod channel;
mod events;
mod fixed;
mod gate;
mod grants;
mod terminal;

pub use approver::{Approver, NoAnswer};
pub use channel::{
    ApprovalInbox, ChannelApprover, DEFAULT_QUEUE, PendingApproval, Responder, channel_gate,
};
pub use events::{ApprovalEvent, DecisionSource, EventLog, EventSubscription};
pub use fixed::FixedAnswer;
pub use gate::{DEFAULT_TIMEOUT, Gate};
pub use terminal::TerminalApprover;
