//! Gate behaviours around any approver: grants, failing closed, the event log.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use kun_approval::{
    ApprovalEvent, Approver, DEFAULT_TIMEOUT, DecisionSource, Gate, NoAnswer, channel_gate,
};
use kun_ports::testkit::approval_request;
use kun_ports::{ApprovalDecision, ApprovalGate, ApprovalRequest, GrantKey};
use std::sync::Arc;
use std::time::Duration;

/// Answers every request with the decision for its tool: `deny` → Deny, `session` →
/// AllowForSession, else Allow.
fn answer_by_tool(request: &ApprovalRequest) -> ApprovalDecision {
    match request.tool_name.as_str() {
        "deny" => ApprovalDecision::deny("not this one"),
        "session" => ApprovalDecision::AllowForSession,
        _ => ApprovalDecision::Allow,
    }
}

/// A channel gate whose approver answers by tool name and counts the questions it saw.
fn answering_gate() -> (
    Arc<Gate<kun_approval::ChannelApprover>>,
    tokio::task::JoinHandle<usize>,
) {
    let (gate, mut inbox) = channel_gate();
    let approver = tokio::spawn(async move {
        let mut asked = 0;
        while let Some(pending) = inbox.recv().await {
            asked += 1;
            let decision = answer_by_tool(&pending.request);
            pending.respond(decision);
        }
        asked
    });
    (Arc::new(gate), approver)
}

fn resolutions(events: &[ApprovalEvent]) -> Vec<(String, DecisionSource, ApprovalDecision)> {
    events
        .iter()
        .filter_map(|event| match event {
            ApprovalEvent::ApprovalResolved {
                approval_id,
                source,
                decision,
                ..
            } => Some((approval_id.clone(), *source, decision.clone())),
            ApprovalEvent::ApprovalRequested { .. } => None,
        })
        .collect()
}

#[test]
fn the_default_timeout_is_five_minutes() {
    assert_eq!(DEFAULT_TIMEOUT, Duration::from_secs(300));
    assert_eq!(Gate::allow_all().timeout(), DEFAULT_TIMEOUT);
}

#[tokio::test]
async fn a_session_grant_is_recorded_and_answers_without_asking() {
    let (gate, approver) = answering_gate();
    let first = approval_request(1, "session", Some("cargo test"));
    assert_eq!(
        gate.request_approval(&first).await,
        ApprovalDecision::AllowForSession
    );
    assert_eq!(
        gate.grants(),
        vec![GrantKey::command("session", "cargo test")]
    );
    for n in 2..5 {
        let again = approval_request(n, "session", Some("cargo test"));
        assert_eq!(gate.request_approval(&again).await, ApprovalDecision::Allow);
    }
    let other_scope = approval_request(5, "session", Some("cargo build"));
    assert_eq!(
        gate.request_approval(&other_scope).await,
        ApprovalDecision::AllowForSession
    );
    assert_eq!(gate.grants().len(), 2);
    drop(gate);
    assert_eq!(
        approver.await.unwrap(),
        2,
        "only the two new keys were asked"
    );
}

#[tokio::test]
async fn allow_and_deny_make_no_grant() {
    let (gate, _approver) = answering_gate();
    assert_eq!(
        gate.request_approval(&approval_request(1, "allow", None))
            .await,
        ApprovalDecision::Allow
    );
    assert_eq!(
        gate.request_approval(&approval_request(2, "deny", None))
            .await,
        ApprovalDecision::deny("not this one")
    );
    assert!(gate.grants().is_empty());
}

#[tokio::test]
async fn no_approver_dropped_responder_and_timeout_each_say_why() {
    let (gate, inbox) = channel_gate();
    drop(inbox);
    let decision = gate
        .request_approval(&approval_request(1, "bash", None))
        .await;
    assert_reason_contains(&decision, "no approver is connected");

    let (gate, mut inbox) = channel_gate();
    tokio::spawn(async move {
        while let Some(pending) = inbox.recv().await {
            drop(pending);
        }
    });
    let decision = gate
        .request_approval(&approval_request(2, "bash", None))
        .await;
    assert_reason_contains(&decision, "closed the request without answering");

    let (gate, mut inbox) = channel_gate();
    let gate = gate.with_timeout(Duration::from_millis(200));
    let late = tokio::spawn(async move {
        let pending = inbox.recv().await.unwrap();
        while !pending.responder.is_abandoned() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Too late: the gate has already denied. The answer is discarded, not an error.
        pending.respond(ApprovalDecision::Allow);
    });
    let decision = gate
        .request_approval(&approval_request(3, "bash", None))
        .await;
    assert_reason_contains(&decision, "nobody answered within 200 ms");
    late.await.unwrap();
    assert!(gate.grants().is_empty());
}

fn assert_reason_contains(decision: &ApprovalDecision, needle: &str) {
    match decision {
        ApprovalDecision::Deny {
            reason: Some(reason),
        } => assert!(reason.contains(needle), "{reason:?} lacks {needle:?}"),
        other => panic!("expected a denial saying {needle:?}, got {other:?}"),
    }
}

/// An approver that panics while deciding.
struct PanickingApprover;

#[async_trait::async_trait]
impl Approver for PanickingApprover {
    async fn ask(&self, _request: &ApprovalRequest) -> Result<ApprovalDecision, NoAnswer> {
        panic!("approver bug")
    }
}

#[tokio::test]
async fn a_panicking_approver_is_a_denial() {
    let gate = Gate::new(PanickingApprover);
    let decision = gate
        .request_approval(&approval_request(1, "bash", None))
        .await;
    assert_reason_contains(&decision, "the approver failed (it panicked)");
    let resolved = resolutions(&gate.events().snapshot());
    assert_eq!(resolved.len(), 1);
    assert_eq!(resolved[0].1, DecisionSource::FailClosed);
}

#[tokio::test]
async fn fixed_gates_answer_without_asking_anyone() {
    let yes = Gate::allow_all();
    let no = Gate::deny_all("run with --yes to allow tool calls");
    for n in 0..3 {
        let request = approval_request(n, "bash", Some("make"));
        assert_eq!(
            yes.request_approval(&request).await,
            ApprovalDecision::Allow
        );
        assert_eq!(
            no.request_approval(&request).await,
            ApprovalDecision::deny("run with --yes to allow tool calls")
        );
    }
    assert!(yes.grants().is_empty());
    assert_eq!(yes.events().snapshot().len(), 6);
    assert!(
        resolutions(&no.events().snapshot())
            .iter()
            .all(|(_, source, _)| *source == DecisionSource::Approver)
    );
}

#[tokio::test]
async fn every_request_is_logged_with_where_its_decision_came_from() {
    let (gate, _approver) = answering_gate();
    let early = gate.subscribe();
    let script = [
        approval_request(1, "session", Some("make")),
        approval_request(2, "session", Some("make")),
        approval_request(3, "deny", None),
    ];
    for request in &script {
        gate.request_approval(request).await;
    }
    let log = gate.events().snapshot();
    assert_eq!(log.len(), 6);
    assert!(matches!(
        &log[0],
        ApprovalEvent::ApprovalRequested { approval_id, call_id, tool_name, grant_key, .. }
            if approval_id == "appr_contract_1" && call_id == "call-1" && tool_name == "session"
                && *grant_key == GrantKey::command("session", "make")
    ));
    assert_eq!(
        resolutions(&log),
        vec![
            (
                "appr_contract_1".to_owned(),
                DecisionSource::Approver,
                ApprovalDecision::AllowForSession
            ),
            (
                "appr_contract_2".to_owned(),
                DecisionSource::SessionGrant,
                ApprovalDecision::Allow
            ),
            (
                "appr_contract_3".to_owned(),
                DecisionSource::Approver,
                ApprovalDecision::deny("not this one")
            ),
        ]
    );
    // Requested, then resolved, for each request in turn.
    let kinds: Vec<&str> = log
        .iter()
        .map(|event| match event {
            ApprovalEvent::ApprovalRequested { .. } => "requested",
            ApprovalEvent::ApprovalResolved { .. } => "resolved",
        })
        .collect();
    assert_eq!(kinds, ["requested", "resolved"].repeat(3));
    drop(early);
}

#[tokio::test]
async fn a_late_subscriber_replays_the_past_then_follows_live() {
    let (gate, _approver) = answering_gate();
    let mut early = gate.subscribe();
    gate.request_approval(&approval_request(1, "allow", None))
        .await;
    gate.request_approval(&approval_request(2, "deny", None))
        .await;

    let mut late = gate.subscribe();
    let mut replayed = Vec::new();
    for _ in 0..4 {
        replayed.push(late.next().await.unwrap());
    }
    assert_eq!(replayed, gate.events().snapshot());
    assert_eq!(late.try_next(), None, "nothing beyond the past yet");

    let live_gate = Arc::clone(&gate);
    let live = tokio::spawn(async move {
        live_gate
            .request_approval(&approval_request(3, "session", Some("ls")))
            .await
    });
    let next = late.next().await.unwrap();
    assert!(
        matches!(&next, ApprovalEvent::ApprovalRequested { approval_id, .. } if approval_id == "appr_contract_3"),
        "{next:?}"
    );
    live.await.unwrap();
    assert!(matches!(
        late.next().await.unwrap(),
        ApprovalEvent::ApprovalResolved {
            source: DecisionSource::Approver,
            ..
        }
    ));

    let mut seen_early = Vec::new();
    while let Some(event) = early.try_next() {
        seen_early.push(event);
    }
    assert_eq!(seen_early, gate.events().snapshot(), "early and late agree");
}

#[tokio::test]
async fn a_subscriber_joining_mid_stream_sees_no_gap_and_no_duplicate() {
    let (gate, _approver) = answering_gate();
    let requests: Vec<_> = (0..40)
        .map(|n| {
            let gate = Arc::clone(&gate);
            tokio::spawn(async move {
                let tool = if n % 3 == 0 { "session" } else { "allow" };
                gate.request_approval(&approval_request(n, tool, Some("x")))
                    .await
            })
        })
        .collect();
    tokio::task::yield_now().await;
    let mut subscriber = gate.subscribe();
    let reader = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(event) = subscriber.next().await {
            seen.push(event);
        }
        seen
    });
    for request in requests {
        assert!(request.await.unwrap().is_allowed());
    }
    let expected = gate.events().snapshot();
    assert_eq!(expected.len(), 80);
    // Dropping the last handle to the gate ends the subscription once it has read everything.
    drop(gate);
    let seen = tokio::time::timeout(Duration::from_secs(30), reader)
        .await
        .expect("the subscription ends when the gate is gone")
        .unwrap();
    assert_eq!(seen, expected);
}
