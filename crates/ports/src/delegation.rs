//! Running a child agent (`delegate_task`): the [`ChildAgentRunner`] port.
//!
//! The child's loop belongs to the runtime; `kun-delegation` decides **what** the child may
//! do and hands a runner a [`ChildRun`]:
//!
//! | field | what it is |
//! |---|---|
//! | `profile` | the profile's name, system prompt and model choice |
//! | `task`, `context` | what the parent asked, and what it chose to pass along |
//! | `host`, `ctx` | the child host (every gate) and the child's turn context: narrowed lists, the parent's sandbox mode, approval policy and approver, an abort signal that fires with the parent's |
//! | `limits` | at most `max_turns` model requests |
//!
//! A runner lists the child catalog with [`ChildRun::catalog`] (exactly what the child may
//! call), runs every tool call with [`ChildRun::call_tool`] (through the child host, so
//! through every gate; refusals come back as text for the model), and returns the final text
//! and the [`ChildUsage`], or a [`ChildFailure`] whose [`ErrorCode`] the parent sees.
//!
//! Every runner passes `kun_ports::testkit::child_agent_runner_contract`.

use crate::{
    AbortSignal, ErrorCode, HostError, ToolCall, ToolDescriptor, ToolHost, ToolHostContext,
    ToolResult,
};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// Which model a child runs on.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildModel {
    /// The runner's configured model.
    #[default]
    Inherit,
    /// This model name.
    Named(String),
}

impl ChildModel {
    /// A profile's `model` value: absent, empty or `inherit` inherit; anything else names one.
    #[must_use]
    pub fn from_setting(value: Option<&str>) -> Self {
        match value.map(str::trim) {
            None | Some("" | "inherit") => Self::Inherit,
            Some(name) => Self::Named(name.to_owned()),
        }
    }

    /// The model to use given the runner's configured one.
    #[must_use]
    pub fn resolve<'a>(&'a self, configured: &'a str) -> &'a str {
        match self {
            Self::Inherit => configured,
            Self::Named(name) => name,
        }
    }
}

/// What a runner needs of a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildProfile {
    /// The profile's name (`explore`, `design-reviewer`, …).
    pub name: String,
    /// The child's system prompt.
    pub system_prompt: String,
    /// The model.
    pub model: ChildModel,
}

/// Bounds of one child run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildLimits {
    /// Model requests the child may make; a child still calling tools on the last one fails
    /// with `delegation_max_turns`.
    pub max_turns: u32,
}

/// One child run: see the module docs.
#[derive(Clone, Copy)]
pub struct ChildRun<'a> {
    /// The profile.
    pub profile: &'a ChildProfile,
    /// What to do.
    pub task: &'a str,
    /// What the parent passed along, if anything.
    pub context: Option<&'a str>,
    /// The child host: every tool call goes through its gates.
    pub host: &'a dyn ToolHost,
    /// The child's turn context.
    pub ctx: &'a ToolHostContext,
    /// Bounds.
    pub limits: ChildLimits,
}

impl fmt::Debug for ChildRun<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildRun")
            .field("profile", &self.profile.name)
            .field("task", &self.task)
            .field("context", &self.context)
            .field("ctx", &self.ctx)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What a tool call gave the child.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildToolOutput {
    /// The text the child model reads (an error result starts with `error [code]:`).
    pub text: String,
    /// Whether the call failed or was refused.
    pub is_error: bool,
}

impl<'a> ChildRun<'a> {
    /// The child catalog: exactly the tools the child may call, sorted by name.
    #[must_use]
    pub fn catalog(&self) -> Vec<ToolDescriptor> {
        self.host.list_tools(self.ctx)
    }

    /// The child's abort signal (fires with the parent's).
    #[must_use]
    pub fn abort(&self) -> &'a AbortSignal {
        &self.ctx.abort
    }

    /// The first user message: the task, then the context when there is one.
    #[must_use]
    pub fn user_message(&self) -> String {
        match self.context.map(str::trim).filter(|c| !c.is_empty()) {
            Some(context) => format!(
                "{}\n\nContext from the delegating agent:\n{context}",
                self.task
            ),
            None => self.task.to_owned(),
        }
    }

    /// Runs one tool call through the child host. A refusal (unknown or unadvertised tool,
    /// a `never` tool) becomes text the model can act on; only an abort stops the run.
    ///
    /// # Errors
    /// [`ChildFailure`] of kind [`ChildFailureKind::Aborted`] when the turn was aborted.
    pub async fn call_tool(
        &self,
        call: ToolCall,
        usage: &ChildUsage,
    ) -> Result<ChildToolOutput, ChildFailure> {
        if self.abort().is_aborted() {
            return Err(ChildFailure::aborted(*usage));
        }
        let name = call.tool_name.clone();
        match self.host.execute(call, self.ctx).await {
            Ok(result) => Ok(ChildToolOutput {
                text: child_text(&result),
                is_error: result.is_error,
            }),
            Err(HostError::Aborted { .. }) => Err(ChildFailure::aborted(*usage)),
            Err(refused) => Ok(ChildToolOutput {
                text: format!(
                    "error [refused]: {refused}; `{name}` cannot be called here, use one of the \
                     tools you were given"
                ),
                is_error: true,
            }),
        }
    }
}

/// A result as the child model reads it: the rendering, and for errors the code first.
fn child_text(result: &ToolResult) -> String {
    let text = result.model_text();
    if !result.is_error {
        return text;
    }
    match result.output.get("code").and_then(Value::as_str) {
        Some(code) => format!("error [{code}]: {text}"),
        None => format!("error: {text}"),
    }
}

/// What a child used, returned to the parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ChildUsage {
    /// Model requests made.
    pub turns: u32,
    /// Tool calls run (refused ones included).
    pub tool_calls: u32,
    /// Prompt tokens the endpoint reported.
    pub prompt_tokens: u64,
    /// Completion tokens the endpoint reported.
    pub completion_tokens: u64,
}

impl ChildUsage {
    /// The usage as a JSON object (for error details).
    #[must_use]
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// A child that finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildOutcome {
    /// The child's final answer.
    pub text: String,
    /// What it used.
    pub usage: ChildUsage,
}

/// Why a child did not finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildFailureKind {
    /// It used `max_turns` model requests without a final answer (`delegation_max_turns`).
    MaxTurns,
    /// The model endpoint said 429 (`rate_limited`).
    RateLimited,
    /// A model request ran out of time (`tool_timeout`).
    Timeout,
    /// The endpoint could not be reached, failed (5xx), refused the request (4xx) or
    /// answered something that is not a chat completion (`tool_execution_failed`).
    Endpoint,
    /// The parent turn was aborted (`tool_execution_failed`; the host reports the abort).
    Aborted,
}

impl ChildFailureKind {
    /// The code of the error result the parent sees.
    #[must_use]
    pub const fn code(self) -> ErrorCode {
        match self {
            Self::MaxTurns => ErrorCode::DelegationMaxTurns,
            Self::RateLimited => ErrorCode::RateLimited,
            Self::Timeout => ErrorCode::ToolTimeout,
            Self::Endpoint | Self::Aborted => ErrorCode::ToolExecutionFailed,
        }
    }
}

/// A child that did not finish: why, in words, and what it used until then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ChildFailure {
    /// Why.
    pub kind: ChildFailureKind,
    /// What happened and what to do next.
    pub message: String,
    /// What the child used until it stopped.
    pub usage: ChildUsage,
}

impl ChildFailure {
    /// A failure of `kind`.
    #[must_use]
    pub fn new(kind: ChildFailureKind, message: impl Into<String>, usage: ChildUsage) -> Self {
        Self {
            kind,
            message: message.into(),
            usage,
        }
    }

    /// The child used up its turns.
    #[must_use]
    pub fn max_turns(limits: ChildLimits, usage: ChildUsage) -> Self {
        Self::new(
            ChildFailureKind::MaxTurns,
            format!(
                "the child agent made {} model requests (max_turns) without a final answer; \
                 give it a smaller task, or raise [delegation] max_turns",
                limits.max_turns
            ),
            usage,
        )
    }

    /// The parent turn was aborted.
    #[must_use]
    pub fn aborted(usage: ChildUsage) -> Self {
        Self::new(
            ChildFailureKind::Aborted,
            "the child agent was stopped: the delegating turn was aborted",
            usage,
        )
    }

    /// The error result the parent sees: `{code, error, usage}`.
    #[must_use]
    pub fn into_result(self) -> ToolResult {
        let mut details = Map::new();
        details.insert("usage".to_owned(), self.usage.to_json());
        ToolResult::failure_with(self.kind.code(), self.message, details)
    }
}

/// Runs a child agent's loop: model requests, tool calls through [`ChildRun::call_tool`],
/// until a final answer or `max_turns` requests.
#[async_trait]
pub trait ChildAgentRunner: Send + Sync {
    /// A short description for diagnostics (`openai http://127.0.0.1:11434/v1 qwen2.5-coder`).
    fn describe(&self) -> String;

    /// Runs the child.
    ///
    /// # Errors
    /// A [`ChildFailure`] when the child did not produce a final answer.
    async fn run<'a>(&self, run: ChildRun<'a>) -> Result<ChildOutcome, ChildFailure>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_settings() {
        assert_eq!(ChildModel::from_setting(None), ChildModel::Inherit);
        assert_eq!(
            ChildModel::from_setting(Some(" inherit ")),
            ChildModel::Inherit
        );
        let named = ChildModel::from_setting(Some("qwen2.5-coder:7b"));
        assert_eq!(named.resolve("base"), "qwen2.5-coder:7b");
        assert_eq!(ChildModel::Inherit.resolve("base"), "base");
    }

    #[test]
    fn failures_carry_their_code_and_usage() {
        let usage = ChildUsage {
            turns: 3,
            tool_calls: 2,
            prompt_tokens: 30,
            completion_tokens: 6,
        };
        let result = ChildFailure::max_turns(ChildLimits { max_turns: 3 }, usage).into_result();
        assert!(result.is_error);
        assert_eq!(result.output["code"], "delegation_max_turns");
        assert_eq!(result.output["usage"]["turns"], 3);
        assert_eq!(ChildFailureKind::RateLimited.code(), ErrorCode::RateLimited);
    }
}
