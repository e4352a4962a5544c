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
use super::{no_follow, non_blank, run_blocking};
use crate::Failure;
use async_trait::async_trait;
use kun_ports::{
    EditGuard, FileRevision, PathAccess, ReadObservation, ResolvedPath, SideEffect, ToolContext,
    ToolHostContext, ToolKind, ToolPolicy, ToolRole, ToolSpec, TypedTool,
};
use messages::EditShape;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
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
pub struct EditArgs {
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
pub struct EditItem {
    /// The text to replace: copied exactly from the file, occurring once.
    #[serde(rename = "oldText")]
    old_text: String,
    /// What replaces it; may be empty to delete.
    #[serde(rename = "newText")]
    new_text: String,
}

/// What a successful `edit` returns; the model reads `diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EditOutput {
    /// The file, relative to the workspace root.
    pub path: String,
    /// How many replacements were made.
    pub replacements: usize,
    /// The unified diff (`--- a/<path>`, `+++ b/<path>`, hunks with 4 lines of context).
    pub diff: String,
    /// The first changed line in the new file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_changed_line: Option<usize>,
    /// Indices of the edits matched only after loosening quotes, dashes, special spaces and
    /// trailing whitespace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fuzzy_matched_edits: Vec<usize>,
    /// The file's revision after the edit (`<size>:<mtime in ns>`).
    pub revision: String,
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
        let spec = ToolSpec::typed::<EditArgs, EditOutput>("edit", DESCRIPTION)
            .with_kind(ToolKind::FileChange)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::Unknown)
            .with_role(ToolRole::FileEditor);
        Self { spec, queue }
    }
}

/// Reads, edits and writes one file (the lock is held by the caller).
fn edit_file(
    resolved: &ResolvedPath,
    pairs: &[(String, String)],
    shape: EditShape,
) -> Result<EditOutput, Failure> {
    let bytes =
        no_follow::read_file(&resolved.physical).map_err(|err| err.named(&resolved.relative))?;
    let content = String::from_utf8(bytes).map_err(|_| {
        Failure::new(format!(
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
    no_follow::write_file(&resolved.physical, applied.content.as_bytes())
        .map_err(|err| err.named(&resolved.relative))?;
    let revision = std::fs::symlink_metadata(&resolved.physical)
        .map(|meta| FileRevision::of(&meta).to_string())
        .unwrap_or_default();
    let mut fuzzy: Vec<usize> = applied
        .replacements
        .iter()
        .filter(|r| r.kind == MatchKind::Fuzzy)
        .map(|r| r.edit_index)
        .collect();
    fuzzy.sort_unstable();
    Ok(EditOutput {
        path: resolved.relative.clone(),
        replacements: applied.replacements.len(),
        diff: diff.unified,
        first_changed_line: diff.first_changed_line,
        fuzzy_matched_edits: fuzzy,
        revision,
    })
}

#[async_trait]
impl TypedTool for EditTool {
    type Args = EditArgs;
    type Output = EditOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The unified diff, and a note when some edit matched only loosely.
    fn render(&self, output: &EditOutput) -> String {
        let mut text = output.diff.trim_end_matches('\n').to_owned();
        if !output.fuzzy_matched_edits.is_empty() {
            let which: Vec<String> = output
                .fuzzy_matched_edits
                .iter()
                .map(ToString::to_string)
                .collect();
            let _ = write!(
                text,
                "\n(edit {} matched after loosening quotes, dashes, spaces or trailing \
                 whitespace; only the matched text changed)",
                which.join(", ")
            );
        }
        text
    }

    /// The path and every non-blank `oldText` (top-level and in `edits`).
    fn edit_guard(&self, args: &EditArgs) -> Option<EditGuard> {
        let path = non_blank(&args.path)?;
        let listed = args.edits.iter().flatten().map(|item| &item.old_text);
        let old_texts = args
            .old_text
            .iter()
            .chain(listed)
            .filter(|t| !t.trim().is_empty())
            .cloned()
            .collect();
        Some(EditGuard { path, old_texts })
    }

    fn write_paths(&self, args: &EditArgs) -> Vec<String> {
        non_blank(&args.path).into_iter().collect()
    }

    /// The file as the edit left it: its new revision (the text is not kept; the tracker
    /// needs only the revision to let the next edit through).
    fn observed_read(
        &self,
        args: &EditArgs,
        output: &EditOutput,
        _ctx: &ToolHostContext,
    ) -> Option<ReadObservation> {
        Some(ReadObservation {
            path: non_blank(&args.path)?.into(),
            content: None,
            partial: false,
            revision: Some(output.revision.parse().ok()?),
        })
    }

    async fn run(&self, args: EditArgs, ctx: ToolContext<'_>) -> Result<EditOutput, Failure> {
        let (shape, pairs) = messages::edits_of(args.old_text, args.new_text, args.edits)?;
        if args.path.trim().is_empty() {
            return Err(Failure::invalid("path is empty: name the file to edit"));
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
