//! The goal trio: `get_goal`, `create_goal`, `update_goal` — the thread's objective, its
//! status (active, paused, complete) and an optional token budget, kept in the
//! [`ThreadState`] store under the turn's thread id.
//!
//! | tool | refuses when |
//! |---|---|
//! | `create_goal` | the objective is blank or over 2,000 characters; an active or paused goal exists (update it, or complete it first) |
//! | `update_goal` | no goal exists; nothing to change; a blank objective |

use crate::limits::{MAX_OBJECTIVE_CHARS, blank_or_long};
use async_trait::async_trait;
use kun_ports::{
    Goal, GoalStatus, SideEffect, ThreadState, ThreadStateError, ToolContext, ToolFailure,
    ToolPolicy, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What every goal tool returns: the goal after the call (absent when none is set).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GoalOutput {
    /// The thread's goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<Goal>,
}

fn render(output: &GoalOutput) -> String {
    match &output.goal {
        None => "No goal is set for this thread.".to_owned(),
        Some(goal) => {
            let budget = goal
                .token_budget
                .map(|b| format!(" (token budget {b})"))
                .unwrap_or_default();
            format!(
                "Goal [{}]{budget}: {}",
                goal.status.as_str(),
                goal.objective
            )
        }
    }
}

pub(crate) fn state_failure(err: ThreadStateError) -> ToolFailure {
    match err {
        ThreadStateError::Refused(message) => ToolFailure::invalid(message),
        ThreadStateError::Store(message) => ToolFailure::new(message),
    }
}

/// Arguments of `get_goal`: none.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetGoalArgs {}

/// `get_goal`: reads the thread's goal.
pub struct GetGoal {
    spec: ToolSpec,
    store: Arc<dyn ThreadState>,
}

impl GetGoal {
    /// The tool over `store`.
    #[must_use]
    pub fn new(store: Arc<dyn ThreadState>) -> Self {
        let spec = ToolSpec::typed::<GetGoalArgs, GoalOutput>(
            "get_goal",
            "Read this thread's goal: its objective, status (active, paused, complete) and \
             token budget. Check it before planning work.",
        )
        .with_policy(ToolPolicy::Auto)
        .with_side_effect(SideEffect::ReadOnly);
        Self { spec, store }
    }
}

#[async_trait]
impl TypedTool for GetGoal {
    type Args = GetGoalArgs;
    type Output = GoalOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &GoalOutput) -> String {
        render(output)
    }

    async fn run(
        &self,
        _args: GetGoalArgs,
        ctx: ToolContext<'_>,
    ) -> Result<GoalOutput, ToolFailure> {
        let record = self.store.load(ctx.turn.thread_id).map_err(state_failure)?;
        Ok(GoalOutput { goal: record.goal })
    }
}

/// Arguments of `create_goal`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGoalArgs {
    /// What this thread should achieve, in one or two sentences.
    pub objective: String,
    /// How many tokens the work may spend.
    #[serde(default)]
    pub token_budget: Option<u64>,
}

/// `create_goal`: sets the thread's goal (active).
pub struct CreateGoal {
    spec: ToolSpec,
    store: Arc<dyn ThreadState>,
}

impl CreateGoal {
    /// The tool over `store`.
    #[must_use]
    pub fn new(store: Arc<dyn ThreadState>) -> Self {
        let spec = ToolSpec::typed::<CreateGoalArgs, GoalOutput>(
            "create_goal",
            "Set this thread's goal: the objective the work is for, with an optional token \
             budget. Refused while an active or paused goal exists: update it instead.",
        )
        .with_policy(ToolPolicy::Auto);
        Self { spec, store }
    }
}

#[async_trait]
impl TypedTool for CreateGoal {
    type Args = CreateGoalArgs;
    type Output = GoalOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &GoalOutput) -> String {
        render(output)
    }

    async fn run(
        &self,
        args: CreateGoalArgs,
        ctx: ToolContext<'_>,
    ) -> Result<GoalOutput, ToolFailure> {
        let objective = args.objective.trim().to_owned();
        if let Some(problem) = blank_or_long(&objective, MAX_OBJECTIVE_CHARS) {
            return Err(ToolFailure::invalid(format!("objective {problem}")));
        }
        if args.token_budget == Some(0) {
            return Err(ToolFailure::invalid(
                "token_budget must be at least 1; leave it out for no budget",
            ));
        }
        let record = self
            .store
            .modify(ctx.turn.thread_id, &mut |record| {
                if let Some(existing) = &record.goal
                    && existing.status != GoalStatus::Complete
                {
                    return Err(ThreadStateError::Refused(format!(
                        "this thread already has a {} goal (\"{}\"); change it with update_goal, \
                         or set its status to complete first",
                        existing.status.as_str(),
                        existing.objective
                    )));
                }
                record.goal = Some(Goal {
                    objective: objective.clone(),
                    status: GoalStatus::Active,
                    token_budget: args.token_budget,
                });
                Ok(())
            })
            .map_err(state_failure)?;
        Ok(GoalOutput { goal: record.goal })
    }
}

/// Arguments of `update_goal`: the fields to change.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateGoalArgs {
    /// A new objective.
    #[serde(default)]
    pub objective: Option<String>,
    /// A new status: active, paused or complete.
    #[serde(default)]
    pub status: Option<GoalStatus>,
    /// A new token budget.
    #[serde(default)]
    pub token_budget: Option<u64>,
}

/// `update_goal`: changes the thread's goal.
pub struct UpdateGoal {
    spec: ToolSpec,
    store: Arc<dyn ThreadState>,
}

impl UpdateGoal {
    /// The tool over `store`.
    #[must_use]
    pub fn new(store: Arc<dyn ThreadState>) -> Self {
        let spec = ToolSpec::typed::<UpdateGoalArgs, GoalOutput>(
            "update_goal",
            "Change this thread's goal: its objective, its status (active, paused, complete) \
             or its token budget. Mark it complete when the objective is met.",
        )
        .with_policy(ToolPolicy::Auto);
        Self { spec, store }
    }
}

#[async_trait]
impl TypedTool for UpdateGoal {
    type Args = UpdateGoalArgs;
    type Output = GoalOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &GoalOutput) -> String {
        render(output)
    }

    async fn run(
        &self,
        args: UpdateGoalArgs,
        ctx: ToolContext<'_>,
    ) -> Result<GoalOutput, ToolFailure> {
        if args.objective.is_none() && args.status.is_none() && args.token_budget.is_none() {
            return Err(ToolFailure::invalid(
                "nothing to change: give objective, status or token_budget",
            ));
        }
        let objective = args.objective.map(|o| o.trim().to_owned());
        if let Some(problem) = objective
            .as_deref()
            .and_then(|o| blank_or_long(o, MAX_OBJECTIVE_CHARS))
        {
            return Err(ToolFailure::invalid(format!("objective {problem}")));
        }
        if args.token_budget == Some(0) {
            return Err(ToolFailure::invalid("token_budget must be at least 1"));
        }
        let record = self
            .store
            .modify(ctx.turn.thread_id, &mut |record| {
                let Some(goal) = record.goal.as_mut() else {
                    return Err(ThreadStateError::Refused(
                        "this thread has no goal yet; set one with create_goal".to_owned(),
                    ));
                };
                if let Some(objective) = &objective {
                    goal.objective.clone_from(objective);
                }
                if let Some(status) = args.status {
                    goal.status = status;
                }
                if let Some(budget) = args.token_budget {
                    goal.token_budget = Some(budget);
                }
                Ok(())
            })
            .map_err(state_failure)?;
        Ok(GoalOutput { goal: record.goal })
    }
}
