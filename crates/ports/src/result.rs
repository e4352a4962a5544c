//! Calls, results and the two kinds of failure.
//!
//! A failure the model can act on is an error **result** ([`ToolResult`] with `is_error`), whose
//! output carries a typed [`ErrorCode`]. Only three things are faults for the caller and come back
//! as `Err(`[`HostError`]`)`: an abort, an unknown or unadvertised tool, and a tool whose policy
//! is `never`.

use crate::ContentBlock;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The error codes of host-level failures (SPEC §2). They are a contract: clients match on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A file change under the read-only sandbox.
    SandboxReadOnly,
    /// A write outside the allowed roots, or a file change the sandbox mode refuses.
    SandboxWriteBlocked,
    /// A command the sandbox mode refuses.
    SandboxCommandBlocked,
    /// A hook crashed or timed out.
    HookFailed,
    /// A PreToolUse hook denied the call.
    HookDenied,
    /// A file mutation in plan mode.
    PlanModeWriteBlocked,
    /// An edit of a file not read (or read stale) in this thread.
    ReadBeforeEditRequired,
    /// The runtime approval policy `never` forbids a call that would need approval.
    ApprovalPolicyBlocked,
    /// A tool's explicit-approval predicate failed.
    ApprovalClassificationFailed,
    /// The approver said no (or could not be asked).
    ApprovalDenied,
    /// An earlier run of the same operation may have had effects; it is not re-run.
    ToolOutcomeUnknown,
    /// The same operation is running now.
    ToolInvocationInProgress,
    /// The tool failed or panicked.
    ToolExecutionFailed,
    /// A network-backed tool was rate limited.
    RateLimited,
    /// The tool ran out of time.
    ToolTimeout,
    /// The arguments do not fit the tool.
    InvalidArguments,
    /// A read outside the workspace roots.
    SandboxReadBlocked,
    /// A write to the agent's own guards (`.kun/`, `.mcp.json`, `.git/`, `.claude/`, `.agents/`).
    SandboxProtectedPath,
    /// An edit's `oldText` is not in the file.
    EditNotFound,
    /// An edit's `oldText` matches more than one place.
    EditAmbiguous,
    /// No language server for the file can be started.
    LspUnavailable,
    /// No project checks were found to run.
    NoChecksFound,
    /// A web address the guard refuses (loopback, private, link-local, metadata, …).
    WebAddressBlocked,
    /// A URL scheme other than http(s).
    WebSchemeBlocked,
    /// Too many redirects.
    WebTooManyRedirects,
    /// A delegated child agent used up its turns.
    DelegationMaxTurns,
    /// The person cannot be asked in this client context (no terminal, no elicitation).
    UserInputUnavailable,
    /// A per-turn action budget (`computer_use`) is used up.
    ActionBudgetExhausted,
}

impl ErrorCode {
    /// Every code.
    pub const ALL: [Self; 28] = [
        Self::SandboxReadOnly,
        Self::SandboxWriteBlocked,
        Self::SandboxCommandBlocked,
        Self::HookFailed,
        Self::HookDenied,
        Self::PlanModeWriteBlocked,
        Self::ReadBeforeEditRequired,
        Self::ApprovalPolicyBlocked,
        Self::ApprovalClassificationFailed,
        Self::ApprovalDenied,
        Self::ToolOutcomeUnknown,
        Self::ToolInvocationInProgress,
        Self::ToolExecutionFailed,
        Self::RateLimited,
        Self::ToolTimeout,
        Self::InvalidArguments,
        Self::SandboxReadBlocked,
        Self::SandboxProtectedPath,
        Self::EditNotFound,
        Self::EditAmbiguous,
        Self::LspUnavailable,
        Self::NoChecksFound,
        Self::WebAddressBlocked,
        Self::WebSchemeBlocked,
        Self::WebTooManyRedirects,
        Self::DelegationMaxTurns,
        Self::UserInputUnavailable,
        Self::ActionBudgetExhausted,
    ];

    /// The snake_case wire name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::SandboxReadOnly => "sandbox_read_only",
            Self::SandboxWriteBlocked => "sandbox_write_blocked",
            Self::SandboxCommandBlocked => "sandbox_command_blocked",
            Self::HookFailed => "hook_failed",
            Self::HookDenied => "hook_denied",
            Self::PlanModeWriteBlocked => "plan_mode_write_blocked",
            Self::ReadBeforeEditRequired => "read_before_edit_required",
            Self::ApprovalPolicyBlocked => "approval_policy_blocked",
            Self::ApprovalClassificationFailed => "approval_classification_failed",
            Self::ApprovalDenied => "approval_denied",
            Self::ToolOutcomeUnknown => "tool_outcome_unknown",
            Self::ToolInvocationInProgress => "tool_invocation_in_progress",
            Self::ToolExecutionFailed => "tool_execution_failed",
            Self::RateLimited => "rate_limited",
            Self::ToolTimeout => "tool_timeout",
            Self::InvalidArguments => "invalid_arguments",
            Self::SandboxReadBlocked => "sandbox_read_blocked",
            Self::SandboxProtectedPath => "sandbox_protected_path",
            Self::EditNotFound => "edit_not_found",
            Self::EditAmbiguous => "edit_ambiguous",
            Self::LspUnavailable => "lsp_unavailable",
            Self::NoChecksFound => "no_checks_found",
            Self::WebAddressBlocked => "web_address_blocked",
            Self::WebSchemeBlocked => "web_scheme_blocked",
            Self::WebTooManyRedirects => "web_too_many_redirects",
            Self::DelegationMaxTurns => "delegation_max_turns",
            Self::UserInputUnavailable => "user_input_unavailable",
            Self::ActionBudgetExhausted => "action_budget_exhausted",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One tool call as the model (or a hook) phrased it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id for this call; with thread, turn, tool and arguments it keys the ledger.
    pub call_id: String,
    /// The tool's catalog name.
    pub tool_name: String,
    /// The provider the caller believes serves the tool; checked when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    /// A tool kind the caller claims; the sandbox checks it as well as the declared kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_kind: Option<crate::ToolKind>,
    /// The arguments, normally a JSON object.
    #[serde(default)]
    pub arguments: Value,
}

impl ToolCall {
    /// A call with no provider or kind claims.
    ///
    /// ```
    /// let call = kun_ports::ToolCall::new("call_1", "read", serde_json::json!({"path": "a.txt"}));
    /// assert_eq!(call.tool_name, "read");
    /// ```
    #[must_use]
    pub fn new(call_id: impl Into<String>, tool_name: impl Into<String>, arguments: Value) -> Self {
        Self {
            call_id: call_id.into(),
            tool_name: tool_name.into(),
            provider_id: None,
            tool_kind: None,
            arguments,
        }
    }

    /// The same call, claiming a tool kind.
    #[must_use]
    pub fn with_claimed_kind(mut self, kind: crate::ToolKind) -> Self {
        self.tool_kind = Some(kind);
        self
    }
}

/// What a call produced: a JSON output for programs, whether it is an error, and the
/// content blocks the model reads (see [`ContentBlock`]; empty means "render the output
/// generically", [`ToolResult::model_text`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The output: any JSON. Host-level failures are `{code, error, ...details}`.
    pub output: Value,
    /// Whether the call failed.
    pub is_error: bool,
    /// What the model reads, when the tool rendered it; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ContentBlock>,
}

impl ToolResult {
    /// A successful result.
    #[must_use]
    pub const fn ok(output: Value) -> Self {
        Self {
            output,
            is_error: false,
            content: Vec::new(),
        }
    }

    /// The same result with these content blocks for the model.
    ///
    /// ```
    /// use kun_ports::{ContentBlock, ToolResult};
    /// let r = ToolResult::ok(serde_json::json!({"lines": 1}))
    ///     .with_content(vec![ContentBlock::text("1│hello")]);
    /// assert_eq!(r.model_text(), "1│hello");
    /// ```
    #[must_use]
    pub fn with_content(mut self, content: Vec<ContentBlock>) -> Self {
        self.content = content;
        self
    }

    /// The same result with one text block for the model.
    #[must_use]
    pub fn with_text(self, text: impl Into<String>) -> Self {
        self.with_content(vec![ContentBlock::text(text)])
    }

    /// The blocks the model reads: the tool's own rendering, or one text block of
    /// [`ToolResult::model_text`] when it has none.
    #[must_use]
    pub fn model_content(&self) -> Vec<ContentBlock> {
        if self.content.is_empty() {
            vec![ContentBlock::text(self.model_text())]
        } else {
            self.content.clone()
        }
    }

    /// The text the model reads: the text blocks of the tool's rendering joined by newlines;
    /// without a rendering, an error's message (then its details, one `key: value` per line),
    /// a string output as it is, or any other output as compact JSON.
    ///
    /// ```
    /// use kun_ports::{ErrorCode, ToolResult};
    /// let r = ToolResult::failure(ErrorCode::ApprovalDenied, "the user said no");
    /// assert_eq!(r.model_text(), "the user said no");
    /// assert_eq!(ToolResult::ok(serde_json::json!("plain")).model_text(), "plain");
    /// ```
    #[must_use]
    pub fn model_text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .collect();
        if !texts.is_empty() {
            return texts.join("\n");
        }
        match &self.output {
            Value::String(text) => text.clone(),
            Value::Object(map) if self.is_error => render_failure(map),
            other => other.to_string(),
        }
    }

    /// A tool-level error: `{"error": message}`.
    #[must_use]
    pub fn tool_error(message: impl Into<String>) -> Self {
        let mut map = Map::new();
        map.insert("error".to_owned(), Value::String(message.into()));
        Self {
            output: Value::Object(map),
            is_error: true,
            content: Vec::new(),
        }
    }

    /// A host-level failure: `{"code": code, "error": message}`.
    ///
    /// ```
    /// use kun_ports::{ErrorCode, ToolResult};
    /// let r = ToolResult::failure(ErrorCode::ApprovalDenied, "the user said no");
    /// assert!(r.is_error);
    /// assert_eq!(r.error_code(), Some("approval_denied"));
    /// ```
    #[must_use]
    pub fn failure(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::failure_with(code, message, Map::new())
    }

    /// A host-level failure with extra detail fields (`code` and `error` win over details).
    #[must_use]
    pub fn failure_with(
        code: ErrorCode,
        message: impl Into<String>,
        details: Map<String, Value>,
    ) -> Self {
        let mut map = details;
        map.insert("code".to_owned(), Value::String(code.as_str().to_owned()));
        map.insert("error".to_owned(), Value::String(message.into()));
        Self {
            output: Value::Object(map),
            is_error: true,
            content: Vec::new(),
        }
    }

    /// The `code` field of an error output, if any.
    #[must_use]
    pub fn error_code(&self) -> Option<&str> {
        if !self.is_error {
            return None;
        }
        self.output.get("code").and_then(Value::as_str)
    }

    /// The `error` message of an error output, if any.
    #[must_use]
    pub fn error_message(&self) -> Option<&str> {
        self.output.get("error").and_then(Value::as_str)
    }
}

/// An error output as plain words: the message, then each detail as `key: value` (strings as
/// they are, other values as compact JSON). The `code` stays in the structured output only,
/// and a detail the message already says in full is not repeated.
fn render_failure(map: &Map<String, Value>) -> String {
    let message = map
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("the call failed");
    let mut text = message.to_owned();
    for (key, value) in map {
        if key == "code" || key == "error" || value.is_null() {
            continue;
        }
        if value
            .as_str()
            .is_some_and(|detail| message.contains(detail))
        {
            continue;
        }
        text.push('\n');
        text.push_str(key);
        text.push_str(": ");
        match value {
            Value::String(s) => text.push_str(s),
            other => text.push_str(&other.to_string()),
        }
    }
    text
}

/// Where an abort was noticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbortStage {
    /// Before any gate ran.
    BeforeStart,
    /// While waiting for, or right after, an approval.
    AwaitingApproval,
    /// While the tool ran.
    DuringExecution,
}

/// Why a known tool cannot be called in this context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAdvertisedReason {
    /// The caller named another provider than the one serving the tool.
    WrongProvider,
    /// The provider is off, unavailable, not allowed, blocked, or GUI-only.
    Provider,
    /// The allow/deny lists or plan mode exclude the tool.
    ToolPolicy,
    /// The tool itself declines this context (`should_advertise`).
    Context,
    /// The sandbox mode blocks the tool's kind (asked only by [`CatalogView`](crate::CatalogView)).
    Sandbox,
}

/// A fault for the caller, not feedback for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// The turn was aborted.
    #[error("tool call aborted ({stage:?})")]
    Aborted {
        /// Where the abort was noticed.
        stage: AbortStage,
    },
    /// No tool of that name is registered.
    #[error("unknown tool `{name}`")]
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// The tool exists but is not callable in this context.
    #[error("tool `{name}` is not available in this context ({reason:?})")]
    NotAdvertised {
        /// The tool.
        name: String,
        /// Which check refused it.
        reason: NotAdvertisedReason,
    },
    /// The tool's own policy is `never`.
    #[error("tool `{name}` is disabled by its policy")]
    DisabledByPolicy {
        /// The tool.
        name: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_failure_reads_as_its_message_and_the_details_it_does_not_already_say() {
        let mut details = Map::new();
        details.insert("reason".to_owned(), json!("nobody can be asked"));
        details.insert("approval_id".to_owned(), json!("appr_1"));
        details.insert("attempts".to_owned(), json!(3));
        let result = ToolResult::failure_with(
            ErrorCode::ApprovalDenied,
            "`bash` was not approved: nobody can be asked",
            details,
        );
        assert_eq!(
            result.model_text(),
            "`bash` was not approved: nobody can be asked\napproval_id: appr_1\nattempts: 3"
        );
    }

    #[test]
    fn codes_serialise_snake_case() {
        assert_eq!(
            serde_json::to_value(ErrorCode::ToolOutcomeUnknown).unwrap(),
            json!("tool_outcome_unknown")
        );
        assert_eq!(ErrorCode::HookDenied.to_string(), "hook_denied");
    }

    #[test]
    fn failure_keeps_details_but_code_and_error_win() {
        let mut details = Map::new();
        details.insert("code".into(), json!("spoofed"));
        details.insert("next_action".into(), json!({"tool": "read"}));
        let r = ToolResult::failure_with(ErrorCode::ReadBeforeEditRequired, "read first", details);
        assert_eq!(r.error_code(), Some("read_before_edit_required"));
        assert_eq!(r.output["next_action"]["tool"], "read");
        assert_eq!(r.error_message(), Some("read first"));
    }

    #[test]
    fn failures_render_as_plain_words() {
        let mut details = Map::new();
        details.insert("closest".into(), json!("line 3: fn main()"));
        details.insert("matches".into(), json!(2));
        let r = ToolResult::failure_with(ErrorCode::EditAmbiguous, "found twice", details);
        assert_eq!(
            r.model_text(),
            "found twice\nclosest: line 3: fn main()\nmatches: 2"
        );
        assert_eq!(r.model_content(), vec![ContentBlock::text(r.model_text())]);
    }

    #[test]
    fn rendering_wins_over_the_output() {
        let r = ToolResult::ok(json!({"a": 1}));
        assert_eq!(r.model_text(), r#"{"a":1}"#);
        let r = r.with_content(vec![
            ContentBlock::text("one"),
            ContentBlock::image("AAAA", "image/png"),
            ContentBlock::text("two"),
        ]);
        assert_eq!(r.model_text(), "one\ntwo");
        assert_eq!(r.model_content().len(), 3);
        let json = serde_json::to_value(ToolResult::ok(json!(1))).unwrap();
        assert_eq!(json, json!({"output": 1, "is_error": false}));
    }

    #[test]
    fn every_code_has_its_wire_name() {
        for code in ErrorCode::ALL {
            assert_eq!(serde_json::to_value(code).unwrap(), json!(code.as_str()));
        }
    }

    #[test]
    fn success_has_no_code() {
        let r = ToolResult::ok(json!({"code": "x"}));
        assert_eq!(r.error_code(), None);
    }
}
