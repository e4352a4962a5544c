//! The `openai` runner: the child's loop against any OpenAI-compatible chat-completions
//! endpoint (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, DeepSeek, Qwen, …),
//! non-streaming.
//!
//! Each request is `POST {base_url}/chat/completions` with `{model, messages, tools}`: the
//! profile's system prompt, the task, the conversation so far, and the child catalog as
//! function tools (their JSON schemas as the catalog gives them). `Authorization: Bearer` is
//! sent when `api_key_env` names a variable (the configuration holds the variable's **name**,
//! never the key; it is read once, when the runner is built).
//!
//! | the endpoint | the parent's result |
//! |---|---|
//! | answers | the loop goes on ([`crate::agent_loop`]) |
//! | does not answer within `timeout` | `tool_timeout` |
//! | cannot be reached | `tool_execution_failed`, naming the URL |
//! | 429 | `rate_limited` (with `Retry-After` when sent) |
//! | 5xx | `tool_execution_failed` with the status and the start of the body |
//! | other 4xx (a wrong key, an unknown model) | `tool_execution_failed` saying what to check |
//! | 2xx that is not a chat completion | `tool_execution_failed` |

use crate::agent_loop::{ChatModel, Message, ModelCall, ModelError, ModelReply, run_loop};
use async_trait::async_trait;
use kun_ports::{
    AbortSignal, ChildAgentRunner, ChildFailure, ChildFailureKind, ChildOutcome, ChildRun,
    ToolDescriptor,
};
use serde_json::{Value, json};
use std::time::Duration;

/// How much of an error body a message quotes.
const BODY_SHOWN: usize = 300;

/// Where and how to reach the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiSettings {
    /// The API base, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    /// The model name sent (profiles with `model: inherit` use it).
    pub model: String,
    /// The name of the environment variable holding the API key, if any.
    pub api_key_env: Option<String>,
    /// The limit of one request.
    pub timeout: Duration,
}

/// The `openai` runner.
pub struct OpenAiRunner {
    client: reqwest::Client,
    endpoint: String,
    settings: OpenAiSettings,
    api_key: Option<String>,
}

impl std::fmt::Debug for OpenAiRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiRunner")
            .field("endpoint", &self.endpoint)
            .field("settings", &self.settings)
            .field("api_key", &self.api_key.as_ref().map(|_| "(set)"))
            .finish_non_exhaustive()
    }
}

impl OpenAiRunner {
    /// A runner; reads the key from the variable `api_key_env` names.
    ///
    /// # Errors
    /// A named variable that is not set, a base URL that is not http(s), or a client that
    /// cannot be built.
    pub fn new(settings: OpenAiSettings) -> Result<Self, String> {
        let api_key = match &settings.api_key_env {
            Some(name) => Some(
                std::env::var(name)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| {
                        format!(
                            "[delegation.openai] api_key_env names `{name}`, but that variable is \
                             not set in kun-tools' environment"
                        )
                    })?,
            ),
            None => None,
        };
        Self::with_key(settings, api_key)
    }

    /// A runner with the key given directly (tests, embedding programs).
    ///
    /// # Errors
    /// A base URL that is not http(s), or a client that cannot be built.
    pub fn with_key(settings: OpenAiSettings, api_key: Option<String>) -> Result<Self, String> {
        let base = settings.base_url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!(
                "[delegation.openai] base_url `{}` must start with http:// or https://",
                settings.base_url
            ));
        }
        let endpoint = format!("{base}/chat/completions");
        let client = reqwest::Client::builder()
            .timeout(settings.timeout)
            .connect_timeout(settings.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|err| format!("cannot build the HTTP client: {err}"))?;
        Ok(Self {
            client,
            endpoint,
            settings,
            api_key,
        })
    }

    /// The URL requests go to.
    #[must_use]
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

#[async_trait]
impl ChildAgentRunner for OpenAiRunner {
    fn describe(&self) -> String {
        format!(
            "openai {} (model {}, timeout {} s{})",
            self.settings.base_url,
            self.settings.model,
            self.settings.timeout.as_secs(),
            self.settings
                .api_key_env
                .as_ref()
                .map(|name| format!(", key from ${name}"))
                .unwrap_or_default()
        )
    }

    async fn run<'a>(&self, run: ChildRun<'a>) -> Result<ChildOutcome, ChildFailure> {
        let model = run.profile.model.resolve(&self.settings.model).to_owned();
        run_loop(self, &model, run).await
    }
}

#[async_trait]
impl ChatModel for OpenAiRunner {
    async fn complete(
        &self,
        model: &str,
        messages: &[Message],
        tools: &[ToolDescriptor],
        abort: &AbortSignal,
    ) -> Result<ModelReply, ModelError> {
        let body = request_body(model, messages, tools);
        let mut request = self.client.post(&self.endpoint).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let sent = tokio::select! {
            biased;
            () = abort.aborted() => return Err(aborted()),
            sent = request.send() => sent,
        };
        let response = sent.map_err(|err| self.transport_error(&err))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = tokio::select! {
            biased;
            () = abort.aborted() => return Err(aborted()),
            text = response.text() => text.map_err(|err| self.transport_error(&err))?,
        };
        if !status.is_success() {
            return Err(self.status_error(status, &text, retry_after.as_deref()));
        }
        parse_reply(&text).map_err(|problem| ModelError {
            kind: ChildFailureKind::Endpoint,
            message: format!(
                "the model endpoint {} answered something that is not a chat completion \
                 ({problem}); check that base_url points at an OpenAI-compatible API",
                self.endpoint
            ),
        })
    }
}

fn aborted() -> ModelError {
    ModelError {
        kind: ChildFailureKind::Aborted,
        message: "the child agent was stopped: the delegating turn was aborted".to_owned(),
    }
}

impl OpenAiRunner {
    fn transport_error(&self, err: &reqwest::Error) -> ModelError {
        if err.is_timeout() {
            return ModelError {
                kind: ChildFailureKind::Timeout,
                message: format!(
                    "the model endpoint {} did not answer within {} s (timeout_seconds); try a \
                     smaller task or raise [delegation.openai] timeout_seconds",
                    self.endpoint,
                    self.settings.timeout.as_secs()
                ),
            };
        }
        let why = if err.is_connect() {
            "cannot connect: is the server running and is base_url right?"
        } else {
            "the request failed"
        };
        ModelError {
            kind: ChildFailureKind::Endpoint,
            message: format!(
                "the model endpoint {} is not reachable ({why}): {}",
                self.endpoint,
                error_chain(err)
            ),
        }
    }

    fn status_error(
        &self,
        status: reqwest::StatusCode,
        body: &str,
        retry_after: Option<&str>,
    ) -> ModelError {
        let shown: String = body.chars().take(BODY_SHOWN).collect();
        if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            return ModelError {
                kind: ChildFailureKind::RateLimited,
                message: format!(
                    "the model endpoint {} is rate limiting (429){}; wait before delegating again: {shown}",
                    self.endpoint,
                    retry_after
                        .map(|s| format!(", retry after {s} s"))
                        .unwrap_or_default()
                ),
            };
        }
        let advice = if status.is_server_error() {
            "the model server failed; try again later"
        } else if matches!(status.as_u16(), 401 | 403) {
            "the key was refused: check that api_key_env names the right variable"
        } else {
            "the request was refused: check the model name and base_url"
        };
        ModelError {
            kind: ChildFailureKind::Endpoint,
            message: format!(
                "the model endpoint {} answered {status} ({advice}): {shown}",
                self.endpoint
            ),
        }
    }
}

/// An error and its sources, one line.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}

/// The request body.
fn request_body(model: &str, messages: &[Message], tools: &[ToolDescriptor]) -> Value {
    let messages: Vec<Value> = messages.iter().map(message_json).collect();
    let mut body = json!({"model": model, "messages": messages, "stream": false});
    if !tools.is_empty() {
        body["tools"] = Value::from(
            tools
                .iter()
                .map(|tool| {
                    let spec = tool.spec();
                    json!({"type": "function", "function": {
                        "name": spec.name,
                        "description": spec.description,
                        "parameters": spec.input_schema,
                    }})
                })
                .collect::<Vec<_>>(),
        );
    }
    body
}

fn message_json(message: &Message) -> Value {
    match message {
        Message::System(text) => json!({"role": "system", "content": text}),
        Message::User(text) => json!({"role": "user", "content": text}),
        Message::Assistant { content, calls } => json!({
            "role": "assistant",
            "content": content,
            "tool_calls": calls.iter().map(|c| json!({
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            })).collect::<Vec<_>>(),
        }),
        Message::Tool { call_id, content } => {
            json!({"role": "tool", "tool_call_id": call_id, "content": content})
        }
    }
}

/// A chat completion's first choice.
fn parse_reply(text: &str) -> Result<ModelReply, String> {
    let body: Value = serde_json::from_str(text).map_err(|err| format!("not JSON: {err}"))?;
    let message = body
        .pointer("/choices/0/message")
        .ok_or("no choices[0].message")?;
    let content = message
        .get("content")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut calls = Vec::new();
    if let Some(list) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, call) in list.iter().enumerate() {
            let function = call.get("function").ok_or("a tool call has no function")?;
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or("a tool call has no name")?;
            // Most servers send the arguments as a JSON text, some as an object.
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
                .map_or_else(|| format!("call_{i}"), str::to_owned);
            calls.push(ModelCall {
                id,
                name: name.to_owned(),
                arguments,
            });
        }
    }
    let tokens = |key: &str| {
        body.pointer(&format!("/usage/{key}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(ModelReply {
        content,
        calls,
        prompt_tokens: tokens("prompt_tokens"),
        completion_tokens: tokens("completion_tokens"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_with_string_or_object_arguments() {
        let reply = parse_reply(
            r#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
                {"id":"a","type":"function","function":{"name":"read","arguments":"{\"path\":\"x\"}"}},
                {"type":"function","function":{"name":"grep","arguments":{"pattern":"y"}}}]}}],
                "usage":{"prompt_tokens":7,"completion_tokens":3}}"#,
        )
        .unwrap();
        assert_eq!(reply.calls[0].arguments, r#"{"path":"x"}"#);
        assert_eq!(reply.calls[1].id, "call_1");
        assert_eq!(reply.calls[1].arguments, r#"{"pattern":"y"}"#);
        assert_eq!((reply.prompt_tokens, reply.completion_tokens), (7, 3));
        assert!(parse_reply("{}").is_err());
        assert!(parse_reply("<html>").is_err());
    }

    #[test]
    fn a_bad_base_url_is_refused() {
        let settings = OpenAiSettings {
            base_url: "ftp://x".into(),
            model: "m".into(),
            api_key_env: None,
            timeout: Duration::from_secs(1),
        };
        assert!(
            OpenAiRunner::with_key(settings, None)
                .unwrap_err()
                .contains("http://")
        );
    }
}
