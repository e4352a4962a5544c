//! Gate two's port: asking someone whether a call may run.

use crate::{ApprovalPolicy, ToolPolicy};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the approval matrix says about a call (SPEC §6), before forced approvals.
///
/// | runtime \ tool | auto | on-request / suggest | untrusted | never |
/// |---|---|---|---|---|
/// | always | prompt | prompt | prompt | refused |
/// | on-request, suggest | — | prompt | prompt | refused |
/// | untrusted | prompt unless allow-listed | prompt | prompt | refused |
/// | auto | — | — | — | refused |
/// | never | blocked | blocked | blocked | refused |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRule {
    /// Runs without asking.
    NoPrompt,
    /// Asks.
    Prompt,
    /// Asks unless the host allow-lists the tool for `untrusted`.
    PromptUnlessAllowListed,
    /// Cannot run under this runtime policy (`approval_policy_blocked`).
    Blocked,
    /// The tool's policy is `never`: a caller fault (`Err`).
    Refused,
}

/// Looks up the approval matrix.
///
/// ```
/// use kun_ports::{prompt_rule, ApprovalPolicy, PromptRule, ToolPolicy};
/// assert_eq!(prompt_rule(ApprovalPolicy::OnRequest, ToolPolicy::Auto), PromptRule::NoPrompt);
/// assert_eq!(prompt_rule(ApprovalPolicy::OnRequest, ToolPolicy::OnRequest), PromptRule::Prompt);
/// ```
#[must_use]
pub const fn prompt_rule(runtime: ApprovalPolicy, tool: ToolPolicy) -> PromptRule {
    match (runtime, tool) {
        (_, ToolPolicy::Never) => PromptRule::Refused,
        (ApprovalPolicy::Never, _) => PromptRule::Blocked,
        (ApprovalPolicy::Always, _) => PromptRule::Prompt,
        (ApprovalPolicy::Auto, _)
        | (ApprovalPolicy::OnRequest | ApprovalPolicy::Suggest, ToolPolicy::Auto) => {
            PromptRule::NoPrompt
        }
        (ApprovalPolicy::Untrusted, ToolPolicy::Auto) => PromptRule::PromptUnlessAllowListed,
        (
            ApprovalPolicy::OnRequest | ApprovalPolicy::Suggest | ApprovalPolicy::Untrusted,
            ToolPolicy::OnRequest | ToolPolicy::Suggest | ToolPolicy::Untrusted,
        ) => PromptRule::Prompt,
    }
}

/// Why a call needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalReason {
    /// The approval matrix (runtime policy × tool policy) asks for it.
    RuntimePolicy,
    /// A command under workspace-write that cannot run confined.
    UnconfinedCommand,
    /// The tool requires explicit approval for this call.
    ExplicitTool,
}

impl ApprovalReason {
    /// A sentence for the person asked.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            Self::RuntimePolicy => "the approval policy asks before this tool runs",
            Self::UnconfinedCommand => {
                "commands cannot be confined on this machine, so each one under workspace-write needs approval"
            }
            Self::ExplicitTool => "this tool acts outside the workspace and always asks first",
        }
    }
}

/// What an `allow_for_session` grant covers: a tool, and for shell tools a command prefix.
///
/// A command that has no safe prefix (pipes, `;`, redirections, subshells) is not
/// `session_grantable`: an `allow_for_session` answer then allows this one call only, so one
/// grant can never cover every later compound command.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GrantKey {
    /// The tool.
    pub tool_name: String,
    /// For shell tools, the parsed command prefix (e.g. `cargo test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Whether a session grant may be recorded for this key.
    #[serde(default = "grantable_by_default")]
    pub session_grantable: bool,
}

const fn grantable_by_default() -> bool {
    true
}

impl GrantKey {
    /// A grant of the whole tool.
    #[must_use]
    pub fn tool(tool_name: impl Into<String>) -> Self {
        Self {
            tool_name: tool_name.into(),
            scope: None,
            session_grantable: true,
        }
    }

    /// A grant of one command prefix of a tool.
    #[must_use]
    pub fn scoped(tool_name: impl Into<String>, scope: impl Into<String>) -> Self {
        Self {
            tool_name: tool_name.into(),
            scope: Some(scope.into()),
            session_grantable: true,
        }
    }

    /// A key no session grant may cover (approvals allow one call at a time).
    #[must_use]
    pub fn one_call_only(tool_name: impl Into<String>) -> Self {
        Self {
            tool_name: tool_name.into(),
            scope: None,
            session_grantable: false,
        }
    }
}

/// One question to an approver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// Unique per prompt.
    pub approval_id: String,
    /// The thread.
    pub thread_id: String,
    /// The turn.
    pub turn_id: String,
    /// The call.
    pub call_id: String,
    /// The tool.
    pub tool_name: String,
    /// The arguments the tool would run with (after hooks).
    pub arguments: Value,
    /// Why approval is needed.
    pub reason: ApprovalReason,
    /// What a session grant for this call would cover.
    pub grant_key: GrantKey,
    /// The delegated child agent that asks, by profile name (`delegate_task`); `None` when
    /// the agent itself asks. Prompts name it, so the person knows who wants to act.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegated_agent: Option<String>,
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call.
    Allow,
    /// Run this call and later ones with the same grant key in this session without asking.
    AllowForSession,
    /// Do not run it.
    Deny {
        /// Why, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl ApprovalDecision {
    /// A denial with a reason.
    #[must_use]
    pub fn deny(reason: impl Into<String>) -> Self {
        Self::Deny {
            reason: Some(reason.into()),
        }
    }

    /// Whether the call may run.
    #[must_use]
    pub const fn is_allowed(&self) -> bool {
        matches!(self, Self::Allow | Self::AllowForSession)
    }
}

/// Asks whether a call may run. Implementations **fail closed**: no approver, a dropped
/// channel or a timeout is a `Deny` with a reason, never an error or a hang. A gate remembers
/// `AllowForSession` grants and answers `Allow` for a request with the same [`GrantKey`]
/// without asking again.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait ApprovalGate: Send + Sync {
    /// Decides one request.
    async fn request_approval(&self, request: &ApprovalRequest) -> ApprovalDecision;
}

#[cfg(test)]
mod tests {
    use super::*;
    use ApprovalPolicy as R;
    use PromptRule::{Blocked, NoPrompt, Prompt, PromptUnlessAllowListed as Unless, Refused};
    use ToolPolicy as T;

    /// Every cell of SPEC §6's matrix.
    #[test]
    fn approval_matrix_every_cell() {
        let tools = [T::Auto, T::OnRequest, T::Suggest, T::Untrusted, T::Never];
        let table: [(R, [PromptRule; 5]); 6] = [
            (R::Always, [Prompt, Prompt, Prompt, Prompt, Refused]),
            (R::OnRequest, [NoPrompt, Prompt, Prompt, Prompt, Refused]),
            (R::Suggest, [NoPrompt, Prompt, Prompt, Prompt, Refused]),
            (R::Untrusted, [Unless, Prompt, Prompt, Prompt, Refused]),
            (R::Auto, [NoPrompt, NoPrompt, NoPrompt, NoPrompt, Refused]),
            (R::Never, [Blocked, Blocked, Blocked, Blocked, Refused]),
        ];
        assert_eq!(table.len(), R::ALL.len());
        for (runtime, row) in table {
            for (tool, expected) in tools.iter().zip(row) {
                assert_eq!(prompt_rule(runtime, *tool), expected, "{runtime} x {tool}");
            }
        }
    }

    #[test]
    fn decisions_serialise_with_a_tag() {
        let deny = serde_json::to_value(ApprovalDecision::deny("no")).unwrap();
        assert_eq!(
            deny,
            serde_json::json!({"decision": "deny", "reason": "no"})
        );
        let allow: ApprovalDecision =
            serde_json::from_str(r#"{"decision":"allow_for_session"}"#).unwrap();
        assert_eq!(allow, ApprovalDecision::AllowForSession);
    }
}
