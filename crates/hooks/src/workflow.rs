//! Workflow hooks: an HTTP POST to an endpoint, which always fails open.
//!
//! The body is `{phase, session_id, turn_id, mode, tool_name, tool_input}` plus, when they
//! apply, `tool_use_id`, `tool_response` and `is_error` (PostToolUse) and `prompt`
//! (UserPromptSubmit). With `secret_env`, the request carries `Authorization: Bearer <value of
//! that variable>`; if the variable is unset the hook is skipped with a warning.
//!
//! The answer is a JSON object (an empty body means no opinion). Every mode takes
//! `additionalContext` as context for the model; then:
//!
//! | mode | reads |
//! |---|---|
//! | observe | `message` → a warning; nothing else |
//! | block | `{"decision": "block", "reason": …}`, `{"ok": false, "reason": …}` or `permissionDecision: "deny"` → a block |
//! | rewrite | PreToolUse: `updatedInput` → new arguments; PostToolUse: `output` (and `is_error`) → the new result |
//!
//! Connection errors, timeouts, non-2xx answers, oversized or non-JSON bodies become warnings;
//! the call goes on.

use crate::config::{WorkflowHook, WorkflowMode};
use crate::protocol::{HookReply, HookRequest, Verdict};
use kun_ports::HookPhase;
use serde_json::{Map, Value};

/// The largest answer body read.
const BODY_CAP: usize = 1024 * 1024;

/// Runs a workflow hook. Never fails: problems come back as warnings.
pub(crate) async fn run_workflow_hook(
    client: &reqwest::Client,
    hook: &WorkflowHook,
    label: &str,
    request: &HookRequest<'_>,
) -> HookReply {
    let phase = request.phase.as_str();
    let mut post = client
        .post(hook.url.clone())
        .timeout(hook.timeout)
        .json(&request.workflow_body(hook.mode.as_str()));
    if let Some(name) = &hook.secret_env {
        match std::env::var(name) {
            Ok(secret) => post = post.bearer_auth(secret),
            Err(_) => {
                return HookReply::warning(format!(
                    "{phase} workflow hook `{label}` was skipped: its secret variable `{name}` \
                     is not set"
                ));
            }
        }
    }
    // The request timeout covers the body too; the outer one is a backstop.
    let exchange = async {
        let mut response = post.send().await?;
        let status = response.status();
        let mut body = Vec::new();
        let mut oversized = false;
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > BODY_CAP {
                oversized = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        Ok::<_, reqwest::Error>((status, body, oversized))
    };
    let (status, body, oversized) = match tokio::time::timeout(hook.timeout, exchange).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(err)) => return HookReply::warning(transport_warning(phase, label, &err)),
        Err(_) => {
            return HookReply::warning(format!(
                "{phase} workflow hook `{label}` did not answer in time; the call went on"
            ));
        }
    };
    if !status.is_success() {
        return HookReply::warning(format!(
            "{phase} workflow hook `{label}` answered HTTP {status}; the call went on"
        ));
    }
    if oversized {
        return HookReply::warning(format!(
            "{phase} workflow hook `{label}` answered more than {BODY_CAP} bytes; the answer \
             was ignored"
        ));
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return HookReply::default();
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(answer)) => read_answer(request.phase, hook.mode, label, &answer),
        _ => HookReply::warning(format!(
            "{phase} workflow hook `{label}` answered something other than a JSON object; it \
             was ignored"
        )),
    }
}

fn transport_warning(phase: &str, label: &str, err: &reqwest::Error) -> String {
    let what = if err.is_timeout() {
        "did not answer in time".to_owned()
    } else if err.is_connect() {
        format!("could not be reached ({err})")
    } else {
        format!("failed ({err})")
    };
    format!("{phase} workflow hook `{label}` {what}; the call went on")
}

/// Reads an answer under the hook's mode.
fn read_answer(
    phase: HookPhase,
    mode: WorkflowMode,
    label: &str,
    answer: &Map<String, Value>,
) -> HookReply {
    let text = |key: &str| {
        answer
            .get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    let specific = answer.get("hookSpecificOutput").and_then(Value::as_object);
    let mut reply = HookReply {
        context: text("additionalContext"),
        ..HookReply::default()
    };
    match mode {
        WorkflowMode::Observe => {
            if let Some(message) = text("message") {
                reply.warnings.push(format!(
                    "{} workflow hook `{label}`: {message}",
                    phase.as_str()
                ));
            }
        }
        WorkflowMode::Block => {
            let permission = answer
                .get("permissionDecision")
                .or_else(|| specific.and_then(|s| s.get("permissionDecision")))
                .and_then(Value::as_str);
            let blocks = answer.get("decision").and_then(Value::as_str) == Some("block")
                || answer.get("ok").and_then(Value::as_bool) == Some(false)
                || permission == Some("deny");
            if blocks {
                let reason = text("reason")
                    .or_else(|| text("message"))
                    .unwrap_or_else(|| format!("a {} workflow hook blocked this", phase.as_str()));
                reply.verdict = Verdict::Block { reason };
            }
        }
        WorkflowMode::Rewrite => match phase {
            HookPhase::PreToolUse => {
                reply.updated_input = answer
                    .get("updatedInput")
                    .or_else(|| specific.and_then(|s| s.get("updatedInput")))
                    .cloned();
            }
            HookPhase::PostToolUse => {
                reply.output = answer.get("output").cloned();
                reply.is_error = answer.get("is_error").and_then(Value::as_bool);
            }
            _ => {}
        },
    }
    reply
}
