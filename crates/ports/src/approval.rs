//! Gate two's port: whether a call prompts (the approval matrix), and asking someone.

use crate::{ApprovalPolicy, GrantKey, ToolPolicy, Unconfined};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a call runs, as the sandbox verdict said: the approval matrix's third dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandboxing {
    /// The sandbox lets the call run as it is (tool calls, file changes, every kind under
    /// danger-full-access): the tool's policy alone decides.
    Allowed,
    /// A command confined by the operating system: approval follows the sandbox.
    Confined,
    /// A command that would run unconfined under workspace-write: it always asks.
    Unconfined(Unconfined),
}

/// What the approval matrix says about a call (SPEC §6), before a tool's explicit approval.
///
/// Not confined ([`Sandboxing::Allowed`]: tool calls, file changes, danger-full-access):
///
/// | runtime \ tool | auto | on-request / suggest | untrusted | never |
/// |---|---|---|---|---|
/// | always | prompt | prompt | prompt | refused |
/// | on-request, suggest | — | prompt | prompt | refused |
/// | untrusted | prompt unless allow-listed | prompt | prompt | refused |
/// | auto | — | — | — | refused |
/// | never | blocked | blocked | blocked | refused |
///
/// A confined command ([`Sandboxing::Confined`]): approval follows the sandbox, so the
/// `on-request`/`suggest` columns behave as `auto`, and a known-safe command counts as
/// allow-listed:
///
/// | runtime \ tool | auto | on-request / suggest | untrusted | never |
/// |---|---|---|---|---|
/// | always | prompt | prompt | prompt | refused |
/// | on-request, suggest | — | — | prompt | refused |
/// | untrusted | prompt unless allow-listed | prompt unless allow-listed | prompt | refused |
/// | auto | — | — | — | refused |
/// | never | blocked | blocked | blocked | refused |
///
/// A command that would run unconfined ([`Sandboxing::Unconfined`]: no confining tier, run by
/// its provider, or escalated by the call):
///
/// | runtime \ tool | auto | on-request / suggest | untrusted | never |
/// |---|---|---|---|---|
/// | always, on-request, suggest, untrusted, auto | forced | forced | forced | refused |
/// | never | blocked | blocked | blocked | refused |
///
/// "Allow-listed": the host's `untrusted` allow-list names the tool, or the call is a command
/// known to be safe ([`CommandSafety::KnownSafe`](crate::CommandSafety)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRule {
    /// Runs without asking.
    NoPrompt,
    /// Asks; a PreToolUse hook's `allow` skips it.
    Prompt,
    /// Asks unless allow-listed (see the type's docs); a hook's `allow` skips it.
    PromptUnlessAllowListed,
    /// Asks, whatever a hook said: the command would run outside the confinement.
    Forced,
    /// Cannot run under this runtime policy (`approval_policy_blocked`).
    Blocked,
    /// The tool's policy is `never`: a caller fault (`Err`).
    Refused,
}

/// Looks up the approval matrix (see [`PromptRule`] for the three tables).
///
/// ```
/// use kun_ports::{prompt_rule, ApprovalPolicy, PromptRule, Sandboxing, ToolPolicy, Unconfined};
/// let on_request = ApprovalPolicy::OnRequest;
/// assert_eq!(prompt_rule(on_request, ToolPolicy::Auto, Sandboxing::Allowed), PromptRule::NoPrompt);
/// assert_eq!(prompt_rule(on_request, ToolPolicy::OnRequest, Sandboxing::Allowed), PromptRule::Prompt);
/// // Approval follows the sandbox: a confined command runs without asking…
/// assert_eq!(prompt_rule(on_request, ToolPolicy::OnRequest, Sandboxing::Confined), PromptRule::NoPrompt);
/// // …and one that asks to leave it always asks.
/// let escalated = Sandboxing::Unconfined(Unconfined::Escalated);
/// assert_eq!(prompt_rule(on_request, ToolPolicy::OnRequest, escalated), PromptRule::Forced);
/// ```
#[must_use]
pub const fn prompt_rule(
    runtime: ApprovalPolicy,
    tool: ToolPolicy,
    sandboxing: Sandboxing,
) -> PromptRule {
    use ApprovalPolicy as R;
    use ToolPolicy as T;
    match (runtime, tool, sandboxing) {
        (_, T::Never, _) => PromptRule::Refused,
        (R::Never, _, _) => PromptRule::Blocked,
        (_, _, Sandboxing::Unconfined(_)) => PromptRule::Forced,
        (R::Always, _, _) => PromptRule::Prompt,
        (R::Auto, _, _)
        | (R::OnRequest | R::Suggest, T::Auto, _)
        | (R::OnRequest | R::Suggest, T::OnRequest | T::Suggest, Sandboxing::Confined) => {
            PromptRule::NoPrompt
        }
        (R::Untrusted, T::Auto, _)
        | (R::Untrusted, T::OnRequest | T::Suggest, Sandboxing::Confined) => {
            PromptRule::PromptUnlessAllowListed
        }
        (
            R::OnRequest | R::Suggest | R::Untrusted,
            T::OnRequest | T::Suggest,
            Sandboxing::Allowed,
        )
        | (R::OnRequest | R::Suggest | R::Untrusted, T::Untrusted, _) => PromptRule::Prompt,
    }
}

/// Why a call needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalReason {
    /// The approval matrix (runtime policy × tool policy) asks for it.
    RuntimePolicy,
    /// A command under workspace-write on a machine with no confining tier.
    UnconfinedCommand,
    /// A command its provider runs outside our confinement (an MCP server), under
    /// workspace-write.
    ProviderCommand,
    /// A command that asks to run outside the sandbox (`"sandbox": "escalated"`).
    EscalatedCommand,
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
            Self::ProviderCommand => {
                "this tool's provider runs the command outside kun's confinement, so under workspace-write it always asks"
            }
            Self::EscalatedCommand => {
                "the command asks to run outside the sandbox, with full access to this machine"
            }
            Self::ExplicitTool => "this tool acts outside the workspace and always asks first",
        }
    }
}

impl From<Unconfined> for ApprovalReason {
    fn from(why: Unconfined) -> Self {
        match why {
            Unconfined::NoTier => Self::UnconfinedCommand,
            Unconfined::Provider => Self::ProviderCommand,
            Unconfined::Escalated => Self::EscalatedCommand,
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
    /// For a command that asks to run outside the sandbox: the call's own words on why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
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
    use PromptRule::{
        Blocked, Forced, NoPrompt, Prompt, PromptUnlessAllowListed as Unless, Refused,
    };
    use Sandboxing as S;
    use ToolPolicy as T;

    const TOOLS: [T; 5] = [T::Auto, T::OnRequest, T::Suggest, T::Untrusted, T::Never];

    /// The three tables of SPEC §6, every cell: 6 runtime policies × 5 tool policies × how
    /// the call runs (not confined, confined, and unconfined for each of its three reasons).
    #[rustfmt::skip]
    const MATRIX: [(R, S, [PromptRule; 5]); 30] = [
        //             runtime      sandboxing   auto      on-request suggest  untrusted never
        (R::Always,    S::Allowed,  [Prompt,   Prompt,   Prompt,   Prompt,   Refused]),
        (R::OnRequest, S::Allowed,  [NoPrompt, Prompt,   Prompt,   Prompt,   Refused]),
        (R::Suggest,   S::Allowed,  [NoPrompt, Prompt,   Prompt,   Prompt,   Refused]),
        (R::Untrusted, S::Allowed,  [Unless,   Prompt,   Prompt,   Prompt,   Refused]),
        (R::Auto,      S::Allowed,  [NoPrompt, NoPrompt, NoPrompt, NoPrompt, Refused]),
        (R::Never,     S::Allowed,  [Blocked,  Blocked,  Blocked,  Blocked,  Refused]),
        (R::Always,    S::Confined, [Prompt,   Prompt,   Prompt,   Prompt,   Refused]),
        (R::OnRequest, S::Confined, [NoPrompt, NoPrompt, NoPrompt, Prompt,   Refused]),
        (R::Suggest,   S::Confined, [NoPrompt, NoPrompt, NoPrompt, Prompt,   Refused]),
        (R::Untrusted, S::Confined, [Unless,   Unless,   Unless,   Prompt,   Refused]),
        (R::Auto,      S::Confined, [NoPrompt, NoPrompt, NoPrompt, NoPrompt, Refused]),
        (R::Never,     S::Confined, [Blocked,  Blocked,  Blocked,  Blocked,  Refused]),
        (R::Always,    NO_TIER,     [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::OnRequest, NO_TIER,     [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Suggest,   NO_TIER,     [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Untrusted, NO_TIER,     [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Auto,      NO_TIER,     [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Never,     NO_TIER,     [Blocked,  Blocked,  Blocked,  Blocked,  Refused]),
        (R::Always,    PROVIDER,    [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::OnRequest, PROVIDER,    [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Suggest,   PROVIDER,    [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Untrusted, PROVIDER,    [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Auto,      PROVIDER,    [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Never,     PROVIDER,    [Blocked,  Blocked,  Blocked,  Blocked,  Refused]),
        (R::Always,    ESCALATED,   [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::OnRequest, ESCALATED,   [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Suggest,   ESCALATED,   [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Untrusted, ESCALATED,   [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Auto,      ESCALATED,   [Forced,   Forced,   Forced,   Forced,   Refused]),
        (R::Never,     ESCALATED,   [Blocked,  Blocked,  Blocked,  Blocked,  Refused]),
    ];

    const NO_TIER: S = S::Unconfined(Unconfined::NoTier);
    const PROVIDER: S = S::Unconfined(Unconfined::Provider);
    const ESCALATED: S = S::Unconfined(Unconfined::Escalated);

    #[test]
    fn approval_matrix_every_cell() {
        for (runtime, sandboxing, row) in MATRIX {
            for (tool, expected) in TOOLS.iter().zip(row) {
                assert_eq!(
                    prompt_rule(runtime, *tool, sandboxing),
                    expected,
                    "{runtime} x {tool} x {sandboxing:?}"
                );
            }
        }
    }

    #[test]
    fn the_table_covers_every_runtime_and_sandboxing_once() {
        let sandboxings = [S::Allowed, S::Confined, NO_TIER, PROVIDER, ESCALATED];
        for runtime in R::ALL {
            for sandboxing in sandboxings {
                let rows = MATRIX
                    .iter()
                    .filter(|(r, s, _)| r == runtime && *s == sandboxing)
                    .count();
                assert_eq!(rows, 1, "{runtime} x {sandboxing:?}");
            }
        }
        assert_eq!(MATRIX.len(), R::ALL.len() * sandboxings.len());
    }

    /// Approval follows the sandbox and never asks less for an unconfined command: for every
    /// runtime and tool policy, confining a command asks at most as often as not confining
    /// it, and an unconfined command asks at least as often.
    #[test]
    fn confinement_only_ever_removes_prompts() {
        const fn weight(rule: PromptRule) -> u8 {
            match rule {
                NoPrompt => 0,
                Unless => 1,
                Prompt => 2,
                Forced => 3,
                Blocked => 4,
                Refused => 5,
            }
        }
        for runtime in R::ALL {
            for tool in TOOLS {
                let plain = weight(prompt_rule(*runtime, tool, S::Allowed));
                assert!(weight(prompt_rule(*runtime, tool, S::Confined)) <= plain);
                assert!(weight(prompt_rule(*runtime, tool, ESCALATED)) >= plain);
            }
        }
    }

    #[test]
    fn every_unconfined_reason_has_its_own_approval_reason() {
        assert_eq!(
            ApprovalReason::from(Unconfined::NoTier),
            ApprovalReason::UnconfinedCommand
        );
        assert_eq!(
            ApprovalReason::from(Unconfined::Provider),
            ApprovalReason::ProviderCommand
        );
        assert_eq!(
            ApprovalReason::from(Unconfined::Escalated),
            ApprovalReason::EscalatedCommand
        );
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
