//! `grep`: search file contents with a regular expression, by ripgrep's rules.
//!
//! The model reads matches as `rg -n --column --no-heading` prints them: `path:line:col:text`
//! per match, `path-line-text` per context line, `--` between groups of lines that are not
//! adjacent (only when context was asked for), then the page notice in brackets when there is
//! one (more pages, the last page, nothing found, clipped lines).

use super::cursor::{QueryId, Resume};
use super::handles::FileCheck;
use super::lines::MAX_LINE_BYTES;
use super::page::{ENTRY_OVERHEAD_BYTES, PageBudget, PageFields, PageFill, PageReport};
use super::scan::{self, GrepJob, Hit, ScanNotes};
use super::walk::{SearchRoot, sorted_walker};
use crate::{Failure, OutputLimits};
use async_trait::async_trait;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use kun_ports::{SideEffect, ToolContext, ToolPolicy, ToolSpec, TypedTool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::fmt::Write as _;
use std::ops::ControlFlow;

/// The tool's catalog name.
const NAME: &str = "grep";

/// At most this many context lines before and after a match.
const MAX_CONTEXT: u32 = 20;

const DESCRIPTION: &str = "Search file contents with a regular expression (Rust regex syntax, as ripgrep), or a \
plain string with literal: true. Searches the workspace (or path) recursively by ripgrep's rules: hidden files, files \
ignored by .gitignore/.ignore/.rgignore and binary files are skipped. Returns matching lines with path, line and \
column, sorted by path then line, optionally with context lines; long results come in pages (pass next_cursor back \
as cursor).";

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GrepArgs {
    /// The regular expression to find (Rust regex syntax, as ripgrep), matched line by line.
    pattern: String,
    /// File or directory to search, relative to the workspace root (default: the whole workspace). Naming a hidden or ignored directory searches it.
    #[serde(default)]
    path: Option<String>,
    /// Only search files matching this glob (gitignore syntax, as `rg -g`): `*.rs` matches file names at any depth, `src/**/*.ts` is matched against the workspace-relative path, `!*.min.js` excludes.
    #[serde(default)]
    glob: Option<String>,
    /// Match without regard to case.
    #[serde(default)]
    ignore_case: Option<bool>,
    /// Treat the pattern as a plain string: no regex metacharacters.
    #[serde(default)]
    literal: Option<bool>,
    /// Lines of context to show before and after each match (0 to 20).
    #[serde(default)]
    #[schemars(range(max = 20))]
    context: Option<u32>,
    /// At most this many matches on this page.
    #[serde(default)]
    #[schemars(range(min = 1))]
    limit: Option<u64>,
    /// The next_cursor of the previous page, to get the next one (same other arguments).
    #[serde(default)]
    cursor: Option<String>,
}

/// The `grep` tool: regex search over file contents, in process on ripgrep's crates.
///
/// Results are every matching line under the search path, sorted by path (component-wise, as
/// `rg --sort path`) then line, paged by match count ([`OutputLimits::max_lines`]) and output
/// size ([`OutputLimits::max_bytes`]). A page stops searching once it is full (and knows that
/// more follow); the last page carries `total`, the number of matching lines.
///
/// ```
/// use kun_builtin_tools::search::GrepTool;
/// use kun_builtin_tools::testing::TestWorkspace;
/// use kun_ports::Tool;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let ws = TestWorkspace::new();
/// ws.write("src/lib.rs", "fn main() {}\n");
/// let result = GrepTool::default()
///     .execute(serde_json::json!({"pattern": "fn \\w+"}), ws.tool_context("call-1"))
///     .await
///     .unwrap();
/// assert_eq!(result.output["matches"][0]["path"], "src/lib.rs");
/// assert_eq!(result.output["total"], 1);
/// assert_eq!(result.model_text(), "src/lib.rs:1:1:fn main() {}");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct GrepTool {
    spec: ToolSpec,
    limits: OutputLimits,
}

impl Default for GrepTool {
    fn default() -> Self {
        Self::new(OutputLimits::default())
    }
}

impl GrepTool {
    /// A `grep` whose pages hold at most `limits.max_lines` matches and `limits.max_bytes` of
    /// output.
    #[must_use]
    pub fn new(limits: OutputLimits) -> Self {
        let spec = ToolSpec::typed::<GrepArgs, GrepOutput>(NAME, DESCRIPTION)
            .with_policy(ToolPolicy::Auto)
            .with_side_effect(SideEffect::ReadOnly);
        Self { spec, limits }
    }

    async fn search(&self, args: GrepArgs, ctx: &ToolContext<'_>) -> Result<GrepOutput, Failure> {
        let ignore_case = args.ignore_case.unwrap_or(false);
        let literal = args.literal.unwrap_or(false);
        let context = args.context.unwrap_or(0).min(MAX_CONTEXT);
        let matcher = build_matcher(&args.pattern, ignore_case, literal)?;
        let root = SearchRoot::resolve(ctx, args.path.as_deref())?;
        let id = QueryId::of(&json!({
            "tool": NAME,
            "pattern": args.pattern,
            "root": root.display,
            "glob": args.glob,
            "ignore_case": ignore_case,
            "literal": literal,
            "context": context,
        }));
        let resume = id.resume(args.cursor.as_deref())?;
        let budget = PageBudget::new(args.limit, self.limits);
        let walker = sorted_walker(
            &root,
            args.glob.as_deref(),
            resume.as_ref().map(|r| r.after.clone()),
            FileCheck::AtOpen,
        )?;
        let job = GrepJob {
            root: root.walk_root.clone(),
            anchored: std::sync::Arc::clone(&root.anchored),
            matcher,
            context: context as usize,
            cap: budget.limit,
            resume: resume.as_ref().map(|r| (r.after.clone(), r.line)),
            abort: ctx.turn.abort.clone(),
        };
        let display = root.clone();
        let (page, notes) = tokio::task::spawn_blocking(move || {
            let mut page = PageFill::new(budget);
            let notes = scan::grep(walker, &job, |file| {
                let path = display.display_path(&file.key);
                for hit in &file.hits {
                    let entry = Paged {
                        key: file.key.clone(),
                        clipped: hit.clipped(),
                        found: GrepMatch::new(path.clone(), hit),
                    };
                    let size = entry.found.estimated_bytes();
                    if !page.offer(entry, size) {
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            });
            (page, notes)
        })
        .await
        .map_err(|err| Failure::new(format!("the search stopped unexpectedly: {err}")))?;
        if notes.aborted {
            return Err(Failure::new("the search was aborted with the turn"));
        }
        Ok(page_of(page, &notes, &root, resume.as_ref(), budget, &id))
    }
}

/// A match on the page, with what the next cursor needs.
struct Paged {
    key: Vec<u8>,
    clipped: bool,
    found: GrepMatch,
}

#[async_trait]
impl TypedTool for GrepTool {
    type Args = GrepArgs;
    type Output = GrepOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &GrepOutput) -> String {
        render(output)
    }

    async fn run(&self, args: GrepArgs, ctx: ToolContext<'_>) -> Result<GrepOutput, Failure> {
        self.search(args, &ctx).await
    }
}

/// The matcher `rg` builds for a pattern (see [`super::scan`]).
fn build_matcher(pattern: &str, ignore_case: bool, literal: bool) -> Result<RegexMatcher, Failure> {
    if pattern.is_empty() {
        return Err(Failure::invalid(
            "pattern is empty; pass the text or regular expression to search for",
        ));
    }
    RegexMatcherBuilder::new()
        .multi_line(true)
        .unicode(true)
        .octal(false)
        .fixed_strings(literal)
        .case_insensitive(ignore_case)
        .line_terminator(Some(b'\n'))
        .dot_matches_new_line(false)
        .ban_byte(Some(b'\x00'))
        .build(pattern)
        .map_err(|err| {
            Failure::invalid(format!(
                "invalid regular expression: {}\nEscape regex metacharacters with \\, or pass literal: true to \
                 search for the plain text.",
                bounded(&err.to_string(), MAX_QUOTED_ERROR)
            ))
            .with("pattern", bounded(pattern, MAX_QUOTED_PATTERN))
        })
}

/// How much of a rejected pattern an error quotes.
const MAX_QUOTED_PATTERN: usize = 200;
/// How much of the regex engine's own message an error quotes (it can repeat the pattern).
const MAX_QUOTED_ERROR: usize = 2_000;

/// `text` whole when it has at most `max` characters, else its first `max` characters and
/// how long it was, so an error never echoes a megabyte-sized argument back.
fn bounded(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!(
            "{}… (cut: {} characters in all)",
            &text[..cut],
            text.chars().count()
        ),
    }
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepMatch {
    /// The file, relative to the workspace root.
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// 1-based character column of the first match on the line.
    pub column: usize,
    /// The line (clipped around the match when very long).
    pub text: String,
    /// Context lines before it (those not already shown after the previous match).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_before: Vec<String>,
    /// Context lines after it (up to the next match).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_after: Vec<String>,
}

impl GrepMatch {
    fn new(path: String, hit: &Hit) -> Self {
        Self {
            path,
            line: hit.line,
            column: hit.column,
            text: hit.text.text.clone(),
            context_before: hit.before.iter().map(|line| line.text.clone()).collect(),
            context_after: hit.after.iter().map(|line| line.text.clone()).collect(),
        }
    }

    fn estimated_bytes(&self) -> usize {
        let context: usize = self
            .context_before
            .iter()
            .chain(&self.context_after)
            .map(|line| line.len() + 4)
            .sum();
        ENTRY_OVERHEAD_BYTES + self.path.len() + self.text.len() + context
    }
}

/// What `grep` returns: a page of matches, sorted by path then line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrepOutput {
    /// The matches on this page.
    pub matches: Vec<GrepMatch>,
    /// Paging: the total, the next cursor, the notice.
    #[serde(flatten)]
    pub page: PageFields,
}

fn page_of(
    page: PageFill<Paged>,
    scan: &ScanNotes,
    root: &SearchRoot,
    resume: Option<&Resume>,
    budget: PageBudget,
    id: &QueryId,
) -> GrepOutput {
    let (entries, end) = page.finish();
    let offset = resume.map_or(0, |r| r.shown);
    let next = entries.last().map(|last| Resume {
        after: last.key.clone(),
        line: last.found.line,
        shown: offset + entries.len(),
    });
    let mut notes = Vec::new();
    if entries.iter().any(|entry| entry.clipped) {
        notes.push(format!(
            "lines longer than {MAX_LINE_BYTES} bytes are clipped around the match; read the file for the full line"
        ));
    }
    if scan.binary_root {
        notes.push(format!(
            "{} looks like a binary file (it contains a NUL byte); it was not searched past that byte",
            root.display
        ));
    }
    if scan.unreadable > 0 {
        notes.push(format!(
            "{} paths could not be read and were skipped",
            scan.unreadable
        ));
    }
    let report = PageReport {
        tool: NAME,
        noun: "matches",
        offset,
        shown: entries.len(),
        known_total: None,
        end,
        budget,
        next,
    };
    let empty = "no matches; hidden files, files ignored by .gitignore, .ignore or .rgignore, and binary files are \
                 not searched: name a hidden or ignored directory in path to search inside it";
    let page = report.into_fields(id, empty, &notes);
    GrepOutput {
        matches: entries.into_iter().map(|entry| entry.found).collect(),
        page,
    }
}

/// `path:line:col:text` per match, `path-line-text` per context line, `--` between
/// non-adjacent groups when there is context, then the notice (see the module docs).
fn render(output: &GrepOutput) -> String {
    let with_context = output
        .matches
        .iter()
        .any(|m| !m.context_before.is_empty() || !m.context_after.is_empty());
    let mut text = String::new();
    let mut last: Option<(&str, u64)> = None;
    for m in &output.matches {
        let first = m.line - m.context_before.len() as u64;
        let adjacent = last.is_some_and(|(path, line)| path == m.path && line + 1 >= first);
        if with_context && last.is_some() && !adjacent {
            text.push_str("--\n");
        }
        for (index, line) in m.context_before.iter().enumerate() {
            let _ = writeln!(text, "{}-{}-{line}", m.path, first + index as u64);
        }
        let _ = writeln!(text, "{}:{}:{}:{}", m.path, m.line, m.column, m.text);
        for (index, line) in m.context_after.iter().enumerate() {
            let _ = writeln!(text, "{}-{}-{line}", m.path, m.line + 1 + index as u64);
        }
        last = Some((&m.path, m.line + m.context_after.len() as u64));
    }
    if text.ends_with('\n') {
        text.pop();
    }
    output.page.append_notice(&mut text);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use kun_ports::ErrorCode;

    #[test]
    fn matcher_errors_name_the_problem() {
        let err = build_matcher("fn (", false, false).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArguments);
        assert!(err.message.contains("unclosed group"), "{}", err.message);
        assert!(build_matcher("fn (", false, true).is_ok());
        assert!(build_matcher("", false, false).is_err());
    }

    fn hit(path: &str, line: u64, text: &str, before: &[&str], after: &[&str]) -> GrepMatch {
        GrepMatch {
            path: path.to_owned(),
            line,
            column: 1,
            text: text.to_owned(),
            context_before: before.iter().map(|s| (*s).to_owned()).collect(),
            context_after: after.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn renders_like_rg_without_heading() {
        let page = |notice: Option<&str>| PageFields {
            total: Some(3),
            next_cursor: None,
            notice: notice.map(str::to_owned),
        };
        let plain = GrepOutput {
            matches: vec![
                hit("a.rs", 3, "fn a() {}", &[], &[]),
                hit("a.rs", 9, "fn b() {}", &[], &[]),
                hit("src/b.rs", 1, "fn café() {}", &[], &[]),
            ],
            page: page(None),
        };
        assert_eq!(
            render(&plain),
            "a.rs:3:1:fn a() {}\na.rs:9:1:fn b() {}\nsrc/b.rs:1:1:fn café() {}"
        );
        let context = GrepOutput {
            matches: vec![
                hit("a.rs", 3, "x", &["two"], &["four"]),
                hit("a.rs", 5, "y", &[], &["six"]),
                hit("a.rs", 9, "z", &["eight"], &[]),
                hit("b.rs", 1, "w", &[], &[]),
            ],
            page: page(Some("matches 1–4 of 9; next page: …")),
        };
        assert_eq!(
            render(&context),
            "a.rs-2-two\na.rs:3:1:x\na.rs-4-four\na.rs:5:1:y\na.rs-6-six\n--\na.rs-8-eight\n\
             a.rs:9:1:z\n--\nb.rs:1:1:w\n[matches 1–4 of 9; next page: …]"
        );
    }

    #[test]
    fn schema_lists_the_arguments() {
        let tool = GrepTool::default();
        let schema = &TypedTool::spec(&tool).input_schema;
        assert_eq!(schema["required"], json!(["pattern"]));
        for key in [
            "pattern",
            "path",
            "glob",
            "ignoreCase",
            "literal",
            "context",
            "limit",
            "cursor",
        ] {
            assert!(
                schema["properties"][key]["description"].is_string(),
                "{key}: {schema}"
            );
        }
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(TypedTool::spec(&tool).policy, ToolPolicy::Auto);
        assert_eq!(TypedTool::spec(&tool).side_effect, SideEffect::ReadOnly);
    }
}
