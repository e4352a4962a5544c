//! Running a child agent (`delegate_task`). The child's loop belongs to the runtime.

use crate::ToolHostContext;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// A task for a child agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildTask {
    /// The profile (explore, general, …).
    pub profile: String,
    /// What to do.
    pub prompt: String,
}

/// What the child produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildReport {
    /// The child's final answer.
    pub summary: String,
    /// Tokens used, recorded to the parent.
    pub tokens_used: u64,
}

/// The child failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("child agent: {message}")]
pub struct ChildError {
    /// What failed.
    pub message: String,
}

/// Runs a child agent in a narrowed context.
#[cfg_attr(feature = "testkit", mockall::automock)]
#[async_trait]
pub trait ChildAgentRunner: Send + Sync {
    /// Runs `task` with `ctx`, whose lists never widen the parent's.
    ///
    /// # Errors
    /// When the child fails.
    async fn run(&self, task: &ChildTask, ctx: &ToolHostContext)
    -> Result<ChildReport, ChildError>;
}
