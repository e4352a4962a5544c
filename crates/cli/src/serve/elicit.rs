//! Approvals through MCP elicitation: the client shows a form with one enum field,
//! `decision`, of `allow`, `allow_for_session` and `deny`.
//!
//! | client answer | decision |
//! |---|---|
//! | accept, `decision = allow` | `Allow` |
//! | accept, `decision = allow_for_session` | `AllowForSession` (the [`Gate`](kun_approval::Gate) records the grant) |
//! | accept, `decision = deny` | `Deny` |
//! | decline, cancel | `Deny` |
//! | accept with no or another value, a failed request | no answer: the gate denies (fail closed) |
//! | the client did not declare the elicitation capability | `approval_fallback`: `deny` (default) or `allow` |
//!
//! The approver only answers; grants, the event log and the timeout are the gate's.

use crate::serve::live::Live;
use async_trait::async_trait;
use kun_approval::{Approver, NoAnswer};
use kun_composition::config::ApprovalFallback;
use kun_ports::{ApprovalDecision, ApprovalRequest};
use rmcp::RoleServer;
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, EnumSchema,
};
use rmcp::service::{ElicitationMode, Peer};
use serde_json::Value;
use std::sync::{Arc, OnceLock};

/// The form field the client fills in.
pub const DECISION_FIELD: &str = "decision";

/// The values of [`DECISION_FIELD`], in the order the form offers them.
pub const DECISIONS: [&str; 3] = ["allow", "allow_for_session", "deny"];

/// How many characters of the arguments the prompt shows.
const ARGUMENTS_SHOWN: usize = 1_500;

/// Asks the MCP client of one session.
#[derive(Debug, Clone)]
pub struct ElicitationApprover {
    peer: Arc<OnceLock<Peer<RoleServer>>>,
    live: Arc<Live>,
}

impl ElicitationApprover {
    /// An approver for the session whose peer lands in `peer` once it is known.
    #[must_use]
    pub const fn new(peer: Arc<OnceLock<Peer<RoleServer>>>, live: Arc<Live>) -> Self {
        Self { peer, live }
    }

    fn fallback(&self) -> ApprovalDecision {
        match self.live.current().settings.approval_fallback {
            ApprovalFallback::Allow => ApprovalDecision::Allow,
            ApprovalFallback::Deny => ApprovalDecision::deny(
                "this MCP client cannot show approval prompts (it did not declare the \
                 elicitation capability) and approval_fallback is \"deny\"; allow the tool in \
                 the configuration, use a client that supports elicitation, or set \
                 approval_fallback = \"allow\"",
            ),
        }
    }
}

#[async_trait]
impl Approver for ElicitationApprover {
    async fn ask(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, NoAnswer> {
        let Some(peer) = self.peer.get() else {
            return Err(NoAnswer::NoApprover);
        };
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return Ok(self.fallback());
        }
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: prompt(request),
            requested_schema: form(),
        };
        match peer.create_elicitation(params).await {
            Ok(answer) => decision(&answer),
            Err(err) => Err(NoAnswer::Failed(format!(
                "the elicitation request failed: {err}"
            ))),
        }
    }
}

/// The form: one required enum field.
fn form() -> ElicitationSchema {
    let decision = EnumSchema::builder(DECISIONS.iter().map(|d| (*d).to_owned()).collect())
        .title("Decision")
        .description(
            "allow: run this call; allow_for_session: run it and later calls like it in this \
             session; deny: do not run it",
        )
        .build();
    ElicitationSchema::builder()
        .required_enum_schema(DECISION_FIELD, decision)
        .build_unchecked()
}

/// What the person is asked: the tool, why, what a session grant would cover, the arguments.
fn prompt(request: &ApprovalRequest) -> String {
    let grant = if request.grant_key.session_grantable {
        match &request.grant_key.scope {
            Some(scope) => format!(
                "allow_for_session also allows later `{}` calls starting with `{scope}`",
                request.tool_name
            ),
            None => format!(
                "allow_for_session also allows later `{}` calls",
                request.tool_name
            ),
        }
    } else {
        "allow_for_session allows only this call: the command has no safe prefix to remember"
            .to_owned()
    };
    let mut arguments = request.arguments.to_string();
    if arguments.chars().count() > ARGUMENTS_SHOWN {
        arguments = arguments.chars().take(ARGUMENTS_SHOWN).collect();
        arguments.push('…');
    }
    let asker = request
        .delegated_agent
        .as_ref()
        .map(|agent| format!(" (asked by the delegated sub-agent `{agent}`)"))
        .unwrap_or_default();
    format!(
        "Allow `{tool}`{asker} to run?\nWhy you are asked: {why}.\n{grant}.\nArguments: {arguments}",
        tool = request.tool_name,
        why = request.reason.describe(),
    )
}

/// The client's answer as a decision.
fn decision(answer: &ElicitResult) -> Result<ApprovalDecision, NoAnswer> {
    match answer.action {
        ElicitationAction::Accept => {
            let chosen = answer
                .content
                .as_ref()
                .and_then(|content| content.get(DECISION_FIELD))
                .and_then(Value::as_str);
            match chosen {
                Some("allow") => Ok(ApprovalDecision::Allow),
                Some("allow_for_session") => Ok(ApprovalDecision::AllowForSession),
                Some("deny") => Ok(ApprovalDecision::deny(
                    "the user denied this call; do not retry it, ask the user what to do instead",
                )),
                other => Err(NoAnswer::Failed(format!(
                    "the client accepted the approval form without a valid `decision` \
                     (got {other:?}; expected one of allow, allow_for_session, deny)"
                ))),
            }
        }
        ElicitationAction::Decline => Ok(ApprovalDecision::deny(
            "the user declined the approval prompt; do not retry the call, ask the user what \
             to do instead",
        )),
        _ => Ok(ApprovalDecision::deny(
            "the user dismissed the approval prompt without choosing; do not retry the call \
             until the user can approve it",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
        let mut result = ElicitResult::new(action);
        result.content = content;
        result
    }

    #[test]
    fn answers_map_to_decisions() {
        let accept = |value: &str| {
            decision(&answer(
                ElicitationAction::Accept,
                Some(json!({ "decision": value })),
            ))
        };
        assert_eq!(accept("allow"), Ok(ApprovalDecision::Allow));
        assert_eq!(
            accept("allow_for_session"),
            Ok(ApprovalDecision::AllowForSession)
        );
        assert!(matches!(accept("deny"), Ok(ApprovalDecision::Deny { .. })));
        assert!(accept("maybe").is_err());
        assert!(decision(&answer(ElicitationAction::Accept, None)).is_err());
        for action in [ElicitationAction::Decline, ElicitationAction::Cancel] {
            assert!(matches!(
                decision(&answer(action, None)),
                Ok(ApprovalDecision::Deny { .. })
            ));
        }
    }

    #[test]
    fn the_form_has_one_required_enum_field() {
        let schema = serde_json::to_value(form()).unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["decision"]));
        assert_eq!(
            schema["properties"]["decision"]["enum"],
            json!(["allow", "allow_for_session", "deny"])
        );
    }
}
