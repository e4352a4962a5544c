//! A runner whose "model" follows a script: for tests of whatever wires delegation, and the
//! second adapter of the runner contract. It runs the same loop as the real runners, so tool
//! calls really go through the child host.

use crate::agent_loop::{ChatModel, Message, ModelCall, ModelError, ModelReply, run_loop};
use async_trait::async_trait;
use kun_ports::{
    AbortSignal, ChildAgentRunner, ChildFailure, ChildFailureKind, ChildOutcome, ChildRun,
    ToolDescriptor,
};
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// One scripted reply.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptedReply {
    /// Tool calls: (tool, arguments).
    Calls(Vec<(String, Value)>),
    /// A final answer.
    Answer(String),
    /// The model fails like an endpoint would.
    Fail(ChildFailureKind, String),
}

/// What the scripted model received in one request.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedRequest {
    /// The conversation.
    pub messages: Vec<Message>,
    /// The names of the tools offered.
    pub tools: Vec<String>,
}

/// A runner over a scripted model.
#[derive(Debug)]
pub struct ScriptedRunner {
    replies: Vec<ScriptedReply>,
    repeat_last: bool,
    tokens: (u64, u64),
    next: AtomicUsize,
    seen: Mutex<Vec<ScriptedRequest>>,
}

impl ScriptedRunner {
    /// Replies in this order (each reporting 10 prompt and 2 completion tokens); past the
    /// end the model fails.
    #[must_use]
    pub fn new(replies: Vec<ScriptedReply>) -> Self {
        Self {
            replies,
            repeat_last: false,
            tokens: (10, 2),
            next: AtomicUsize::new(0),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// Repeats the last reply forever.
    #[must_use]
    pub const fn repeating_last(mut self) -> Self {
        self.repeat_last = true;
        self
    }

    /// Reports these tokens with each reply.
    #[must_use]
    pub const fn with_tokens(mut self, prompt: u64, completion: u64) -> Self {
        self.tokens = (prompt, completion);
        self
    }

    /// Every request so far.
    #[must_use]
    pub fn requests(&self) -> Vec<ScriptedRequest> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl ChatModel for ScriptedRunner {
    async fn complete(
        &self,
        _model: &str,
        messages: &[Message],
        tools: &[ToolDescriptor],
        _abort: &AbortSignal,
    ) -> Result<ModelReply, ModelError> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(ScriptedRequest {
                messages: messages.to_vec(),
                tools: tools.iter().map(|t| t.name().to_owned()).collect(),
            });
        let index = self.next.fetch_add(1, Ordering::SeqCst);
        let reply = self
            .replies
            .get(index)
            .or_else(|| self.replies.last().filter(|_| self.repeat_last))
            .ok_or_else(|| ModelError {
                kind: ChildFailureKind::Endpoint,
                message: format!("the scripted model has no reply number {}", index + 1),
            })?;
        let (prompt_tokens, completion_tokens) = self.tokens;
        match reply {
            ScriptedReply::Answer(text) => Ok(ModelReply {
                content: Some(text.clone()),
                calls: Vec::new(),
                prompt_tokens,
                completion_tokens,
            }),
            ScriptedReply::Calls(calls) => Ok(ModelReply {
                content: None,
                calls: calls
                    .iter()
                    .enumerate()
                    .map(|(i, (name, args))| ModelCall {
                        id: format!("call_{}_{i}", index + 1),
                        name: name.clone(),
                        arguments: args.to_string(),
                    })
                    .collect(),
                prompt_tokens,
                completion_tokens,
            }),
            ScriptedReply::Fail(kind, message) => Err(ModelError {
                kind: *kind,
                message: message.clone(),
            }),
        }
    }
}

#[async_trait]
impl ChildAgentRunner for ScriptedRunner {
    fn describe(&self) -> String {
        format!("scripted ({} replies)", self.replies.len())
    }

    async fn run<'a>(&self, run: ChildRun<'a>) -> Result<ChildOutcome, ChildFailure> {
        let model = run.profile.model.resolve("scripted").to_owned();
        run_loop(self, &model, run).await
    }
}
