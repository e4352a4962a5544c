//! `ls`: one directory's entries — every entry, hidden and ignored ones included (it is a
//! listing, not a search) — sorted by name, paged.
//!
//! Symbolic links are reported as links. Their target's kind and size are shown only when the
//! sandbox resolves the link inside the workspace; a link pointing outside is never followed,
//! not even to stat it.

use super::cursor::QueryId;
use super::page::{ENTRY_OVERHEAD_BYTES, PageBudget, PageFields, PageReport, fill};
use super::walk::SearchRoot;
use crate::{Failure, Outcome, OutputLimits, finish, parse_args, schema_for};
use async_trait::async_trait;
use kun_ports::{
    PathAccess, SideEffect, Tool, ToolContext, ToolError, ToolPolicy, ToolResult, ToolSpec,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::fs::FileType;
use std::io;
use std::path::Path;

/// The tool's catalog name.
const NAME: &str = "ls";

const DESCRIPTION: &str = "List one directory's entries (not recursive), hidden and ignored ones included: name \
(directories end with /), kind (file, dir, symlink, other) and size in bytes, sorted by name. Symbolic links show \
their target's kind when it lies inside the workspace. Long listings come in pages (pass next_cursor back as cursor).";

/// Arguments of `ls`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LsArgs {
    /// Directory to list, relative to the workspace root (default: the workspace root).
    #[serde(default)]
    path: Option<String>,
    /// At most this many entries on this page.
    #[serde(default)]
    #[schemars(range(min = 1))]
    limit: Option<u64>,
    /// The next_cursor of the previous page, to get the next one (same path).
    #[serde(default)]
    cursor: Option<String>,
}

/// The `ls` tool: one directory's entries, sorted by name (bytewise), paged.
///
/// ```
/// use kun_builtin_tools::search::LsTool;
/// use kun_builtin_tools::testing::TestWorkspace;
/// use kun_ports::Tool;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ws = TestWorkspace::new();
/// ws.write("src/lib.rs", "fn main() {}\n");
/// ws.write(".env", "");
/// let result = LsTool::default().execute(serde_json::json!({}), ws.tool_context("call-1")).await.unwrap();
/// let names: Vec<_> = result.output["entries"].as_array().unwrap().iter().map(|e| e["name"].clone()).collect();
/// assert_eq!(names, [".env", "src/"]);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct LsTool {
    spec: ToolSpec,
    limits: OutputLimits,
}

impl Default for LsTool {
    fn default() -> Self {
        Self::new(OutputLimits::default())
    }
}

impl LsTool {
    /// An `ls` whose pages hold at most `limits.max_lines` entries and `limits.max_bytes` of
    /// output.
    #[must_use]
    pub fn new(limits: OutputLimits) -> Self {
        let spec = ToolSpec::new(NAME, DESCRIPTION, schema_for::<LsArgs>())
            .with_policy(ToolPolicy::Auto)
            .with_side_effect(SideEffect::ReadOnly);
        Self { spec, limits }
    }

    async fn run(&self, arguments: Value, ctx: &ToolContext<'_>) -> Outcome {
        let args: LsArgs = parse_args(NAME, arguments)?;
        let root = SearchRoot::resolve(ctx, args.path.as_deref())?;
        if !root.walk_root.is_dir() {
            return Err(Failure::invalid(format!(
                "{} is a file, not a directory; use read to see its contents, or ls its parent directory",
                root.display
            ))
            .with("path", root.display.clone()));
        }
        let id = QueryId::of(&json!({"tool": NAME, "root": root.display}));
        let offset = id.offset(args.cursor.as_deref())?;
        let budget = PageBudget::new(args.limit, self.limits);
        let dir = root.walk_root.clone();
        let raw = tokio::task::spawn_blocking(move || read_entries(&dir))
            .await
            .map_err(|err| Failure::new(format!("the listing stopped unexpectedly: {err}")))?
            .map_err(|err| Failure::new(format!("cannot list {}: {err}", root.display)))?;
        let total = raw.len();
        let (page, end) = fill(
            raw.into_iter().skip(offset),
            |raw| ENTRY_OVERHEAD_BYTES + raw.name.len(),
            budget,
        );
        let entries: Vec<EntryOut> = page
            .into_iter()
            .map(|raw| describe(raw, &root.walk_root, ctx))
            .collect();
        let report = PageReport {
            tool: NAME,
            noun: "entries",
            total,
            offset,
            shown: entries.len(),
            end,
            budget,
        };
        let page = report.into_fields(&id, "The directory is empty.", &[], false);
        serde_json::to_value(LsOutput {
            path: root.display,
            entries,
            page,
        })
        .map_err(|err| Failure::new(format!("could not encode the listing: {err}")))
    }
}

#[async_trait]
impl Tool for LsTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        Ok(finish(self.run(arguments, &ctx).await))
    }
}

/// What a directory entry is (the entry itself; links are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

impl EntryKind {
    fn of(file_type: FileType) -> Self {
        if file_type.is_symlink() {
            Self::Symlink
        } else if file_type.is_dir() {
            Self::Dir
        } else if file_type.is_file() {
            Self::File
        } else {
            Self::Other
        }
    }
}

/// What a symbolic link points at, as far as we may look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum LinkTarget {
    File,
    Dir,
    Other,
    /// The link is dangling.
    Missing,
    /// The target lies outside the workspace; it was not followed.
    OutsideWorkspace,
}

/// An entry as read from the directory, before symbolic links are resolved.
#[derive(Debug)]
struct RawEntry {
    name: Vec<u8>,
    kind: EntryKind,
    size: Option<u64>,
}

#[derive(Debug, Serialize)]
struct EntryOut {
    /// The name; directories end with `/`.
    name: String,
    kind: EntryKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: Option<LinkTarget>,
}

#[derive(Debug, Serialize)]
struct LsOutput {
    path: String,
    entries: Vec<EntryOut>,
    #[serde(flatten)]
    page: PageFields,
}

/// Every entry of `dir`, sorted by name bytes; sizes of regular files from the entry's own
/// metadata (no link is followed here).
fn read_entries(dir: &Path) -> io::Result<Vec<RawEntry>> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let Ok(entry) = entry else { continue };
        let kind = entry.file_type().map_or(EntryKind::Other, EntryKind::of);
        let size = match kind {
            EntryKind::File => entry.metadata().ok().map(|meta| meta.len()),
            _ => None,
        };
        entries.push(RawEntry {
            name: entry.file_name().into_encoded_bytes(),
            kind,
            size,
        });
    }
    entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// The output form of an entry; a symbolic link is stat'ed only when the sandbox resolves it
/// inside the workspace.
fn describe(raw: RawEntry, dir: &Path, ctx: &ToolContext<'_>) -> EntryOut {
    let name = String::from_utf8_lossy(&raw.name).into_owned();
    match raw.kind {
        EntryKind::Dir => EntryOut {
            name: format!("{name}/"),
            kind: raw.kind,
            size: None,
            target: None,
        },
        EntryKind::Symlink => {
            let (target, size) = link_target(&dir.join(&name), &raw.name, ctx);
            EntryOut {
                name,
                kind: raw.kind,
                size,
                target: Some(target),
            }
        }
        EntryKind::File | EntryKind::Other => EntryOut {
            name,
            kind: raw.kind,
            size: raw.size,
            target: None,
        },
    }
}

fn link_target(path: &Path, raw_name: &[u8], ctx: &ToolContext<'_>) -> (LinkTarget, Option<u64>) {
    // A name that is not UTF-8 cannot be handed to the resolver; do not follow it.
    let (Ok(_), Some(input)) = (std::str::from_utf8(raw_name), path.to_str()) else {
        return (LinkTarget::OutsideWorkspace, None);
    };
    let Ok(resolved) = ctx.resolve_path(input, PathAccess::Read) else {
        return (LinkTarget::OutsideWorkspace, None);
    };
    match std::fs::metadata(&resolved.physical) {
        Ok(meta) if meta.is_dir() => (LinkTarget::Dir, None),
        Ok(meta) if meta.is_file() => (LinkTarget::File, Some(meta.len())),
        Ok(_) => (LinkTarget::Other, None),
        Err(err) if err.kind() == io::ErrorKind::NotFound => (LinkTarget::Missing, None),
        Err(_) => (LinkTarget::Other, None),
    }
}
