//! The `edit` tool and its engine.
//!
//! The engine is pure and lives in [`engine`] ([`apply_edits`]), with the match views in
//! `fuzzy` ([`normalize_for_fuzzy_match`]), the not-found hint in [`closest`] and the
//! windowed diff in [`diff`]. The tool resolves the path for writing, takes the file's
//! mutation lock, reads without following a final symlink, applies the engine, writes
//! atomically, and answers with a unified diff.

pub mod closest;
pub mod diff;
pub mod engine;
mod fuzzy;
mod messages;

pub use closest::{ClosestRegion, Divergence};
pub use diff::{EditDiff, unified_diff};
pub use engine::{Applied, Edit, EditError, LineEnding, MatchKind, Replacement, apply_edits};
pub use fuzzy::normalize_for_fuzzy_match;

use super::mutation_queue::MutationQueue;
use super::{no_follow, path_argument, run_blocking};
use crate::{Outcome, finish, parse_args, schema_for};
use async_trait::async_trait;
use kun_ports::{
    EditGuard, PathAccess, ResolvedPath, SideEffect, Tool, ToolContext, ToolError, ToolKind,
    ToolPolicy, ToolResult, ToolSpec,
};
use messages::EditShape;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

const DESCRIPTION: &str = "Replace text in an existing file. Give `oldText` (copied exactly from a recent read, \
including indentation, and unique in the file) and `newText`; or `edits`, a list of {oldText, newText} pairs that \
are all located in the original file and must not overlap. If the exact text is not found, quotes, dashes, special \
spaces and trailing whitespace are matched loosely (indentation never is), and only the matched text changes. \
Line endings and a byte-order mark are preserved. Returns a unified diff. To create a file or replace it whole, \
use write.";

/// Arguments of `edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    /// The file to change: relative to the workspace root, or absolute inside it.
    path: String,
    /// The text to replace (single-edit form): copied exactly from the file, occurring once.
    #[serde(rename = "oldText", default)]
    old_text: Option<String>,
    /// What replaces `oldText` (single-edit form); may be empty to delete.
    #[serde(rename = "newText", default)]
    new_text: Option<String>,
    /// Several replacements in one call (instead of oldText/newText); each is located in the
    /// original file, and they must not overlap.
    #[serde(default)]
    edits: Option<Vec<EditItem>>,
}

/// One replacement of a multi-edit call.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditItem {
    /// The text to replace: copied exactly from the file, occurring once.
    #[serde(rename = "oldText")]
    old_text: String,
    /// What replaces it; may be empty to delete.
    #[serde(rename = "newText")]
    new_text: String,
}

/// The `edit` tool: `file_change`, `on-request`.
#[derive(Debug)]
pub struct EditTool {
    spec: ToolSpec,
    queue: Arc<MutationQueue>,
}

impl EditTool {
    /// An edit tool serialising its writes through `queue` (share it with `write`).
    #[must_use]
    pub fn new(queue: Arc<MutationQueue>) -> Self {
        let spec = ToolSpec::new("edit", DESCRIPTION, schema_for::<EditArgs>())
            .with_kind(ToolKind::FileChange)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::Unknown);
        Self { spec, queue }
    }

    async fn run(&self, arguments: Value, ctx: ToolContext<'_>) -> Outcome {
        let args: EditArgs = parse_args("edit", arguments)?;
        let (shape, pairs) = messages::edits_of(args.old_text, args.new_text, args.edits)?;
        if args.path.trim().is_empty() {
            return Err(crate::Failure::invalid(
                "path is empty: name the file to edit",
            ));
        }
        let resolved = ctx.resolve_path(&args.path, PathAccess::Write)?;
        let guard = self.queue.lock(&resolved.lexical).await?;
        run_blocking(move || {
            let outcome = edit_file(&resolved, &pairs, shape);
            drop(guard);
            outcome
        })
        .await
    }
}

/// Reads, edits and writes one file (the lock is held by the caller).
fn edit_file(resolved: &ResolvedPath, pairs: &[(String, String)], shape: EditShape) -> Outcome {
    let bytes = no_follow::read_file(&resolved.physical)?;
    let content = String::from_utf8(bytes).map_err(|_| {
        crate::Failure::new(format!(
            "{} is not UTF-8 text; edit changes text files only (use write to replace it whole)",
            resolved.relative
        ))
    })?;
    let edits: Vec<Edit<'_>> = pairs
        .iter()
        .map(|(old, new)| Edit {
            old_text: old.as_str(),
            new_text: new.as_str(),
        })
        .collect();
    let applied = apply_edits(&content, &edits)
        .map_err(|err| messages::failure(err, shape, &resolved.relative))?;
    let diff = unified_diff(
        &content,
        &applied.content,
        &applied.replacements,
        &resolved.relative,
    );
    no_follow::write_file(&resolved.physical, applied.content.as_bytes())?;
    let mut fuzzy: Vec<usize> = applied
        .replacements
        .iter()
        .filter(|r| r.kind == MatchKind::Fuzzy)
        .map(|r| r.edit_index)
        .collect();
    fuzzy.sort_unstable();
    Ok(json!({
        "path": resolved.lexical.display().to_string(),
        "relative_path": resolved.relative,
        "replacements": applied.replacements.len(),
        "bytes_written": applied.content.len(),
        "diff": diff.unified,
        "first_changed_line": diff.first_changed_line,
        "fuzzy_matched_edits": fuzzy,
    }))
}

#[async_trait]
impl Tool for EditTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The path and every non-blank `oldText` (top-level and in `edits`).
    fn edit_guard(&self, arguments: &Value) -> Option<EditGuard> {
        let path = path_argument(arguments)?;
        let top = arguments.get("oldText").and_then(Value::as_str);
        let listed = arguments
            .get("edits")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|item| item.get("oldText").and_then(Value::as_str));
        let old_texts = top
            .into_iter()
            .chain(listed)
            .filter(|t| !t.trim().is_empty())
            .map(str::to_owned)
            .collect();
        Some(EditGuard { path, old_texts })
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
