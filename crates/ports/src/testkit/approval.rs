//! Contract suite for [`ApprovalGate`]: fail closed, keep reasons, remember session grants.
//!
//! The suite drives a gate through an [`ApproverScript`]: the factory builds a fresh gate (one
//! session) whose approver side follows the script. Because a scripted approver answers at
//! most once, a gate that asks twice gets a denial the second time; that is how the suite sees
//! whether a session grant answered without asking.

use crate::{ApprovalDecision, ApprovalGate, ApprovalReason, ApprovalRequest, GrantKey};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// How the approver behind a gate under test behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApproverScript {
    /// Answers the first question with this decision, then behaves as [`ApproverScript::Drop`].
    AnswerOnce(ApprovalDecision),
    /// The approver side is gone before the first question (dropped receiver, closed input).
    Drop,
    /// Takes every question and never answers. The factory must configure a short timeout
    /// (about 300 ms); the suite allows [`APPROVAL_HANG_BOUND`] for the gate to give up.
    Hang,
}

/// How long a gate may take to deny when its approver hangs. Generous: the factory's timeout
/// should be far shorter, and a loaded machine must not fail the suite.
pub const APPROVAL_HANG_BOUND: Duration = Duration::from_secs(30);

/// A request for `tool_name` whose session grant would cover `scope`. The call and approval
/// ids come from `n`, so two requests with the same key still look like different calls.
#[must_use]
pub fn approval_request(n: u32, tool_name: &str, scope: Option<&str>) -> ApprovalRequest {
    ApprovalRequest {
        approval_id: format!("appr_contract_{n}"),
        thread_id: "thread-contract".to_owned(),
        turn_id: "turn-contract".to_owned(),
        call_id: format!("call-{n}"),
        tool_name: tool_name.to_owned(),
        arguments: json!({ "command": scope.map(|s| format!("{s} --flag-{n}")) }),
        reason: ApprovalReason::RuntimePolicy,
        grant_key: match scope {
            Some(scope) => GrantKey::scoped(tool_name, scope),
            None => GrantKey::tool(tool_name),
        },
        delegated_agent: None,
    }
}

/// Runs every rule of the approval-gate contract. `make` builds a new gate (a new session)
/// whose approver follows the script.
///
/// Rules:
/// 1. an approver's `Allow` comes back as `Allow`, and covers that one call only;
/// 2. a denial keeps the approver's reason;
/// 3. after `AllowForSession`, a request with an equal [`GrantKey`] is `Allow` without asking;
///    a different scope or a different tool asks again;
/// 4. grants belong to one gate: a new gate does not inherit them;
/// 5. a gone approver is a `Deny` with a reason, for every request, including concurrent ones;
/// 6. a hanging approver is a `Deny` with a reason within [`APPROVAL_HANG_BOUND`].
pub async fn approval_gate_contract<F>(make: F)
where
    F: Fn(ApproverScript) -> Arc<dyn ApprovalGate>,
{
    allow_is_allow_for_one_call(&make).await;
    deny_keeps_its_reason(&make).await;
    session_grant_answers_equal_keys_only(&make).await;
    grants_belong_to_one_gate(&make).await;
    gone_approver_denies_with_a_reason(&make).await;
    hanging_approver_denies_in_bounded_time(&make).await;
}

async fn ask(gate: &Arc<dyn ApprovalGate>, request: &ApprovalRequest) -> ApprovalDecision {
    match tokio::time::timeout(APPROVAL_HANG_BOUND, gate.request_approval(request)).await {
        Ok(decision) => decision,
        Err(_) => panic!(
            "approval contract: the gate did not answer {:?} within {APPROVAL_HANG_BOUND:?}; a gate must \
             never hang (fail closed with a timeout)",
            request.approval_id
        ),
    }
}

fn assert_denied_with_reason(decision: &ApprovalDecision, rule: &str) {
    match decision {
        ApprovalDecision::Deny {
            reason: Some(reason),
        } if !reason.trim().is_empty() => {}
        other => panic!("approval contract: {rule}: expected a Deny with a reason, got {other:?}"),
    }
}

async fn allow_is_allow_for_one_call<F>(make: &F)
where
    F: Fn(ApproverScript) -> Arc<dyn ApprovalGate>,
{
    let gate = make(ApproverScript::AnswerOnce(ApprovalDecision::Allow));
    let first = approval_request(1, "bash", Some("cargo test"));
    assert_eq!(
        ask(&gate, &first).await,
        ApprovalDecision::Allow,
        "approval contract: an approver's Allow must come back as Allow"
    );
    let again = approval_request(2, "bash", Some("cargo test"));
    assert_denied_with_reason(
        &ask(&gate, &again).await,
        "Allow covers one call only: the same key must ask again (and the scripted approver is \
         gone by then)",
    );
}

async fn deny_keeps_its_reason<F>(make: &F)
where
    F: Fn(ApproverScript) -> Arc<dyn ApprovalGate>,
{
    let gate = make(ApproverScript::AnswerOnce(ApprovalDecision::deny(
        "touches production",
    )));
    let decision = ask(&gate, &approval_request(1, "deploy", None)).await;
    assert_eq!(
        decision,
        ApprovalDecision::deny("touches production"),
        "approval contract: a denial must keep the approver's reason"
    );
}

async fn session_grant_answers_equal_keys_only<F>(make: &F)
where
    F: Fn(ApproverScript) -> Arc<dyn ApprovalGate>,
{
    let gate = make(ApproverScript::AnswerOnce(
        ApprovalDecision::AllowForSession,
    ));
    let first = ask(&gate, &approval_request(1, "bash", Some("cargo test"))).await;
    assert!(
        first.is_allowed(),
        "approval contract: AllowForSession must allow the call that earned it, got {first:?}"
    );
    for n in 2..4 {
        assert_eq!(
            ask(&gate, &approval_request(n, "bash", Some("cargo test"))).await,
            ApprovalDecision::Allow,
            "approval contract: a request with the granted key must be allowed without asking \
             (request {n})"
        );
    }
    assert_denied_with_reason(
        &ask(&gate, &approval_request(4, "bash", Some("rm -rf"))).await,
        "a grant for `bash cargo test` must not cover another scope; the gate must ask again",
    );
    assert_denied_with_reason(
        &ask(&gate, &approval_request(5, "bash", None)).await,
        "a grant with a scope must not cover the same tool without one",
    );
    assert_denied_with_reason(
        &ask(
            &gate,
            &approval_request(6, "background_shell", Some("cargo test")),
        )
        .await,
        "a grant for one tool must not cover another tool with the same scope",
    );
    assert_eq!(
        ask(&gate, &approval_request(7, "bash", Some("cargo test"))).await,
        ApprovalDecision::Allow,
        "approval contract: denials for other keys must not revoke the session grant"
    );
}

async fn grants_belong_to_one_gate<F>(make: &F)
where
    F: Fn(ApproverScript) -> Arc<dyn ApprovalGate>,
{
    let granted = make(ApproverScript::AnswerOnce(
        ApprovalDecision::AllowForSession,
    ));
    let request = approval_request(1, "bash", Some("make"));
    assert!(ask(&granted, &request).await.is_allowed());
    let other_session = make(ApproverScript::Drop);
    assert_denied_with_reason(
        &ask(&other_session, &approval_request(2, "bash", Some("make"))).await,
        "a new gate (a new session) must not inherit another gate's grants",
    );
}

async fn gone_approver_denies_with_a_reason<F>(make: &F)
where
    F: Fn(ApproverScript) -> Arc<dyn ApprovalGate>,
{
    let gate = make(ApproverScript::Drop);
    assert_denied_with_reason(
        &ask(&gate, &approval_request(1, "write", None)).await,
        "an approver that is gone must be a denial (fail closed)",
    );
    let concurrent = (10..14).map(|n| {
        let gate = Arc::clone(&gate);
        tokio::spawn(async move { ask(&gate, &approval_request(n, "edit", None)).await })
    });
    for handle in concurrent.collect::<Vec<_>>() {
        let decision = handle
            .await
            .expect("approval contract: a concurrent request panicked");
        assert_denied_with_reason(
            &decision,
            "concurrent requests to a gone approver must each be denied",
        );
    }
}

async fn hanging_approver_denies_in_bounded_time<F>(make: &F)
where
    F: Fn(ApproverScript) -> Arc<dyn ApprovalGate>,
{
    let gate = make(ApproverScript::Hang);
    assert_denied_with_reason(
        &ask(&gate, &approval_request(1, "bash", Some("sleep"))).await,
        "an approver that never answers must be a denial after the gate's timeout",
    );
}
