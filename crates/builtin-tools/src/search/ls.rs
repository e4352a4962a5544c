//! `ls`: one directory's entries — every entry, hidden and ignored ones included (it is a
//! listing, not a search) — sorted by name, paged.
//!
//! Symbolic links are reported as links. Their target's kind and size are shown only when the
//! sandbox resolves the link inside the workspace; a link pointing outside is never followed,
//! not even to stat it.
//!
//! The model reads one name per line, like `ls -1p`: directories end with `/`, links read
//! `name -> dir/`, `name -> file`, `name -> (missing)` or `name -> (outside the workspace)`.
//! Sizes and kinds are in the structured output.

use super::cursor::{QueryId, Resume};
use super::page::{ENTRY_OVERHEAD_BYTES, PageBudget, PageFields, PageReport, fill};
use super::walk::SearchRoot;
use crate::fs::beneath::Anchored;
use crate::{Failure, OutputLimits};
use async_trait::async_trait;
use kun_ports::{PathAccess, SideEffect, ToolContext, ToolPolicy, ToolSpec, TypedTool};
use rustix::fs::{AtFlags, OFlags};
use rustix::io::Errno;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
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
pub struct LsArgs {
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
/// assert_eq!(result.model_text(), ".env\nsrc/");
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
        let spec = ToolSpec::typed::<LsArgs, LsOutput>(NAME, DESCRIPTION)
            .with_policy(ToolPolicy::Auto)
            .with_side_effect(SideEffect::ReadOnly);
        Self { spec, limits }
    }

    async fn list(&self, args: LsArgs, ctx: &ToolContext<'_>) -> Result<LsOutput, Failure> {
        let root = SearchRoot::resolve(ctx, args.path.as_deref())?;
        if !root.walk_root.is_dir() {
            return Err(Failure::invalid(format!(
                "{} is a file, not a directory; use read to see its contents, or ls its parent directory",
                root.display
            ))
            .with("path", root.display.clone()));
        }
        let id = QueryId::of(&json!({"tool": NAME, "root": root.display}));
        let resume = id.resume(args.cursor.as_deref())?;
        let budget = PageBudget::new(args.limit, self.limits);
        let dir = root.walk_root.clone();
        let anchored = std::sync::Arc::clone(&root.anchored);
        let raw = tokio::task::spawn_blocking(move || read_entries(&anchored, &dir))
            .await
            .map_err(|err| Failure::new(format!("the listing stopped unexpectedly: {err}")))?
            .map_err(|err| Failure::new(format!("cannot list {}: {err}", root.display)))?;
        let total = raw.len();
        // Resume after the last name shown, in the directory as it is now.
        let start = resume
            .as_ref()
            .map_or(0, |r| raw.partition_point(|entry| entry.name <= r.after));
        let (page, end) = fill(
            raw.into_iter().skip(start),
            |raw| ENTRY_OVERHEAD_BYTES + raw.name.len(),
            budget,
        );
        let offset = resume.as_ref().map_or(0, |r| r.shown);
        let next = page.last().map(|last| Resume {
            after: last.name.clone(),
            line: 0,
            shown: offset + page.len(),
        });
        let entries: Vec<LsEntry> = page
            .into_iter()
            .map(|raw| describe(raw, &root.walk_root, ctx))
            .collect();
        let report = PageReport {
            tool: NAME,
            noun: "entries",
            offset,
            shown: entries.len(),
            known_total: Some(total),
            end,
            budget,
            next,
        };
        let page = report.into_fields(&id, "the directory is empty", &[]);
        Ok(LsOutput {
            path: root.display,
            entries,
            page,
        })
    }
}

#[async_trait]
impl TypedTool for LsTool {
    type Args = LsArgs;
    type Output = LsOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &LsOutput) -> String {
        render(output)
    }

    async fn run(&self, args: LsArgs, ctx: ToolContext<'_>) -> Result<LsOutput, Failure> {
        self.list(args, &ctx).await
    }
}

/// One name per line (see the module docs), then the notice.
fn render(output: &LsOutput) -> String {
    let mut text = String::new();
    for entry in &output.entries {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&entry.name);
        let target = match entry.target {
            None => continue,
            Some(LinkTarget::Dir) => "dir/",
            Some(LinkTarget::File) => "file",
            Some(LinkTarget::Other) => "(not a file or directory)",
            Some(LinkTarget::Missing) => "(missing)",
            Some(LinkTarget::OutsideWorkspace) => "(outside the workspace)",
        };
        text.push_str(" -> ");
        text.push_str(target);
    }
    output.page.append_notice(&mut text);
    text
}

/// What a directory entry is (the entry itself; links are not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A device, socket or pipe.
    Other,
}

impl EntryKind {
    fn of_raw(file_type: rustix::fs::FileType) -> Self {
        match file_type {
            rustix::fs::FileType::Symlink => Self::Symlink,
            rustix::fs::FileType::Directory => Self::Dir,
            rustix::fs::FileType::RegularFile => Self::File,
            _ => Self::Other,
        }
    }
}

/// What a symbolic link points at, as far as we may look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkTarget {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// Something else.
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

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LsEntry {
    /// The name; directories end with `/`.
    pub name: String,
    /// What it is (links are not followed).
    pub kind: EntryKind,
    /// Size in bytes of a file (or of a link's file target inside the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// For a link: what it points at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<LinkTarget>,
}

/// What `ls` returns: a page of one directory's entries, sorted by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LsOutput {
    /// The directory, relative to the workspace root (`.` for the root).
    pub path: String,
    /// The entries on this page.
    pub entries: Vec<LsEntry>,
    /// Paging: the total, the next cursor, the notice.
    #[serde(flatten)]
    pub page: PageFields,
}

/// Every entry of `dir`, sorted by name bytes; sizes of regular files from the entry's own
/// metadata (no link is followed here). The directory is opened from the root's handle
/// through no link, so a directory swapped for a link is refused, never listed.
fn read_entries(anchored: &Anchored, dir: &Path) -> io::Result<Vec<RawEntry>> {
    let fd = anchored
        .open(dir, OFlags::RDONLY | OFlags::DIRECTORY)
        .map_err(|errno| match errno {
            Errno::LOOP | Errno::XDEV => io::Error::new(
                io::ErrorKind::PermissionDenied,
                "the directory (or one above it) became a symbolic link after the path was \
                 checked; refusing to follow it",
            ),
            other => io::Error::from(other),
        })?;
    let mut entries = Vec::new();
    for entry in rustix::fs::Dir::read_from(&fd)? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let stat = rustix::fs::statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW).ok();
        let kind = stat.map_or(EntryKind::Other, |stat| {
            EntryKind::of_raw(rustix::fs::FileType::from_raw_mode(stat.st_mode))
        });
        let size = match (kind, stat) {
            (EntryKind::File, Some(stat)) => u64::try_from(stat.st_size).ok(),
            _ => None,
        };
        entries.push(RawEntry {
            name: name.to_vec(),
            kind,
            size,
        });
    }
    entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// The output form of an entry; a symbolic link is stat'ed only when the sandbox resolves it
/// inside the workspace.
fn describe(raw: RawEntry, dir: &Path, ctx: &ToolContext<'_>) -> LsEntry {
    let name = String::from_utf8_lossy(&raw.name).into_owned();
    match raw.kind {
        EntryKind::Dir => LsEntry {
            name: format!("{name}/"),
            kind: raw.kind,
            size: None,
            target: None,
        },
        EntryKind::Symlink => {
            let (target, size) = link_target(&dir.join(&name), &raw.name, ctx);
            LsEntry {
                name,
                kind: raw.kind,
                size,
                target: Some(target),
            }
        }
        EntryKind::File | EntryKind::Other => LsEntry {
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
    // The checked target, looked at from the root's handle through no link.
    let stat = crate::fs::beneath(&resolved, ctx)
        .open(OFlags::PATH)
        .and_then(|fd| rustix::fs::fstat(&fd));
    match stat {
        Ok(stat) => match rustix::fs::FileType::from_raw_mode(stat.st_mode) {
            rustix::fs::FileType::Directory => (LinkTarget::Dir, None),
            rustix::fs::FileType::RegularFile => {
                (LinkTarget::File, u64::try_from(stat.st_size).ok())
            }
            // The resolver follows every link that leads somewhere: one left at the end of
            // the checked path dangles.
            rustix::fs::FileType::Symlink => (LinkTarget::Missing, None),
            _ => (LinkTarget::Other, None),
        },
        Err(Errno::NOENT) => (LinkTarget::Missing, None),
        Err(Errno::LOOP | Errno::XDEV) => (LinkTarget::OutsideWorkspace, None),
        Err(_) => (LinkTarget::Other, None),
    }
}
