//! `create_plan {title, content, path?, operation_id?}`: the one file change a planning turn
//! may make — the reserved plan file.
//!
//! Listed only in a plan context (plan mode, or a plan context on the turn). It writes one
//! Markdown file that is a direct child of the plan directory: the turn's
//! [`PlanContext`](kun_ports::PlanContext) directory when it has one, else the configured one
//! (default `.kun/plans`) under the primary workspace root. Everything else is refused with a
//! code and nothing is written:
//!
//! | the call | code |
//! |---|---|
//! | `path` absolute, with a `..` segment, not ending in `.md`, not a direct child of the plan directory, or a hidden file name | `invalid_arguments` |
//! | `operation_id` other than the plan context's, or given without a plan operation | `invalid_arguments` |
//! | a plan directory outside the primary workspace root, or reached through a symbolic link | `sandbox_write_blocked` |
//! | a blank title or content, content over 512 KiB | `invalid_arguments` |
//!
//! Paths are normalised first (`\` → `/`, repeated `/` and `./` dropped). The file is written
//! beneath a directory handle opened without following symbolic links at any step, to a
//! temporary name renamed into place: a link planted at the target or on the way cannot
//! redirect the write.

mod target;

use crate::limits::{MAX_PLAN_BYTES, MAX_QUESTION_CHARS, blank_or_long};
use async_trait::async_trait;
use kun_ports::{
    ToolContext, ToolFailure, ToolHostContext, ToolKind, ToolPolicy, ToolRole, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
pub use target::{PlanTarget, normalise_relative};

/// The default plan directory, relative to the workspace root.
pub const DEFAULT_PLAN_DIR: &str = ".kun/plans";

/// Arguments of `create_plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePlanArgs {
    /// The plan's title (also the file name when `path` is absent).
    pub title: String,
    /// The plan, in Markdown.
    pub content: String,
    /// The plan file, relative to the workspace: a `.md` file directly in the plan directory.
    #[serde(default)]
    pub path: Option<String>,
    /// The plan operation this plan belongs to, when the client gave one.
    #[serde(default)]
    pub operation_id: Option<String>,
}

/// What `create_plan` wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CreatePlanOutput {
    /// The plan file, relative to the workspace root.
    pub path: String,
    /// Bytes written.
    pub bytes: u64,
    /// Whether an earlier plan file was replaced.
    pub replaced: bool,
}

/// `create_plan` (see the module docs).
pub struct CreatePlan {
    spec: ToolSpec,
    plan_dir: PathBuf,
}

impl CreatePlan {
    /// The tool writing into `plan_dir` (relative to the workspace root) when the turn has no
    /// plan context of its own.
    #[must_use]
    pub fn new(plan_dir: impl Into<PathBuf>) -> Self {
        let spec = ToolSpec::typed::<CreatePlanArgs, CreatePlanOutput>(
            "create_plan",
            "Save the implementation plan (Markdown) as the reserved plan file: the one file a \
             planning turn may write. Call it again to revise the plan.",
        )
        .with_kind(ToolKind::FileChange)
        .with_policy(ToolPolicy::Auto)
        .with_role(ToolRole::PlanWriter);
        Self {
            spec,
            plan_dir: plan_dir.into(),
        }
    }
}

impl Default for CreatePlan {
    fn default() -> Self {
        Self::new(DEFAULT_PLAN_DIR)
    }
}

/// The Markdown written: the title as a heading unless the content starts with one.
fn document(title: &str, content: &str) -> String {
    let body = content.trim_end();
    if body.trim_start().starts_with("# ") {
        format!("{body}\n")
    } else {
        format!("# {title}\n\n{body}\n")
    }
}

#[async_trait]
impl TypedTool for CreatePlan {
    type Args = CreatePlanArgs;
    type Output = CreatePlanOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn should_advertise(&self, ctx: &ToolHostContext) -> bool {
        ctx.is_plan_context()
    }

    fn render(&self, output: &CreatePlanOutput) -> String {
        let verb = if output.replaced { "Updated" } else { "Saved" };
        format!("{verb} the plan: {} ({} bytes).", output.path, output.bytes)
    }

    async fn run(
        &self,
        args: CreatePlanArgs,
        ctx: ToolContext<'_>,
    ) -> Result<CreatePlanOutput, ToolFailure> {
        let title = args.title.trim();
        if let Some(problem) = blank_or_long(title, MAX_QUESTION_CHARS) {
            return Err(ToolFailure::invalid(format!("title {problem}")));
        }
        if args.content.trim().is_empty() {
            return Err(ToolFailure::invalid("content is empty: write the plan"));
        }
        let text = document(title, &args.content);
        if text.len() > MAX_PLAN_BYTES {
            return Err(ToolFailure::invalid(format!(
                "the plan is {} bytes; keep it under {MAX_PLAN_BYTES}",
                text.len()
            )));
        }
        if let Some(given) = &args.operation_id {
            match ctx.turn.plan {
                Some(plan) if plan.operation_id == *given => {}
                Some(plan) => {
                    return Err(ToolFailure::invalid(format!(
                        "operation_id \"{given}\" is not this turn's plan operation \
                         (\"{}\"); leave it out or use that one",
                        plan.operation_id
                    )));
                }
                None => {
                    return Err(ToolFailure::invalid(
                        "operation_id was given, but this turn has no plan operation; leave \
                         it out",
                    ));
                }
            }
        }
        let target = PlanTarget::resolve(
            ctx.turn.primary_root(),
            ctx.turn
                .plan
                .map_or(self.plan_dir.as_path(), |p| &p.plan_dir),
            title,
            args.path.as_deref(),
        )?;
        let replaced = target.write(text.as_bytes())?;
        Ok(CreatePlanOutput {
            path: target.relative_path(),
            bytes: text.len() as u64,
            replaced,
        })
    }
}
