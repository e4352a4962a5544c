//! Gate three's port: hooks around tool calls and turns.

use crate::{ApprovalPolicy, ClientSurface, SandboxMode, ThreadMode, ToolResult, ToolRole};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// When a hook runs. The host runs the two tool phases; the runtime's loop runs the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookPhase {
    /// Before a tool runs: may deny, pre-approve or rewrite arguments.
    PreToolUse,
    /// After a tool ran: may replace the output or flip `is_error`.
    PostToolUse,
    /// When the user submits a prompt: may deny the turn or add context.
    UserPromptSubmit,
    /// When a turn starts.
    TurnStart,
    /// When a turn ends.
    TurnEnd,
    /// Before the conversation is compacted.
    PreCompact,
}

impl HookPhase {
    /// Every phase.
    pub const ALL: [Self; 6] = [
        Self::PreToolUse,
        Self::PostToolUse,
        Self::UserPromptSubmit,
        Self::TurnStart,
        Self::TurnEnd,
        Self::PreCompact,
    ];

    /// The Claude Code event name (`PreToolUse`, …).
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::TurnStart => "TurnStart",
            Self::TurnEnd => "TurnEnd",
            Self::PreCompact => "PreCompact",
        }
    }
}

/// The turn facts every hook sees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookTurn {
    /// The thread (Claude Code's `session_id`).
    pub thread_id: String,
    /// The turn.
    pub turn_id: String,
    /// The primary workspace root (`cwd`).
    pub cwd: PathBuf,
    /// The sandbox mode.
    pub sandbox: SandboxMode,
    /// The approval policy.
    pub approval: ApprovalPolicy,
    /// Agent or plan.
    pub thread_mode: ThreadMode,
    /// The client surface.
    pub client_surface: ClientSurface,
}

/// A tool call as a hook sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookToolCall {
    /// The turn.
    pub turn: HookTurn,
    /// The call id (`tool_use_id`).
    pub call_id: String,
    /// The tool name.
    pub tool_name: String,
    /// The tool's declared role (from its spec), for built-in hooks that treat some tools
    /// specially; never sent to command hooks.
    #[serde(skip)]
    pub role: ToolRole,
    /// The arguments (`tool_input`).
    pub arguments: Value,
}

/// A PreToolUse verdict.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum PreToolDecision {
    /// No opinion.
    #[default]
    Continue,
    /// Pre-approved: skips the matrix prompt (never a forced one).
    Allow,
    /// Refused, with the reason the model sees.
    Deny {
        /// Why.
        reason: String,
    },
}

/// What the PreToolUse chain decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PreToolOutcome {
    /// The verdict.
    pub decision: PreToolDecision,
    /// New arguments, when a hook rewrote them.
    pub arguments: Option<Value>,
    /// Non-blocking problems (a hook printed garbage, exited oddly, a workflow endpoint failed).
    pub warnings: Vec<String>,
    /// Extra context for the model.
    pub additional_context: Vec<String>,
}

/// What the PostToolUse chain produced.
#[derive(Debug, Clone, PartialEq)]
pub struct PostToolOutcome {
    /// The result, possibly replaced or with `is_error` flipped.
    pub result: ToolResult,
    /// Non-blocking problems.
    pub warnings: Vec<String>,
    /// Extra context for the model.
    pub additional_context: Vec<String>,
}

/// A loop-phase event (UserPromptSubmit, TurnStart, TurnEnd, PreCompact).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookTurnEvent {
    /// The phase.
    pub phase: HookPhase,
    /// The turn.
    pub turn: HookTurn,
    /// The user's prompt, for UserPromptSubmit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// What a loop phase produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HookTurnOutcome {
    /// Set when UserPromptSubmit denied the turn.
    pub denied: Option<String>,
    /// Extra context for the model.
    pub additional_context: Vec<String>,
    /// Non-blocking problems (loop phases fail open).
    pub warnings: Vec<String>,
}

/// A hook crashed or timed out: the call fails with `hook_failed`, the turn goes on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HookFailure {
    /// What happened.
    pub message: String,
}

/// Runs configured hooks.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait HookRunner: Send + Sync {
    /// Whether no hook is configured for the tool phases (lets the host skip the work).
    fn is_empty(&self) -> bool;

    /// Runs the PreToolUse chain: each hook sees the call as rewritten by earlier ones; a deny
    /// stops the chain.
    ///
    /// # Errors
    /// When a hook crashes or times out.
    async fn pre_tool_use(&self, call: &HookToolCall) -> Result<PreToolOutcome, HookFailure>;

    /// Runs the PostToolUse chain over a result.
    ///
    /// # Errors
    /// When a hook crashes or times out.
    async fn post_tool_use(
        &self,
        call: &HookToolCall,
        result: ToolResult,
    ) -> Result<PostToolOutcome, HookFailure>;

    /// Runs a loop phase. Fails open: problems become warnings.
    async fn turn_event(&self, event: &HookTurnEvent) -> HookTurnOutcome;
}
