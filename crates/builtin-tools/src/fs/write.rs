//! The `write` tool: creates or replaces a whole file with exactly the given content.
//!
//! The path is resolved for writing (sandbox-checked), parents are created, and the content is
//! written under the file's mutation lock through [`no_follow::write_file`]: a temporary file
//! in the same directory renamed over the target, never through a final symlink. Nothing is
//! preserved or added (no BOM, no line-ending conversion, no trailing newline).

use super::mutation_queue::MutationQueue;
use super::no_follow::{self, WriteKind};
use super::{path_argument, run_blocking};
use crate::{Failure, Outcome, finish, parse_args, schema_for};
use async_trait::async_trait;
use kun_ports::{
    PathAccess, SideEffect, Tool, ToolContext, ToolError, ToolKind, ToolPolicy, ToolResult,
    ToolSpec,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

const DESCRIPTION: &str = "Create a file, or replace an existing one, with exactly the given content (parent \
directories are created). To change part of an existing file, prefer edit. For large files, write a short first \
version and extend it with edit calls, so no single call is cut off by your output limit.";

/// Arguments of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    /// The file to write: relative to the workspace root, or absolute inside it.
    path: String,
    /// The complete new content of the file (may be empty).
    content: String,
}

/// The `write` tool: `file_change`, `on-request`.
#[derive(Debug)]
pub struct WriteTool {
    spec: ToolSpec,
    queue: Arc<MutationQueue>,
}

impl WriteTool {
    /// A write tool serialising its writes through `queue` (share it with `edit`).
    #[must_use]
    pub fn new(queue: Arc<MutationQueue>) -> Self {
        let spec = ToolSpec::new("write", DESCRIPTION, schema_for::<WriteArgs>())
            .with_kind(ToolKind::FileChange)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::Unknown);
        Self { spec, queue }
    }

    async fn run(&self, arguments: Value, ctx: ToolContext<'_>) -> Outcome {
        let args: WriteArgs = parse_args("write", arguments)?;
        if args.path.trim().is_empty() {
            return Err(Failure::invalid("path is empty: name the file to write"));
        }
        let resolved = ctx.resolve_path(&args.path, PathAccess::Write)?;
        let guard = self.queue.lock(&resolved.lexical).await?;
        run_blocking(move || {
            let written = no_follow::write_file(&resolved.physical, args.content.as_bytes());
            drop(guard);
            let kind = written?;
            Ok(json!({
                "path": resolved.lexical.display().to_string(),
                "relative_path": resolved.relative,
                "bytes_written": args.content.len(),
                "created": kind == WriteKind::Created,
            }))
        })
        .await
    }
}

#[async_trait]
impl Tool for WriteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn write_paths(&self, arguments: &Value) -> Vec<String> {
        path_argument(arguments).into_iter().collect()
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        Ok(finish(self.run(arguments, ctx).await))
    }
}
