//! `glob` (and its hidden alias `find`): list files matching a glob, by ripgrep's rules
//! (`rg --files -g <pattern> --sort path`).

use super::cursor::{QueryId, Resume};
use super::handles::FileCheck;
use super::page::{ENTRY_OVERHEAD_BYTES, PageBudget, PageFields, PageFill, PageReport};
use super::subtrees::{self, KeySink as _};
use super::walk::{CHECK_EVERY, SearchRoot, is_reportable_file, path_key, sorted_walker, threads};
use crate::{Failure, OutputLimits};
use async_trait::async_trait;
use kun_ports::{AbortSignal, SideEffect, ToolContext, ToolPolicy, ToolSpec, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::ops::ControlFlow;

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
    let abort = ctx.turn.abort.clone();
    let after = resume.as_ref().map(|r| r.after.clone());
    let (walk_root, pattern) = (root.clone(), args.pattern.clone());
    let listing = tokio::task::spawn_blocking(move || {
        list_files(
            &walk_root,
            &pattern,
            after.as_deref(),
            budget,
            &abort,
            threads(),
        )
    })
    .await
    .map_err(|err| Failure::new(format!("the file listing stopped unexpectedly: {err}")))??;
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

/// The page being filled, skipping the resume key itself.
struct PageSink<'a> {
    page: PageFill<Vec<u8>>,
    after: Option<&'a [u8]>,
}

/// The size estimate of a listed path: its bytes and a share of the per-entry overhead.
fn entry_size(key: &[u8]) -> usize {
    ENTRY_OVERHEAD_BYTES / 4 + key.len()
}

/// A typical path's size, for estimating how many more fit on a page.
const TYPICAL_PATH_BYTES: usize = 40;

impl subtrees::KeySink for PageSink<'_> {
    fn accept(&mut self, key: Vec<u8>) -> ControlFlow<()> {
        if self.after.is_some_and(|after| after == key.as_slice()) {
            return ControlFlow::Continue(());
        }
        let size = entry_size(&key);
        if self.page.offer(key, size) {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    }

    fn room(&self) -> usize {
        self.page.room(entry_size(&[0; TYPICAL_PATH_BYTES]))
    }
}

/// Walks in path order, skipping the resume key itself, until the page is full: on `workers`
/// threads when the search root holds several directories ([`subtrees`]), else on this one.
///
/// The walks confirm every file from its parent directory's handle ([`FileCheck::Lookup`]),
/// so a file they yield is listed as is. The search root itself (a search of one file) is
/// confirmed from the workspace root's handle.
///
/// # Errors
/// `invalid_arguments` when the glob is invalid.
fn list_files(
    root: &SearchRoot,
    pattern: &str,
    after: Option<&[u8]>,
    budget: PageBudget,
    abort: &AbortSignal,
    workers: usize,
) -> Result<Listing, Failure> {
    let mut sink = PageSink {
        page: PageFill::new(budget),
        after,
    };
    if let Some((units, top_unreadable)) = subtrees::units(root, pattern, after, workers)? {
        let listing = subtrees::Listing {
            root,
            glob: pattern,
            after,
            // One more than a page takes, and the resume key itself, which is skipped.
            cap: budget.limit.saturating_add(1),
            workers,
        };
        let walked = subtrees::walk_units(&listing, units, abort, &mut sink);
        return Ok(Listing {
            page: sink.page,
            unreadable: top_unreadable + walked.unreadable,
            aborted: walked.aborted,
        });
    }
    let walker = sorted_walker(
        root,
        Some(pattern),
        after.map(<[u8]>::to_vec),
        FileCheck::Lookup,
    )?;
    let (mut unreadable, mut aborted) = (0usize, false);
    for (seen, entry) in walker.enumerate() {
        if seen % CHECK_EVERY == 0 && abort.is_aborted() {
            aborted = true;
            break;
        }
        let Ok(entry) = entry else {
            unreadable += 1;
            continue;
        };
        if !is_reportable_file(&entry)
            || (entry.depth() == 0 && !root.anchored.confirms(entry.path(), entry.ino()))
        {
            continue;
        }
        if sink
            .accept(path_key(&root.walk_root, entry.path()).to_vec())
            .is_break()
        {
            break;
        }
    }
    Ok(Listing {
        page: sink.page,
        unreadable,
        aborted: aborted || abort.is_aborted(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every page of a listing at `limit` per page, joined, walked on `workers` threads.
    #[allow(clippy::unwrap_used, reason = "tests fail loudly")]
    fn all_pages(root: &SearchRoot, pattern: &str, limit: usize, workers: usize) -> Vec<Vec<u8>> {
        let budget = PageBudget {
            limit,
            max_bytes: usize::MAX,
        };
        let (mut joined, mut after): (Vec<Vec<u8>>, Option<Vec<u8>>) = (Vec::new(), None);
        loop {
            let listing = list_files(
                root,
                pattern,
                after.as_deref(),
                budget,
                &AbortSignal::new(),
                workers,
            )
            .unwrap();
            let (keys, end) = listing.page.finish();
            joined.extend(keys.iter().cloned());
            match (end, keys.last()) {
                (super::super::page::PageEnd::Exhausted, _) | (_, None) => return joined,
                (_, Some(last)) => after = Some(last.clone()),
            }
        }
    }

    #[test]
    #[allow(clippy::unwrap_used, reason = "tests fail loudly")]
    fn threads_and_pages_give_the_one_thread_listing() {
        use crate::fs::beneath::Beneath;
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        // Directories and files interleaved by name (`a/…` sorts before `a-b.rs`), ignore files
        // at the root and below, hidden and ignored directories, an empty directory.
        let files = [
            "a/x.rs",
            "a/y/z.rs",
            "a/y/skip.log",
            "a-b.rs",
            "a.rs",
            "b/c.rs",
            "b/d/e.rs",
            "b/ignored/f.rs",
            "c.txt",
            "d/g.rs",
            "d/h/i/j.rs",
            ".hidden/k.rs",
            "e/l.rs",
            "e/keep.rs",
            "f.rs",
            "target/m.rs",
            "z/n.rs",
        ];
        for file in files {
            let path = ws.join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        std::fs::create_dir_all(ws.join("empty")).unwrap();
        // `/d/h` is anchored at the root: it hides `d/h` only, and must be applied the same way
        // when `d` is walked on its own (the root's ignore file is then a parent's).
        std::fs::write(
            ws.join(".gitignore"),
            "target/\n*.log\nignored/\n/d/h\n/h\n",
        )
        .unwrap();
        std::fs::create_dir_all(ws.join("b/h")).unwrap();
        std::fs::write(ws.join("b/h/kept.rs"), "").unwrap();
        std::fs::write(ws.join("e/.ignore"), "l.rs\n").unwrap();
        let root = SearchRoot {
            walk_root: ws.clone(),
            display: ".".to_owned(),
            glob_root: ws.clone(),
            anchored: std::sync::Arc::new(Beneath::locate(&ws, [&ws]).anchored().unwrap()),
        };
        for pattern in ["*.rs", "**/*", "b/**", "*.log"] {
            let whole = all_pages(&root, pattern, usize::MAX, 1);
            assert!(!whole.is_empty(), "{pattern}");
            for limit in 1..=whole.len() + 1 {
                for workers in [1, 2, 3] {
                    assert_eq!(
                        all_pages(&root, pattern, limit, workers),
                        whole,
                        "{pattern}, {limit} per page, {workers} threads"
                    );
                }
            }
        }
        // What `rg --files --sort path -g '*.rs'` prints for this tree (ripgrep 13): the glob
        // names `e/l.rs`, which outweighs `e/.ignore`; ignored directories stay unread.
        let shown = |keys: Vec<Vec<u8>>| -> Vec<String> {
            keys.into_iter()
                .map(|k| String::from_utf8(k).unwrap())
                .collect()
        };
        assert_eq!(
            shown(all_pages(&root, "*.rs", 3, 2)),
            [
                "a/x.rs",
                "a/y/z.rs",
                "a-b.rs",
                "a.rs",
                "b/c.rs",
                "b/d/e.rs",
                "b/h/kept.rs",
                "d/g.rs",
                "e/keep.rs",
                "e/l.rs",
                "f.rs",
                "z/n.rs"
            ]
        );
    }

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
