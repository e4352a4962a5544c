//! Per-thread state of the GUI tools: the thread's goal and its todo list.
//!
//! A [`ThreadState`] store keeps one [`ThreadRecord`] per thread id. The goal tools
//! (`get_goal`, `create_goal`, `update_goal`) and the todo tools (`todo_list`, `todo_write`)
//! read and change it through [`ThreadState::modify`], which applies a change atomically: two
//! writers (two processes sharing a file store) never lose each other's update, and a change
//! that fails leaves the record as it was.
//!
//! ```
//! use kun_ports::{Goal, GoalStatus, ThreadRecord, TodoItem, TodoStatus};
//! let mut record = ThreadRecord::default();
//! record.goal = Some(Goal::new("ship the parser"));
//! record.todos = vec![TodoItem::new("write tests", TodoStatus::InProgress)];
//! assert_eq!(record.goal.as_ref().unwrap().status, GoalStatus::Active);
//! assert_eq!(serde_json::to_value(&record.todos[0]).unwrap()["status"], "in_progress");
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    /// Being worked on.
    #[default]
    Active,
    /// Set aside for now.
    Paused,
    /// Done.
    Complete,
}

impl GoalStatus {
    /// The wire name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Paused => "paused",
            Self::Complete => "complete",
        }
    }
}

/// The thread's goal: what the work is for, and an optional token budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Goal {
    /// What the thread is trying to achieve.
    pub objective: String,
    /// Where it stands.
    pub status: GoalStatus,
    /// How many tokens the work may spend, when bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<u64>,
}

impl Goal {
    /// An active goal without a budget.
    #[must_use]
    pub fn new(objective: impl Into<String>) -> Self {
        Self {
            objective: objective.into(),
            status: GoalStatus::Active,
            token_budget: None,
        }
    }
}

/// Where a todo item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    #[default]
    Pending,
    /// Being done now.
    InProgress,
    /// Done.
    Completed,
}

impl TodoStatus {
    /// The wire name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }
}

/// One item of the todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// What to do.
    pub content: String,
    /// Where it stands.
    pub status: TodoStatus,
}

impl TodoItem {
    /// An item.
    #[must_use]
    pub fn new(content: impl Into<String>, status: TodoStatus) -> Self {
        Self {
            content: content.into(),
            status,
        }
    }
}

/// Everything a store keeps for one thread. A thread never written to reads as the default
/// (no goal, no todos).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ThreadRecord {
    /// The goal, if one was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<Goal>,
    /// The todo list, replaced whole by each write.
    #[serde(default)]
    pub todos: Vec<TodoItem>,
}

/// Why a store could not read or change a thread's record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThreadStateError {
    /// The change itself refused (for example `update_goal` with no goal set); nothing was
    /// written.
    #[error("{0}")]
    Refused(String),
    /// The store failed (a file that cannot be read, written or parsed); nothing was written.
    #[error("thread state: {0}")]
    Store(String),
}

/// A change to a thread's record: edits it in place, or refuses (and nothing is written).
pub type RecordChange<'a> = dyn FnMut(&mut ThreadRecord) -> Result<(), ThreadStateError> + 'a;

/// Keeps a [`ThreadRecord`] per thread id.
///
/// Invariants every adapter keeps (checked by `testkit::thread_state_contract`):
/// * a thread id is any string; different ids never share a record, whatever characters
///   they hold (`../x` and `x` are two threads);
/// * [`ThreadState::modify`] is atomic: concurrent changes of one thread are serialised, and
///   a refused change writes nothing;
/// * what was written is what is read, by this store and by a new store over the same
///   backing (for persistent adapters).
pub trait ThreadState: Send + Sync {
    /// The thread's record (the default when it was never written).
    ///
    /// # Errors
    /// [`ThreadStateError::Store`] when the backing cannot be read.
    fn load(&self, thread_id: &str) -> Result<ThreadRecord, ThreadStateError>;

    /// Applies `change` to the thread's record atomically and returns the record written.
    ///
    /// # Errors
    /// The change's refusal, or [`ThreadStateError::Store`]; either way nothing is written.
    fn modify(
        &self,
        thread_id: &str,
        change: &mut RecordChange<'_>,
    ) -> Result<ThreadRecord, ThreadStateError>;
}
