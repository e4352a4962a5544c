//! The `write` tool: creates or replaces a whole file with exactly the given content.
//!
//! The path is resolved for writing (sandbox-checked), parents are created, and the content is
//! written under the file's mutation lock through [`no_follow::write_file`]: a temporary file
//! in the same directory renamed over the target, never through a final symlink. Nothing is
//! preserved or added (no BOM, no line-ending conversion, no trailing newline).
//!
//! What the model reads ([`WriteOutput`]):
//!
//! | case | rendering |
//! |---|---|
//! | a new file | `created src/a.rs (12 lines, 340B)` |
//! | an existing text file | the unified diff against the old content |
//! | the same content again | `src/a.rs is unchanged (the content was already there)` |
//! | an existing text file, diff over [`MAX_DIFF_BYTES`] | `replaced src/a.rs (12 lines, 340B; +12 −30 lines)` |
//! | an existing binary file (or one over 1 MiB) | `replaced src/a.rs (12 lines, 340B)` |
//!
//! A new file gets no diff: every line would be an addition, and the model wrote them.

use super::mutation_queue::MutationQueue;
use super::no_follow::{self, WriteKind};
use super::{non_blank, run_blocking};
use crate::Failure;
use crate::output::format_size;
use async_trait::async_trait;
use kun_ports::{
    FileRevision, PathAccess, ReadObservation, ResolvedPath, SideEffect, ToolContext,
    ToolHostContext, ToolKind, ToolPolicy, ToolRole, ToolSpec, TypedTool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use similar::{ChangeTag, TextDiff};
use std::sync::Arc;

const DESCRIPTION: &str = "Create a file, or replace an existing one, with exactly the given content (parent \
directories are created). To change part of an existing file, prefer edit. For large files, write a short first \
version and extend it with edit calls, so no single call is cut off by your output limit.";

/// A replacement's diff longer than this is summarised instead.
pub const MAX_DIFF_BYTES: usize = 32 * 1024;

/// An existing file larger than this is not read for a diff.
const MAX_DIFFED_FILE_BYTES: u64 = 1024 * 1024;

/// Lines of context in a replacement's diff (as `edit`).
const CONTEXT: usize = 4;

/// Arguments of `write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The file to write: relative to the workspace root, or absolute inside it.
    path: String,
    /// The complete new content of the file (may be empty).
    content: String,
}

/// What happened to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteChange {
    /// There was no file.
    Created,
    /// An existing file was replaced by other content.
    Replaced,
    /// The file already held exactly this content (it was rewritten anyway).
    Unchanged,
}

/// What a successful `write` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WriteOutput {
    /// The file, relative to the workspace root.
    pub path: String,
    /// What happened to it.
    pub change: WriteChange,
    /// Lines in the new content.
    pub lines: usize,
    /// Bytes written.
    pub bytes_written: usize,
    /// For a replaced text file: the unified diff against the old content (left out when
    /// longer than [`MAX_DIFF_BYTES`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// For a replaced file: lines added and removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines_changed: Option<LinesChanged>,
    /// The file's revision after the write (`<size>:<mtime in ns>`).
    pub revision: String,
}

/// Lines added and removed by a replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LinesChanged {
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
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
        let spec = ToolSpec::typed::<WriteArgs, WriteOutput>("write", DESCRIPTION)
            .with_kind(ToolKind::FileChange)
            .with_policy(ToolPolicy::OnRequest)
            .with_side_effect(SideEffect::Unknown)
            .with_role(ToolRole::FileEditor);
        Self { spec, queue }
    }
}

/// Lines as editors count them: a trailing newline does not start another line.
fn count_lines(text: &str) -> usize {
    text.lines().count()
}

/// Writes the file (the lock is held by the caller) and describes the change.
fn write_file(resolved: &ResolvedPath, content: &str) -> Result<WriteOutput, Failure> {
    // The old content, for the diff; an unreadable, absent or large file has none.
    let old = std::fs::symlink_metadata(&resolved.physical)
        .ok()
        .filter(|meta| meta.len() <= MAX_DIFFED_FILE_BYTES)
        .and_then(|_| no_follow::read_file(&resolved.physical).ok());
    let kind = no_follow::write_file(&resolved.physical, content.as_bytes())
        .map_err(|err| err.named(&resolved.relative))?;
    let revision = std::fs::symlink_metadata(&resolved.physical)
        .map(|meta| FileRevision::of(&meta).to_string())
        .unwrap_or_default();
    let mut output = WriteOutput {
        path: resolved.relative.clone(),
        change: WriteChange::Created,
        lines: count_lines(content),
        bytes_written: content.len(),
        diff: None,
        lines_changed: None,
        revision,
    };
    if kind == WriteKind::Created {
        return Ok(output);
    }
    if old.as_deref() == Some(content.as_bytes()) {
        output.change = WriteChange::Unchanged;
        return Ok(output);
    }
    output.change = WriteChange::Replaced;
    // A binary, large or unreadable old file gets no diff and no line counts.
    if let Some(Ok(old)) = old.as_deref().map(std::str::from_utf8) {
        let diff = TextDiff::from_lines(old, content);
        let (mut added, mut removed) = (0, 0);
        for change in diff.iter_all_changes() {
            match change.tag() {
                ChangeTag::Insert => added += 1,
                ChangeTag::Delete => removed += 1,
                ChangeTag::Equal => {}
            }
        }
        output.lines_changed = Some(LinesChanged { added, removed });
        let label = &resolved.relative;
        let unified = diff
            .unified_diff()
            .context_radius(CONTEXT)
            .header(&format!("a/{label}"), &format!("b/{label}"))
            .to_string();
        output.diff = (unified.len() <= MAX_DIFF_BYTES).then_some(unified);
    }
    Ok(output)
}

#[async_trait]
impl TypedTool for WriteTool {
    type Args = WriteArgs;
    type Output = WriteOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// See the module docs.
    fn render(&self, output: &WriteOutput) -> String {
        let size = format_size(output.bytes_written as u64);
        match (output.change, &output.diff, output.lines_changed) {
            (WriteChange::Created, _, _) => {
                format!("created {} ({} lines, {size})", output.path, output.lines)
            }
            (WriteChange::Unchanged, _, _) => format!(
                "{} is unchanged (the content was already there)",
                output.path
            ),
            (WriteChange::Replaced, Some(diff), _) => diff.trim_end_matches('\n').to_owned(),
            (WriteChange::Replaced, None, changed) => {
                let mut text = format!("replaced {} ({} lines, {size}", output.path, output.lines);
                if let Some(changed) = changed {
                    text.push_str(&format!("; +{} −{} lines", changed.added, changed.removed));
                }
                text.push(')');
                text
            }
        }
    }

    fn write_paths(&self, args: &WriteArgs) -> Vec<String> {
        non_blank(&args.path).into_iter().collect()
    }

    /// The file as written: its whole content and new revision, so an edit right after
    /// needs no read.
    fn observed_read(
        &self,
        args: &WriteArgs,
        output: &WriteOutput,
        _ctx: &ToolHostContext,
    ) -> Option<ReadObservation> {
        Some(ReadObservation {
            path: non_blank(&args.path)?.into(),
            content: Some(args.content.clone()),
            partial: false,
            revision: output.revision.parse().ok(),
        })
    }

    async fn run(&self, args: WriteArgs, ctx: ToolContext<'_>) -> Result<WriteOutput, Failure> {
        if args.path.trim().is_empty() {
            return Err(Failure::invalid("path is empty: name the file to write"));
        }
        let resolved = ctx.resolve_path(&args.path, PathAccess::Write)?;
        let guard = self.queue.lock(&resolved.lexical).await?;
        run_blocking(move || {
            let written = write_file(&resolved, &args.content);
            drop(guard);
            written
        })
        .await
    }
}
