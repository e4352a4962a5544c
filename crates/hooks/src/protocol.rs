//! The Claude Code hook protocol: what a hook is told, and how its answer is read.
//!
//! **Input** (stdin of a command hook): `session_id` (the thread), `transcript_path` (always
//! `null`: we keep no transcript file), `cwd` (the workspace root), `hook_event_name`,
//! `permission_mode`, for tool phases `tool_name`, `tool_input`, `tool_use_id`, for PostToolUse
//! `tool_response` (the tool's output) and `is_error`, for UserPromptSubmit `prompt`; plus ours:
//! `turn_id`, `sandbox_mode`, `approval_policy`. Tool names and arguments are ours (`write`
//! with `path`), not Claude Code's.
//!
//! `permission_mode` maps our settings onto Claude Code's words: plan threads → `plan`,
//! approval `never` → `dontAsk`, approval `auto` → `bypassPermissions`, otherwise `default`.
//!
//! **Exit** of a command hook:
//!
//! | exit | meaning |
//! |---|---|
//! | 0, empty stdout | no opinion |
//! | 0, JSON object on stdout | the answer (below) |
//! | 0, other stdout | UserPromptSubmit and TurnStart: context for the model; otherwise a warning |
//! | 2 | a block; the reason is stderr (trimmed); stdout is ignored |
//! | any other code below 128 | a warning carrying stderr; the call goes on |
//! | 128 or above (a shell reporting a command killed by signal `code - 128`, e.g. 139), killed by a signal, could not start, timed out | a crash: `HookFailure` (`hook_failed`) in tool phases, a warning in loop phases |
//!
//! **Answer** (a JSON object on stdout; every key optional):
//!
//! | key | effect |
//! |---|---|
//! | `hookSpecificOutput.permissionDecision` or `permissionDecision` | `allow` pre-approves, `deny` blocks, `ask`/`defer` withdraw an earlier pre-approval (the approval gate decides) |
//! | `decision` (legacy) | `approve` = allow, `block` = deny |
//! | `continue: false` | blocks, with `stopReason` as the reason |
//! | `permissionDecisionReason`, `reason`, `stopReason` | the reason of a block (first present wins) |
//! | `updatedInput` (either level) | new tool arguments (an object) |
//! | `additionalContext` (either level) | context for the model |
//! | `output`, `hookSpecificOutput.updatedMCPToolOutput` | PostToolUse: the new output |
//! | `is_error` / `isError` | PostToolUse: the new error flag |
//! | `systemMessage` | a warning |
//!
//! `permissionDecision` wins over the legacy `decision`; `continue: false` wins over both.

use kun_ports::{ApprovalPolicy, HookPhase, HookTurn, ThreadMode, ToolResult};
use serde_json::{Map, Value, json};

/// What one hook run is about.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HookRequest<'a> {
    pub(crate) phase: HookPhase,
    pub(crate) turn: &'a HookTurn,
    pub(crate) tool: Option<ToolFacts<'a>>,
    pub(crate) prompt: Option<&'a str>,
}

/// The tool call a tool-phase hook sees.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolFacts<'a> {
    pub(crate) name: &'a str,
    pub(crate) call_id: &'a str,
    pub(crate) input: &'a Value,
    pub(crate) response: Option<&'a ToolResult>,
}

impl HookRequest<'_> {
    /// The stdin document of a command hook.
    pub(crate) fn command_input(&self) -> Value {
        let turn = self.turn;
        let mut doc = Map::new();
        doc.insert("session_id".into(), json!(turn.thread_id));
        doc.insert("transcript_path".into(), Value::Null);
        doc.insert("cwd".into(), json!(turn.cwd));
        doc.insert("hook_event_name".into(), json!(self.phase.as_str()));
        doc.insert("permission_mode".into(), json!(permission_mode(turn)));
        doc.insert("turn_id".into(), json!(turn.turn_id));
        doc.insert("sandbox_mode".into(), json!(turn.sandbox.as_str()));
        doc.insert("approval_policy".into(), json!(turn.approval.as_str()));
        self.insert_tool_and_prompt(&mut doc);
        Value::Object(doc)
    }

    /// The body of a workflow hook request.
    pub(crate) fn workflow_body(&self, mode: &str) -> Value {
        let mut doc = Map::new();
        doc.insert("phase".into(), json!(self.phase.as_str()));
        doc.insert("session_id".into(), json!(self.turn.thread_id));
        doc.insert("turn_id".into(), json!(self.turn.turn_id));
        doc.insert("mode".into(), json!(mode));
        doc.insert("tool_name".into(), Value::Null);
        doc.insert("tool_input".into(), Value::Null);
        self.insert_tool_and_prompt(&mut doc);
        Value::Object(doc)
    }

    fn insert_tool_and_prompt(&self, doc: &mut Map<String, Value>) {
        if let Some(tool) = self.tool {
            doc.insert("tool_name".into(), json!(tool.name));
            doc.insert("tool_input".into(), tool.input.clone());
            doc.insert("tool_use_id".into(), json!(tool.call_id));
            if let Some(result) = tool.response {
                doc.insert("tool_response".into(), result.output.clone());
                doc.insert("is_error".into(), json!(result.is_error));
            }
        }
        if let Some(prompt) = self.prompt {
            doc.insert("prompt".into(), json!(prompt));
        }
    }
}

/// Claude Code's `permission_mode` for our turn settings.
fn permission_mode(turn: &HookTurn) -> &'static str {
    match (turn.thread_mode, turn.approval) {
        (ThreadMode::Plan, _) => "plan",
        (_, ApprovalPolicy::Never) => "dontAsk",
        (_, ApprovalPolicy::Auto) => "bypassPermissions",
        _ => "default",
    }
}

/// A hook's verdict on the call (or turn, or result).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Verdict {
    /// No opinion.
    #[default]
    NoOpinion,
    /// Pre-approve.
    Allow,
    /// Withdraw a pre-approval: the approval gate decides.
    Ask,
    /// Deny the call or turn; mark a result as an error.
    Block { reason: String },
}

/// One hook's answer, in our terms.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct HookReply {
    pub(crate) verdict: Verdict,
    pub(crate) updated_input: Option<Value>,
    pub(crate) output: Option<Value>,
    pub(crate) is_error: Option<bool>,
    pub(crate) context: Option<String>,
    pub(crate) warnings: Vec<String>,
}

impl HookReply {
    /// A reply that only carries a warning.
    pub(crate) fn warning(text: String) -> Self {
        Self {
            warnings: vec![text],
            ..Self::default()
        }
    }

    /// Reads a JSON answer (see the module table). `label` names the hook in warnings.
    pub(crate) fn from_json(phase: HookPhase, label: &str, answer: &Map<String, Value>) -> Self {
        let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);
        let field = |key: &str| {
            specific
                .and_then(|s| s.get(key))
                .or_else(|| answer.get(key))
                .filter(|v| !v.is_null())
        };
        let text = |key: &str| field(key).and_then(Value::as_str).map(str::to_owned);
        let mut reply = Self::default();
        let reason = text("permissionDecisionReason")
            .or_else(|| text("reason"))
            .or_else(|| text("stopReason"))
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| format!("a {} hook blocked this without a reason", phase.as_str()));

        if let Some(decision) = text("permissionDecision") {
            reply.verdict = match decision.as_str() {
                "allow" => Verdict::Allow,
                "deny" => Verdict::Block {
                    reason: reason.clone(),
                },
                "ask" | "defer" => Verdict::Ask,
                other => {
                    reply.warnings.push(format!(
                        "{} hook `{label}` answered permissionDecision `{other}`; expected \
                         allow, deny or ask, so it was ignored",
                        phase.as_str()
                    ));
                    Verdict::NoOpinion
                }
            };
        } else if let Some(decision) = text("decision") {
            reply.verdict = match decision.as_str() {
                "approve" => Verdict::Allow,
                "block" => Verdict::Block {
                    reason: reason.clone(),
                },
                other => {
                    reply.warnings.push(format!(
                        "{} hook `{label}` answered decision `{other}`; expected approve or \
                         block, so it was ignored",
                        phase.as_str()
                    ));
                    Verdict::NoOpinion
                }
            };
        }
        if answer.get("continue").and_then(Value::as_bool) == Some(false) {
            reply.verdict = Verdict::Block { reason };
        }

        reply.updated_input = field("updatedInput").cloned();
        reply.context = text("additionalContext")
            .map(|c| c.trim().to_owned())
            .filter(|c| !c.is_empty());
        reply.output = answer
            .get("output")
            .or_else(|| specific.and_then(|s| s.get("updatedMCPToolOutput")))
            .cloned();
        reply.is_error = answer
            .get("is_error")
            .or_else(|| answer.get("isError"))
            .and_then(Value::as_bool);
        if let Some(message) = text("systemMessage") {
            reply
                .warnings
                .push(format!("{} hook `{label}`: {message}", phase.as_str()));
        }
        reply
    }
}

/// Attaches a block reason to a PostToolUse result: an object output gains `hook_reason`;
/// any other output is wrapped as `{"output": <old>, "hook_reason": reason}`.
pub(crate) fn attach_block_reason(output: &mut Value, reason: String) {
    match output {
        Value::Object(map) => {
            map.insert("hook_reason".into(), Value::String(reason));
        }
        other => {
            let old = std::mem::take(other);
            *other = json!({ "output": old, "hook_reason": reason });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(answer: Value) -> HookReply {
        HookReply::from_json(HookPhase::PreToolUse, "t", answer.as_object().unwrap())
    }

    #[test]
    fn permission_decision_wins_over_legacy_decision() {
        let r = reply(json!({"decision": "approve",
            "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}));
        assert_eq!(
            r.verdict,
            Verdict::Block {
                reason: "no".into()
            }
        );
    }

    #[test]
    fn legacy_block_uses_reason() {
        let r = reply(json!({"decision": "block", "reason": " nope "}));
        assert_eq!(
            r.verdict,
            Verdict::Block {
                reason: "nope".into()
            }
        );
    }

    #[test]
    fn continue_false_blocks_with_stop_reason() {
        let r = reply(json!({"continue": false, "stopReason": "halt"}));
        assert_eq!(
            r.verdict,
            Verdict::Block {
                reason: "halt".into()
            }
        );
    }

    #[test]
    fn ask_and_unknown_decisions() {
        assert_eq!(
            reply(json!({"permissionDecision": "ask"})).verdict,
            Verdict::Ask
        );
        let r = reply(json!({"permissionDecision": "maybe"}));
        assert_eq!(r.verdict, Verdict::NoOpinion);
        assert_eq!(r.warnings.len(), 1);
    }

    #[test]
    fn post_fields_are_read() {
        let r = reply(json!({"output": "x", "isError": true, "additionalContext": "  c "}));
        assert_eq!(r.output, Some(json!("x")));
        assert_eq!(r.is_error, Some(true));
        assert_eq!(r.context.as_deref(), Some("c"));
        let r = reply(json!({"hookSpecificOutput": {"updatedMCPToolOutput": {"a": 1}}}));
        assert_eq!(r.output, Some(json!({"a": 1})));
    }

    #[test]
    fn block_reason_attaches_to_any_output() {
        let mut object = json!({"a": 1});
        attach_block_reason(&mut object, "why".into());
        assert_eq!(object, json!({"a": 1, "hook_reason": "why"}));
        let mut text = json!("plain");
        attach_block_reason(&mut text, "why".into());
        assert_eq!(text, json!({"output": "plain", "hook_reason": "why"}));
    }
}
