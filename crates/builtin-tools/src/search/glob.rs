//! `glob` (and its hidden alias `find`): list files matching a glob, by ripgrep's rules
//! (`rg --files -g <pattern> --sort path`).

use super::cursor::{QueryId, Resume};
use super::handles::FileCheck;
use super::page::{ENTRY_OVERHEAD_BYTES, PageBudget, PageFields, PageFill, PageReport};
use super::walk::{SearchRoot, is_reportable_file, path_key, sorted_walker};
use crate::fs::beneath::Anchored;
use crate::{Failure, OutputLimits};
use async_trait::async_trait;
use ignore::Walk;
use kun_ports::{AbortSignal, SideEffect, ToolContext, ToolPolicy, ToolSpec, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::Path;

/// The name cursors are issued under: `glob` and `find` accept each other's cursors.
const QUERY_FAMILY: &str = "glob";

const GLOB_DESCRIPTION: &str = "Find files by name with a glob (gitignore syntax, as `rg --files -g`): `*.rs` or \
`Cargo.toml` match file names at any depth, `src/**/*.ts` is matched against the workspace-relative path, `{a,b}` \
alternates. \
Hidden directories and files ignored by .gitignore/.ignore/.rgignore are skipped unless the glob names them. Returns \
workspace-relative paths sorted by path; long results come in pages (pass next_cursor back as cursor).";

const FIND_DESCRIPTION: &str = "Alias of glob: find files by name with a glob, by ripgrep's rules.";

/// Arguments of `glob` and `find`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// The glob: `*.rs` matches file names at any depth; a pattern with `/` (`src/**/*.ts`) is matched against the workspace-relative path; a leading `!` excludes.
    pattern: String,
    /// Directory to search, relative to the workspace root (default: the whole workspace).
    #[serde(default)]
    path: Option<String>,
    /// At most this many paths on this page.
    #[serde(default)]
    #[schemars(range(min = 1))]
    limit: Option<u64>,
    /// The next_cursor of the previous page, to get the next one (same other arguments).
    #[serde(default)]
    cursor: Option<String>,
}

/// The `glob` tool: files whose path matches a glob, sorted by path, paged.
///
/// ```
/// use kun_builtin_tools::search::GlobTool;
/// use kun_builtin_tools::testing::TestWorkspace;
/// use kun_ports::Tool;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ws = TestWorkspace::new();
/// ws.write("src/lib.rs", "");
/// ws.write("README.md", "");
/// let result = GlobTool::default()
///     .execute(serde_json::json!({"pattern": "*.rs"}), ws.tool_context("call-1"))
///     .await
///     .unwrap();
/// assert_eq!(result.output["files"], serde_json::json!(["src/lib.rs"]));
/// assert_eq!(result.model_text(), "src/lib.rs");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct GlobTool {
    spec: ToolSpec,
    limits: OutputLimits,
}

impl Default for GlobTool {
    fn default() -> Self {
        Self::new(OutputLimits::default())
    }
}

impl GlobTool {
    /// A `glob` whose pages hold at most `limits.max_lines` paths and `limits.max_bytes` of
    /// output.
    #[must_use]
    pub fn new(limits: OutputLimits) -> Self {
        Self {
            spec: spec("glob", GLOB_DESCRIPTION),
            limits,
        }
    }
}

#[async_trait]
impl TypedTool for GlobTool {
    type Args = GlobArgs;
    type Output = GlobOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &GlobOutput) -> String {
        render(output)
    }

    async fn run(&self, args: GlobArgs, ctx: ToolContext<'_>) -> Result<GlobOutput, Failure> {
        list(&self.spec.name, self.limits, args, &ctx).await
    }
}

/// The `find` tool: exactly [`GlobTool`] under another name, callable but not advertised to
/// the model (`model_advertised = false`).
#[derive(Debug, Clone)]
pub struct FindTool {
    spec: ToolSpec,
    limits: OutputLimits,
}

impl Default for FindTool {
    fn default() -> Self {
        Self::new(OutputLimits::default())
    }
}

impl FindTool {
    /// A `find` with the same paging as [`GlobTool::new`].
    #[must_use]
    pub fn new(limits: OutputLimits) -> Self {
        Self {
            spec: spec("find", FIND_DESCRIPTION).hidden(),
            limits,
        }
    }
}

#[async_trait]
impl TypedTool for FindTool {
    type Args = GlobArgs;
    type Output = GlobOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &GlobOutput) -> String {
        render(output)
    }

    async fn run(&self, args: GlobArgs, ctx: ToolContext<'_>) -> Result<GlobOutput, Failure> {
        list(&self.spec.name, self.limits, args, &ctx).await
    }
}

fn spec(name: &str, description: &str) -> ToolSpec {
    ToolSpec::typed::<GlobArgs, GlobOutput>(name, description)
        .with_policy(ToolPolicy::Auto)
        .with_side_effect(SideEffect::ReadOnly)
}

/// What `glob` and `find` return: a page of workspace-relative paths, sorted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GlobOutput {
    /// The files on this page, relative to the workspace root.
    pub files: Vec<String>,
    /// Paging: the total, the next cursor, the notice.
    #[serde(flatten)]
    pub page: PageFields,
}

/// One path per line, then the notice.
fn render(output: &GlobOutput) -> String {
    let mut text = output.files.join("\n");
    output.page.append_notice(&mut text);
    text
}

async fn list(
    tool: &str,
    limits: OutputLimits,
    args: GlobArgs,
    ctx: &ToolContext<'_>,
) -> Result<GlobOutput, Failure> {
    if args.pattern.trim().is_empty() {
        return Err(Failure::invalid(
            "pattern is empty; pass a glob such as *.rs or src/**/*.ts",
        ));
    }
    let root = SearchRoot::resolve(ctx, args.path.as_deref())?;
    let id =
        QueryId::of(&json!({"tool": QUERY_FAMILY, "pattern": args.pattern, "root": root.display}));
    let resume = id.resume(args.cursor.as_deref())?;
    let budget = PageBudget::new(args.limit, limits);
    let walker = sorted_walker(
        &root,
        Some(&args.pattern),
        resume.as_ref().map(|r| r.after.clone()),
        FileCheck::Lookup,
    )?;
    let walk_root = root.walk_root.clone();
    let anchored = std::sync::Arc::clone(&root.anchored);
    let abort = ctx.turn.abort.clone();
    let after = resume.as_ref().map(|r| r.after.clone());
    let listing = tokio::task::spawn_blocking(move || {
        list_files(
            walker,
            &walk_root,
            &anchored,
            after.as_deref(),
            budget,
            &abort,
        )
    })
    .await
    .map_err(|err| Failure::new(format!("the file listing stopped unexpectedly: {err}")))?;
    if listing.aborted {
        return Err(Failure::new("the file listing was aborted with the turn"));
    }
    let (keys, end) = listing.page.finish();
    let offset = resume.as_ref().map_or(0, |r| r.shown);
    let next = keys.last().map(|last| Resume {
        after: last.clone(),
        line: 0,
        shown: offset + keys.len(),
    });
    let files: Vec<String> = keys.iter().map(|key| root.display_path(key)).collect();
    let mut notes = Vec::new();
    if listing.unreadable > 0 {
        notes.push(format!(
            "{} paths could not be read and were skipped",
            listing.unreadable
        ));
    }
    let report = PageReport {
        tool,
        noun: "files",
        offset,
        shown: files.len(),
        known_total: None,
        end,
        budget,
        next,
    };
    let empty = format!(
        "no files match {:?}; hidden directories and directories ignored by .gitignore, .ignore or .rgignore are \
         not searched (pass path to look inside one), and a pattern with / is matched against the \
         workspace-relative path",
        args.pattern
    );
    let page = report.into_fields(&id, &empty, &notes);
    Ok(GlobOutput { files, page })
}

/// One page of the reportable files of a walk, in path order.
struct Listing {
    page: PageFill<Vec<u8>>,
    unreadable: usize,
    aborted: bool,
}

/// How often (in walk entries) the walk looks at the turn's abort signal.
const ABORT_CHECK_EVERY: usize = 256;

/// Walks in path order, skipping the resume key itself, until the page is full.
///
/// The walk itself confirms every file from its parent directory's handle
/// ([`FileCheck::Lookup`]), so a file it yields is listed as is: no per-file work is left, and
/// the walk runs on this one thread in path order. The search root itself (a search of one
/// file) is confirmed from the workspace root's handle.
fn list_files(
    walker: Walk,
    root: &Path,
    anchored: &Anchored,
    after: Option<&[u8]>,
    budget: PageBudget,
    abort: &AbortSignal,
) -> Listing {
    let mut page = PageFill::new(budget);
    let (mut unreadable, mut aborted) = (0usize, false);
    for (seen, entry) in walker.enumerate() {
        if seen % ABORT_CHECK_EVERY == 0 && abort.is_aborted() {
            aborted = true;
            break;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(_) => {
                unreadable += 1;
                continue;
            }
        };
        if !is_reportable_file(&entry)
            || (entry.depth() == 0 && !anchored.confirms(entry.path(), entry.ino()))
        {
            continue;
        }
        let key = path_key(root, entry.path());
        if after.is_some_and(|after| after == key) {
            continue;
        }
        let size = ENTRY_OVERHEAD_BYTES / 4 + key.len();
        if !page.offer(key.to_vec(), size) {
            break;
        }
    }
    Listing {
        page,
        unreadable,
        aborted: aborted || abort.is_aborted(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_is_a_hidden_glob() {
        let (glob, find) = (GlobTool::default(), FindTool::default());
        let (glob, find) = (TypedTool::spec(&glob), TypedTool::spec(&find));
        assert!(glob.model_advertised);
        assert!(!find.model_advertised);
        assert_eq!(glob.input_schema, find.input_schema);
        assert_eq!(glob.output_schema, find.output_schema);
        assert_eq!(find.name, "find");
        assert_eq!(find.side_effect, SideEffect::ReadOnly);
    }
}
