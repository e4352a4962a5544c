//! The child's loop, shared by every runner: ask the model, run the tool calls it asks for
//! through the child host, repeat until it answers or the turns run out.
//!
//! | # | step | on failure |
//! |---|---|---|
//! | 1 | abort check | `aborted` |
//! | 2 | one model request with the conversation and the child catalog as tools | the model's failure (`rate_limited`, `tool_timeout`, endpoint errors) with the usage so far |
//! | 3 | no tool calls: the content is the final answer | — |
//! | 4 | tool calls on the last allowed request: stop | `delegation_max_turns` |
//! | 5 | each call through [`ChildRun::call_tool`] (every gate); bad JSON arguments and refusals become text for the model | `aborted` |
//! | 6 | back to 1 | — |

use async_trait::async_trait;
use kun_ports::{
    AbortSignal, ChildFailure, ChildFailureKind, ChildOutcome, ChildRun, ChildUsage, ToolCall,
    ToolDescriptor,
};
use serde_json::Value;

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// The system prompt.
    System(String),
    /// The task.
    User(String),
    /// A model reply that asked for tools.
    Assistant {
        /// Text that came with the calls.
        content: Option<String>,
        /// The calls.
        calls: Vec<ModelCall>,
    },
    /// A tool's result.
    Tool {
        /// The call it answers.
        call_id: String,
        /// What the model reads.
        content: String,
    },
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    /// The model's id for it.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments as the model wrote them (a JSON text).
    pub arguments: String,
}

/// One model reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelReply {
    /// Text.
    pub content: Option<String>,
    /// Tool calls (none: the reply is the final answer).
    pub calls: Vec<ModelCall>,
    /// Prompt tokens reported.
    pub prompt_tokens: u64,
    /// Completion tokens reported.
    pub completion_tokens: u64,
}

/// A model failure: which kind, and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    /// The kind (the parent sees its code).
    pub kind: ChildFailureKind,
    /// What happened and what to do.
    pub message: String,
}

/// A chat model the loop talks to.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// One request: the conversation so far and the tools offered.
    ///
    /// # Errors
    /// When the model cannot answer.
    async fn complete(
        &self,
        model: &str,
        messages: &[Message],
        tools: &[ToolDescriptor],
        abort: &AbortSignal,
    ) -> Result<ModelReply, ModelError>;
}

/// Runs the loop (see the module table) with `model` (the model name sent).
///
/// # Errors
/// A [`ChildFailure`] when the child did not answer.
pub async fn run_loop(
    chat: &dyn ChatModel,
    model: &str,
    run: ChildRun<'_>,
) -> Result<ChildOutcome, ChildFailure> {
    let tools = run.catalog();
    let mut messages = vec![
        Message::System(run.profile.system_prompt.clone()),
        Message::User(run.user_message()),
    ];
    let mut usage = ChildUsage::default();
    for turn in 1..=run.limits.max_turns {
        // 1.
        if run.abort().is_aborted() {
            return Err(ChildFailure::aborted(usage));
        }
        // 2.
        usage.turns += 1;
        let reply = chat
            .complete(model, &messages, &tools, run.abort())
            .await
            .map_err(|err| ChildFailure::new(err.kind, err.message, usage))?;
        usage.prompt_tokens += reply.prompt_tokens;
        usage.completion_tokens += reply.completion_tokens;
        // 3.
        if reply.calls.is_empty() {
            return Ok(ChildOutcome {
                text: reply.content.unwrap_or_default(),
                usage,
            });
        }
        // 4.
        if turn == run.limits.max_turns {
            break;
        }
        // 5.
        messages.push(Message::Assistant {
            content: reply.content.clone(),
            calls: reply.calls.clone(),
        });
        for call in reply.calls {
            usage.tool_calls += 1;
            let content = match parse_arguments(&call.arguments) {
                Ok(arguments) => {
                    let call = ToolCall::new(call.id.clone(), call.name.clone(), arguments);
                    run.call_tool(call, &usage).await?.text
                }
                Err(problem) => format!(
                    "error [invalid_arguments]: the arguments for {} were not a JSON object \
                     ({problem}); call it again with valid JSON",
                    call.name
                ),
            };
            messages.push(Message::Tool {
                call_id: call.id,
                content,
            });
        }
    }
    Err(ChildFailure::max_turns(run.limits, usage))
}

/// A model's argument text as a JSON object (empty text counts as `{}`).
fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!("got {other}")),
        Err(err) => Err(err.to_string()),
    }
}
