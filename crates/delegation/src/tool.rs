//! `delegate_task {profile, task, context?}` (policy auto): runs a child agent and returns
//! its final answer and usage.
//!
//! The steps, top to bottom:
//!
//! | # | step | on failure |
//! |---|---|---|
//! | 1 | the profile exists (the schema enumerates them), the task is not blank | `invalid_arguments` |
//! | 2 | wait for a slot (FIFO, `max_parallel`); an abort while queued stops the wait | `tool_execution_failed` (aborted while queued) |
//! | 3 | the child context: a nested turn of the parent's (same roots, mode, sandbox, approval policy), lists narrowed by [`child_lists`], approvals to the parent's approver naming the profile ([`ChildApprover`]), API surface | — |
//! | 4 | the runner runs the child against the **child host** (child registry: delegable providers only, every gate) | the runner's code: `delegation_max_turns`, `rate_limited`, `tool_timeout`, `tool_execution_failed`, each with the usage |
//! | 5 | the final text and usage (turns, tool calls, tokens) | — |

use crate::approver::ChildApprover;
use crate::narrowing::{DELEGATE_TASK, child_lists};
use crate::profiles::ProfileSet;
use crate::slots::DelegationSlots;
use async_trait::async_trait;
use kun_ports::{
    ChildAgentRunner, ChildLimits, ChildRun, ChildUsage, ClientSurface, ErrorCode, SideEffect,
    ToolContext, ToolFailure, ToolHost, ToolKind, ToolPolicy, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Arguments of `delegate_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelegateTaskArgs {
    /// Which agent profile runs the task.
    pub profile: String,
    /// The task, self-contained: the child sees nothing else of this conversation.
    pub task: String,
    /// What the child should know that is not in the task (paths, findings so far).
    #[serde(default)]
    pub context: Option<String>,
}

/// What `delegate_task` returns.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DelegateTaskOutput {
    /// The profile that ran.
    pub profile: String,
    /// The child's final answer.
    pub text: String,
    /// What the child used.
    pub usage: Usage,
}

/// The child's usage, as reported to the parent.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// Model requests.
    pub turns: u32,
    /// Tool calls.
    pub tool_calls: u32,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
}

impl From<ChildUsage> for Usage {
    fn from(u: ChildUsage) -> Self {
        Self {
            turns: u.turns,
            tool_calls: u.tool_calls,
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
        }
    }
}

/// What runs children: the runner, the child host, the slots and the limits.
#[derive(Clone)]
pub struct DelegationRuntime {
    /// Runs a child's loop.
    pub runner: Arc<dyn ChildAgentRunner>,
    /// The child host (over the child registry).
    pub child_host: Arc<dyn ToolHost>,
    /// FIFO slots.
    pub slots: DelegationSlots,
    /// Per child.
    pub limits: ChildLimits,
}

impl std::fmt::Debug for DelegationRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelegationRuntime")
            .field("runner", &self.runner.describe())
            .field("slots", &self.slots)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// `delegate_task`.
pub struct DelegateTaskTool {
    spec: ToolSpec,
    profiles: Arc<ProfileSet>,
    runtime: DelegationRuntime,
}

impl std::fmt::Debug for DelegateTaskTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelegateTaskTool")
            .field("profiles", &self.profiles.names())
            .field("runtime", &self.runtime)
            .finish()
    }
}

impl DelegateTaskTool {
    /// The tool over these profiles; its schema enumerates their names.
    #[must_use]
    pub fn new(profiles: Arc<ProfileSet>, runtime: DelegationRuntime) -> Self {
        let mut description = String::from(
            "Delegates a self-contained task to a sub-agent that works with its own, narrower \
             set of tools and returns its final report. Use it for broad searches and reviews \
             that would take many calls. Profiles:",
        );
        for profile in profiles.iter() {
            description.push_str(&format!("\n- {}: {}", profile.name, profile.description));
        }
        let mut spec =
            ToolSpec::typed::<DelegateTaskArgs, DelegateTaskOutput>(DELEGATE_TASK, description)
                .with_policy(ToolPolicy::Auto)
                .with_kind(ToolKind::ToolCall)
                .with_side_effect(SideEffect::Unknown);
        if let Some(profile) = spec.input_schema.pointer_mut("/properties/profile") {
            profile["enum"] = Value::from(profiles.names());
        }
        Self {
            spec,
            profiles,
            runtime,
        }
    }
}

/// A unique suffix per child in this process.
fn next_child() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[async_trait]
impl TypedTool for DelegateTaskTool {
    type Args = DelegateTaskArgs;
    type Output = DelegateTaskOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &DelegateTaskOutput) -> String {
        let u = &output.usage;
        format!(
            "{}\n\n(sub-agent `{}`: {} model requests, {} tool calls, {} prompt + {} completion tokens)",
            output.text.trim_end(),
            output.profile,
            u.turns,
            u.tool_calls,
            u.prompt_tokens,
            u.completion_tokens
        )
    }

    async fn run(
        &self,
        args: DelegateTaskArgs,
        ctx: ToolContext<'_>,
    ) -> Result<DelegateTaskOutput, ToolFailure> {
        // 1. profile and task.
        let Some(profile) = self.profiles.get(args.profile.trim()) else {
            return Err(ToolFailure::invalid(format!(
                "unknown profile `{}`; use one of: {}",
                args.profile,
                self.profiles.names().join(", ")
            )));
        };
        if args.task.trim().is_empty() {
            return Err(ToolFailure::invalid(
                "task is empty: say what the sub-agent should do",
            ));
        }
        // 2. a slot.
        let _slot = self
            .runtime
            .slots
            .acquire(ctx.turn.abort)
            .await
            .map_err(|_| {
                ToolFailure::new(
                    "the delegation was aborted while queued for a free sub-agent slot",
                )
            })?;
        // 3. the child context.
        let n = next_child();
        let thread = format!("{}/{}-{n}", ctx.turn.thread_id, profile.name);
        let mut child = ctx.turn.scope.nested_context(&thread, "child-turn-1");
        child.lists = child_lists(ctx.turn.scope.lists(), profile);
        child.approver = child.approver.take().map(|parent| {
            Arc::new(ChildApprover::new(parent, profile.name.clone()))
                as Arc<dyn kun_ports::ApprovalGate>
        });
        child.client_surface = ClientSurface::Api;
        child.active_skills.clear();
        // 4. the run.
        let child_profile = profile.child_profile();
        let run = ChildRun {
            profile: &child_profile,
            task: &args.task,
            context: args.context.as_deref(),
            host: self.runtime.child_host.as_ref(),
            ctx: &child,
            limits: self.runtime.limits,
        };
        tracing::debug!(profile = %profile.name, %thread, "delegating");
        match self.runtime.runner.run(run).await {
            Ok(outcome) => Ok(DelegateTaskOutput {
                profile: profile.name.clone(),
                text: outcome.text,
                usage: outcome.usage.into(),
            }),
            Err(failure) => {
                let code: ErrorCode = failure.kind.code();
                Err(ToolFailure::coded(
                    code,
                    format!("sub-agent `{}`: {}", profile.name, failure.message),
                )
                .with("profile", profile.name.clone())
                .with("usage", failure.usage.to_json()))
            }
        }
    }
}
