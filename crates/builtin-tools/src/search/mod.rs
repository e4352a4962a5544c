//! The search tools — `grep`, `glob`, `find` (a hidden alias of `glob`) and `ls` — in process
//! on ripgrep's own crates (`ignore`, `grep-searcher`, `grep-regex`): no `rg` or `fd` is run.
//!
//! | tool | what | filters | order |
//! |---|---|---|---|
//! | [`GrepTool`] | matching lines, with optional context | ripgrep's defaults ([`walk`](self#walking)) | path, then line |
//! | [`GlobTool`] / [`FindTool`] | files whose path matches a glob | the same, narrowed by the glob as `rg --files -g` | path |
//! | [`LsTool`] | one directory's entries | none: hidden and ignored entries are listed | name |
//!
//! All four are `tool_call`, policy `auto`, side effect read-only; `find` is not advertised to
//! the model but stays callable.
//!
//! # Walking
//!
//! `grep` and `glob` walk like `rg` with no flags (plus `--no-require-git`): hidden files and
//! directories are skipped; `.gitignore` (even outside a git repository), `.git/info/exclude`,
//! the global git excludes file, `.ignore` and `.rgignore` are honoured, including ignore files
//! in parent directories; symbolic links are not followed; binary files (a NUL byte) are
//! skipped. The search root is never filtered, so `path: ".github"` searches that hidden
//! directory. The walk runs in path order; `grep` searches the files it yields on one worker per
//! available core (at most 12) and releases their matches in path order; `glob` walks each
//! top-level directory of the search root on its own worker and releases their files in path
//! order (`subtrees`). Every directory and listed file is confirmed from its parent directory's
//! handle, on a chain of handles opened from the root through no link (`handles`).
//!
//! # Determinism and paging
//!
//! Results are sorted component-wise by path (the order of `rg --sort path`), so the same tree
//! and arguments give the same output whatever order the threads finish in. A page holds at
//! most `limit` entries (default and ceiling: [`OutputLimits::max_lines`](crate::OutputLimits))
//! and at most [`OutputLimits::max_bytes`](crate::OutputLimits) of output, never less than one
//! entry. A page stops walking and searching as soon as one entry more than fits has been
//! found (the proof that more follow), so the first page of a large result costs a fraction of
//! a full search.
//!
//! `next_cursor` (there when more follow) names the last entry shown — path, and for `grep` the
//! line; the next page resumes right after it, pruning every directory and file the earlier
//! pages covered, so paging through everything costs about one search. Files changed between
//! pages: what sorts after the cursor is seen as it is now; what sorts before it is not
//! revisited. `total` is given on the last page (for `ls`, which reads its directory whole, on
//! every page). A cursor is model input: it is validated (a relative path with no `.`/`..`,
//! bounded size, the same query), never opened, and a malformed or foreign one is an
//! `invalid_arguments` result ("cursor is malformed", "cursor does not belong to this query").
//!
//! # What the model reads
//!
//! | tool | rendering |
//! |---|---|
//! | grep | `path:line:col:text` per match (`path-line-text` for context, `--` between groups) |
//! | glob, find | one workspace-relative path per line |
//! | ls | one name per line, directories ending with `/`, links as `name -> target` |
//!
//! then, when there is one, the page notice in brackets: where the next page starts (with the
//! cursor), that this is the last page, or why nothing was found.
//!
//! # Failures
//!
//! Bad input is an `invalid_arguments` result saying what to fix (an invalid regex quotes the
//! regex error; an invalid glob the glob error; a malformed or foreign cursor). A path outside
//! the workspace carries the sandbox's code. Nothing is ever written.

mod cursor;
mod glob;
mod grep;
mod handles;
mod lines;
mod ls;
mod ordered;
mod page;
mod scan;
mod subtrees;
mod walk;

pub use glob::{FindTool, GlobOutput, GlobTool};
pub use grep::{GrepMatch, GrepOutput, GrepTool};
pub use ls::{EntryKind, LinkTarget, LsEntry, LsOutput, LsTool};
pub use page::PageFields;

use crate::OutputLimits;
use kun_ports::Tool;
use std::sync::Arc;

/// The four search tools with the same output limits, in catalog order: `grep`, `glob`,
/// `find`, `ls`.
///
/// ```
/// let tools = kun_builtin_tools::search::search_tools(kun_builtin_tools::OutputLimits::default());
/// let names: Vec<_> = tools.iter().map(|tool| tool.spec().name.as_str()).collect();
/// assert_eq!(names, ["grep", "glob", "find", "ls"]);
/// ```
#[must_use]
pub fn search_tools(limits: OutputLimits) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(GrepTool::new(limits)),
        Arc::new(GlobTool::new(limits)),
        Arc::new(FindTool::new(limits)),
        Arc::new(LsTool::new(limits)),
    ]
}
