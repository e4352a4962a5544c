//! Asking the user a structured question (the `user_input` tools).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A question with an optional JSON Schema for the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserQuestion {
    /// What to ask.
    pub prompt: String,
    /// The shape of the answer, when structured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
}

/// The user's reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum UserAnswer {
    /// An answer.
    Answered {
        /// The content.
        content: Value,
    },
    /// The user declined to answer.
    Declined,
    /// The question was cancelled or timed out.
    Cancelled,
}

/// A channel to the user.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait UserInputChannel: Send + Sync {
    /// Asks and waits. Implementations answer `Cancelled` instead of hanging forever.
    async fn ask(&self, question: &UserQuestion) -> UserAnswer;
}
