//! A key that no session grant may cover: `allow_for_session` allows that call only.

use kun_approval::{Gate, channel_gate};
use kun_ports::{ApprovalDecision, ApprovalGate, ApprovalReason, ApprovalRequest, GrantKey};

fn request(n: u32, key: GrantKey) -> ApprovalRequest {
    ApprovalRequest {
        approval_id: format!("appr_{n}"),
        thread_id: "t".into(),
        turn_id: "u".into(),
        call_id: format!("c{n}"),
        tool_name: "bash".into(),
        arguments: serde_json::json!({"command": "rm -rf build; make"}),
        reason: ApprovalReason::UnconfinedCommand,
        grant_key: key,
        delegated_agent: None,
    }
}

#[tokio::test]
async fn compound_commands_are_approved_one_call_at_a_time() {
    let (gate, mut inbox): (Gate<_>, _) = channel_gate();
    let answers = tokio::spawn(async move {
        let mut asked = 0;
        while let Some(pending) = inbox.recv().await {
            asked += 1;
            pending.respond(if asked == 1 {
                ApprovalDecision::AllowForSession
            } else {
                ApprovalDecision::deny("second ask")
            });
        }
        asked
    });
    let first = gate
        .request_approval(&request(1, GrantKey::one_call_only("bash")))
        .await;
    assert_eq!(first, ApprovalDecision::AllowForSession);
    assert!(
        gate.grants().is_empty(),
        "no grant may be recorded for an unscoped command"
    );
    let second = gate
        .request_approval(&request(2, GrantKey::one_call_only("bash")))
        .await;
    assert_eq!(
        second,
        ApprovalDecision::deny("second ask"),
        "the second compound command must be asked again"
    );
    drop(gate);
    assert_eq!(answers.await.unwrap(), 2);
}
