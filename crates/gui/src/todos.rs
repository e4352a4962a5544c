//! The todo pair: `todo_list` reads the thread's list, `todo_write` replaces it whole (items
//! with content and a status: pending, in_progress, completed).
//!
//! `todo_write` refuses (and changes nothing) a blank item, an item over 500 characters, or
//! more than 100 items.

use crate::goals::state_failure;
use crate::limits::{MAX_TODO_CHARS, MAX_TODOS, blank_or_long};
use async_trait::async_trait;
use kun_ports::{
    SideEffect, ThreadState, TodoItem, TodoStatus, ToolContext, ToolFailure, ToolPolicy, ToolSpec,
    TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::sync::Arc;

/// What both todo tools return: the list after the call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TodoOutput {
    /// The items, in order.
    pub todos: Vec<TodoItem>,
}

fn render(output: &TodoOutput) -> String {
    if output.todos.is_empty() {
        return "The todo list is empty.".to_owned();
    }
    let done = output
        .todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let mut text = format!("Todos ({done}/{} completed):", output.todos.len());
    for item in &output.todos {
        let mark = match item.status {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[>]",
            TodoStatus::Completed => "[x]",
        };
        let _ = write!(text, "\n{mark} {}", item.content);
    }
    text
}

/// Arguments of `todo_list`: none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoListArgs {}

/// `todo_list`: reads the thread's todo list.
pub struct TodoList {
    spec: ToolSpec,
    store: Arc<dyn ThreadState>,
}

impl TodoList {
    /// The tool over `store`.
    #[must_use]
    pub fn new(store: Arc<dyn ThreadState>) -> Self {
        let spec = ToolSpec::typed::<TodoListArgs, TodoOutput>(
            "todo_list",
            "Read this thread's todo list: each item's content and status (pending, \
             in_progress, completed).",
        )
        .with_policy(ToolPolicy::Auto)
        .with_side_effect(SideEffect::ReadOnly);
        Self { spec, store }
    }
}

#[async_trait]
impl TypedTool for TodoList {
    type Args = TodoListArgs;
    type Output = TodoOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &TodoOutput) -> String {
        render(output)
    }

    async fn run(
        &self,
        _args: TodoListArgs,
        ctx: ToolContext<'_>,
    ) -> Result<TodoOutput, ToolFailure> {
        let record = self.store.load(ctx.turn.thread_id).map_err(state_failure)?;
        Ok(TodoOutput {
            todos: record.todos,
        })
    }
}

/// Arguments of `todo_write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteArgs {
    /// The whole list, in order; it replaces the previous one.
    pub todos: Vec<TodoItem>,
}

/// `todo_write`: replaces the thread's todo list.
pub struct TodoWrite {
    spec: ToolSpec,
    store: Arc<dyn ThreadState>,
}

impl TodoWrite {
    /// The tool over `store`.
    #[must_use]
    pub fn new(store: Arc<dyn ThreadState>) -> Self {
        let spec = ToolSpec::typed::<TodoWriteArgs, TodoOutput>(
            "todo_write",
            "Replace this thread's todo list with these items (content and status: pending, \
             in_progress, completed). Send the whole list each time; keep one item in_progress \
             while you work on it.",
        )
        .with_policy(ToolPolicy::Auto);
        Self { spec, store }
    }
}

#[async_trait]
impl TypedTool for TodoWrite {
    type Args = TodoWriteArgs;
    type Output = TodoOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &TodoOutput) -> String {
        render(output)
    }

    async fn run(
        &self,
        args: TodoWriteArgs,
        ctx: ToolContext<'_>,
    ) -> Result<TodoOutput, ToolFailure> {
        if args.todos.len() > MAX_TODOS {
            return Err(ToolFailure::invalid(format!(
                "{} items is more than the {MAX_TODOS} a list may hold; merge or drop some",
                args.todos.len()
            )));
        }
        let todos: Vec<TodoItem> = args
            .todos
            .into_iter()
            .map(|item| TodoItem::new(item.content.trim(), item.status))
            .collect();
        for (index, item) in todos.iter().enumerate() {
            if let Some(problem) = blank_or_long(&item.content, MAX_TODO_CHARS) {
                return Err(ToolFailure::invalid(format!(
                    "todos[{index}].content {problem}"
                )));
            }
        }
        let record = self
            .store
            .modify(ctx.turn.thread_id, &mut |record| {
                record.todos.clone_from(&todos);
                Ok(())
            })
            .map_err(state_failure)?;
        Ok(TodoOutput {
            todos: record.todos,
        })
    }
}
