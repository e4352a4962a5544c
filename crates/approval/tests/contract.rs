//! The approval-gate contract from kun-ports' testkit, run against every gate here that can
//! follow an approver script.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use kun_approval::{ApprovalInbox, Gate, TerminalApprover, channel_gate};
use kun_ports::testkit::{ApproverScript, approval_gate_contract};
use kun_ports::{ApprovalDecision, ApprovalGate};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, BufReader, ReadBuf};

const SHORT_TIMEOUT: Duration = Duration::from_millis(300);

/// Serves the approver side of a channel gate as the script says.
async fn follow_script(mut inbox: ApprovalInbox, script: ApproverScript) {
    match script {
        ApproverScript::AnswerOnce(decision) => {
            if let Some(pending) = inbox.recv().await {
                pending.respond(decision);
            }
            // `inbox` drops here: the approver is gone.
        }
        ApproverScript::Drop => drop(inbox),
        ApproverScript::Hang => {
            let mut held = Vec::new();
            while let Some(pending) = inbox.recv().await {
                held.push(pending);
            }
        }
    }
}

#[tokio::test]
async fn channel_gate_honours_the_contract() {
    approval_gate_contract(|script| {
        let (gate, inbox) = channel_gate();
        if script == ApproverScript::Drop {
            drop(inbox);
        } else {
            tokio::spawn(follow_script(inbox, script));
        }
        Arc::new(gate.with_timeout(SHORT_TIMEOUT)) as Arc<dyn ApprovalGate>
    })
    .await;
}

/// A terminal that never sends a byte (a person who walked away).
struct SilentTerminal;

impl AsyncRead for SilentTerminal {
    fn poll_read(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        _buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Poll::Pending
    }
}

/// What a person would type for a decision.
fn typed(decision: &ApprovalDecision) -> String {
    match decision {
        ApprovalDecision::Allow => "once\n".to_owned(),
        ApprovalDecision::AllowForSession => "session\n".to_owned(),
        ApprovalDecision::Deny { reason: None } => "deny\n".to_owned(),
        ApprovalDecision::Deny {
            reason: Some(reason),
        } => format!("deny {reason}\n"),
    }
}

#[tokio::test]
async fn terminal_gate_honours_the_contract() {
    approval_gate_contract(|script| {
        let gate: Arc<dyn ApprovalGate> = match script {
            // One typed line, then end of input: answers once, then the terminal is gone.
            ApproverScript::AnswerOnce(decision) => Arc::new(Gate::new(TerminalApprover::new(
                io::Cursor::new(typed(&decision).into_bytes()),
                tokio::io::sink(),
            ))),
            ApproverScript::Drop => Arc::new(Gate::new(TerminalApprover::new(
                io::Cursor::new(Vec::new()),
                tokio::io::sink(),
            ))),
            ApproverScript::Hang => Arc::new(
                Gate::new(TerminalApprover::new(
                    BufReader::new(SilentTerminal),
                    tokio::io::sink(),
                ))
                .with_timeout(SHORT_TIMEOUT),
            ),
        };
        gate
    })
    .await;
}

/// A gate that asks every time: it forgets `allow_for_session`. The suite must reject it.
struct ForgetfulGate(kun_approval::ChannelApprover);

#[async_trait::async_trait]
impl ApprovalGate for ForgetfulGate {
    async fn request_approval(&self, request: &kun_ports::ApprovalRequest) -> ApprovalDecision {
        use kun_approval::Approver as _;
        self.0
            .ask(request)
            .await
            .unwrap_or_else(|no_answer| ApprovalDecision::deny(no_answer.denial_reason()))
    }
}

#[tokio::test]
#[should_panic(expected = "without asking")]
async fn the_contract_rejects_a_gate_without_session_grants() {
    approval_gate_contract(|script| {
        let (approver, inbox) = kun_approval::ChannelApprover::new(4);
        tokio::spawn(follow_script(inbox, script));
        Arc::new(ForgetfulGate(approver)) as Arc<dyn ApprovalGate>
    })
    .await;
}

/// A gate that fails closed but says nothing about why. The suite must reject it.
struct SilentDenialGate(Gate<kun_approval::ChannelApprover>);

#[async_trait::async_trait]
impl ApprovalGate for SilentDenialGate {
    async fn request_approval(&self, request: &kun_ports::ApprovalRequest) -> ApprovalDecision {
        match self.0.request_approval(request).await {
            ApprovalDecision::Deny { .. } => ApprovalDecision::Deny { reason: None },
            allowed => allowed,
        }
    }
}

#[tokio::test]
#[should_panic(expected = "expected a Deny with a reason")]
async fn the_contract_rejects_a_denial_without_a_reason() {
    approval_gate_contract(|script| {
        let (gate, inbox) = channel_gate();
        tokio::spawn(follow_script(inbox, script));
        Arc::new(SilentDenialGate(gate.with_timeout(SHORT_TIMEOUT))) as Arc<dyn ApprovalGate>
    })
    .await;
}
