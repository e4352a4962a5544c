//! `repo_map`: a ranked map of the definitions in a repository, within a byte budget.
//!
//! Files are parsed with tree-sitter (Rust, Python, JavaScript, TypeScript/TSX, Go); each
//! file's rank is how often other files mention the names it defines, so the map shows the
//! code everything else leans on first. `.gitignore` is honoured (also outside a git
//! repository).
//!
//! The model reads the map itself (`path:` then `  line: signature` per definition), and a
//! last line in brackets when files were left out.

mod languages;

pub use languages::{Definition, Lang, definitions};

use crate::Failure;
use async_trait::async_trait;
use kun_ports::{PathAccess, SideEffect, ToolContext, ToolPolicy, ToolSpec, TypedTool};
use rustc_hash::{FxHashMap, FxHashSet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Default size of the map, in bytes.
const DEFAULT_BUDGET_BYTES: usize = 16 * 1024;
/// Largest budget a call may ask for.
const MAX_BUDGET_BYTES: usize = 256 * 1024;
/// Files larger than this are not parsed.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// At most this many source files are parsed.
const MAX_FILES: usize = 5_000;

/// Arguments of `repo_map`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepoMapArgs {
    /// Directory to map, relative to the workspace root. Defaults to the root.
    path: Option<String>,
    /// Size budget of the map in bytes (default 16384, at most 262144).
    max_bytes: Option<usize>,
}

/// What `repo_map` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RepoMapOutput {
    /// The directory mapped, relative to the workspace root.
    pub path: String,
    /// The map: `path:` then `  line: signature` per definition, most referenced files first.
    pub map: String,
    /// Source files parsed.
    pub files_scanned: usize,
    /// Files shown.
    pub files_listed: usize,
    /// Files with definitions left out by the budget.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted_files: usize,
    /// The scan stopped at the file cap (5,000 source files).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub file_cap_reached: bool,
}

#[allow(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if signature"
)]
const fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The `repo_map` tool.
#[derive(Debug)]
pub struct RepoMapTool {
    spec: ToolSpec,
}

impl Default for RepoMapTool {
    fn default() -> Self {
        Self::new()
    }
}

impl RepoMapTool {
    /// The tool.
    #[must_use]
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::typed::<RepoMapArgs, RepoMapOutput>(
                "repo_map",
                "Show a ranked map of the definitions (functions, types, classes, methods) in the \
                 repository or a directory, most referenced files first, within a size budget. Use \
                 it to orient yourself before reading files.",
            )
            .with_policy(ToolPolicy::Auto)
            .with_side_effect(SideEffect::ReadOnly),
        }
    }
}

#[async_trait]
impl TypedTool for RepoMapTool {
    type Args = RepoMapArgs;
    type Output = RepoMapOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The map, then what was left out.
    fn render(&self, output: &RepoMapOutput) -> String {
        let mut text = output.map.trim_end_matches('\n').to_owned();
        if output.files_scanned == 0 {
            text = format!(
                "no source files to map in {} (Rust, Python, JavaScript, TypeScript and Go are mapped)",
                output.path
            );
        }
        if output.omitted_files > 0 {
            text.push_str(&format!(
                "\n[{} more files left out by the size budget; raise max_bytes or map a subdirectory]",
                output.omitted_files
            ));
        }
        if output.file_cap_reached {
            text.push_str(&format!(
                "\n[the scan stopped after {MAX_FILES} source files; map a subdirectory]"
            ));
        }
        text
    }

    async fn run(&self, args: RepoMapArgs, ctx: ToolContext<'_>) -> Result<RepoMapOutput, Failure> {
        map(args, ctx).await
    }
}

async fn map(args: RepoMapArgs, ctx: ToolContext<'_>) -> Result<RepoMapOutput, Failure> {
    let resolved = ctx.resolve_path(args.path.as_deref().unwrap_or("."), PathAccess::Read)?;
    if !resolved.physical.is_dir() {
        return Err(Failure::invalid(format!(
            "{} is not a directory; pass a directory to map",
            resolved.relative
        )));
    }
    let budget = args
        .max_bytes
        .unwrap_or(DEFAULT_BUDGET_BYTES)
        .clamp(256, MAX_BUDGET_BYTES);
    let root = resolved.lexical.clone();
    let map = tokio::task::spawn_blocking(move || build_map(&root, budget))
        .await
        .map_err(|err| Failure::new(format!("repo_map stopped unexpectedly: {err}")))?;
    Ok(RepoMapOutput {
        path: resolved.relative,
        map: map.text,
        files_scanned: map.files_scanned,
        files_listed: map.files_listed,
        omitted_files: map.omitted_files,
        file_cap_reached: map.hit_file_cap,
    })
}

/// A rendered map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoMap {
    /// The map text: `path:` then `  line: signature` per definition.
    pub text: String,
    /// Source files parsed.
    pub files_scanned: usize,
    /// Files shown.
    pub files_listed: usize,
    /// Files with definitions left out by the budget.
    pub omitted_files: usize,
    /// Whether the file cap stopped the scan.
    pub hit_file_cap: bool,
}

struct FileEntry {
    relative: String,
    definitions: Vec<Definition>,
    identifiers: FxHashSet<String>,
}

/// Builds the map of `root` within `budget` bytes.
#[must_use]
pub fn build_map(root: &Path, budget: usize) -> RepoMap {
    let (files, hit_file_cap) = source_files(root);
    let entries: Vec<FileEntry> = files
        .iter()
        .filter_map(|path| parse_file(root, path))
        .collect();
    let files_scanned = entries.len();
    let ranked = rank(&entries);
    let mut text = String::new();
    let mut files_listed = 0;
    let mut omitted_files = 0;
    for index in ranked {
        let entry = &entries[index];
        let mut block = format!("{}:\n", entry.relative);
        for def in &entry.definitions {
            let _ = writeln!(block, "  {}: {}", def.line, def.signature);
        }
        if text.len() + block.len() > budget {
            omitted_files += 1;
            continue;
        }
        text.push_str(&block);
        files_listed += 1;
    }
    RepoMap {
        text,
        files_scanned,
        files_listed,
        omitted_files,
        hit_file_cap,
    }
}

fn source_files(root: &Path) -> (Vec<PathBuf>, bool) {
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(root).require_git(false).build();
    for entry in walker.flatten() {
        let path = entry.path();
        let is_file = entry.file_type().is_some_and(|t| t.is_file());
        let small = entry.metadata().is_ok_and(|m| m.len() <= MAX_FILE_BYTES);
        if is_file && small && Lang::of(path).is_some() {
            if files.len() == MAX_FILES {
                return (files, true);
            }
            files.push(path.to_path_buf());
        }
    }
    files.sort();
    (files, false)
}

fn parse_file(root: &Path, path: &Path) -> Option<FileEntry> {
    let lang = Lang::of(path)?;
    let source = std::fs::read_to_string(path).ok()?;
    let definitions = definitions(lang, &source)?;
    let relative = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    Some(FileEntry {
        relative,
        definitions,
        identifiers: identifiers(&source),
    })
}

fn identifiers(source: &str) -> FxHashSet<String> {
    source
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| word.len() >= 3 && !word.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned)
        .collect()
}

/// File indices by rank: how many other files mention the names each file defines.
fn rank(entries: &[FileEntry]) -> Vec<usize> {
    let mut mentions: FxHashMap<&str, usize> = FxHashMap::default();
    for entry in entries {
        for ident in &entry.identifiers {
            *mentions.entry(ident.as_str()).or_default() += 1;
        }
    }
    let score = |entry: &FileEntry| -> usize {
        let defined: FxHashSet<&str> = entry.definitions.iter().map(|d| d.name.as_str()).collect();
        defined
            .iter()
            .map(|name| mentions.get(name).copied().unwrap_or(0).saturating_sub(1))
            .sum()
    };
    let mut order: Vec<(usize, usize)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.definitions.is_empty())
        .map(|(i, e)| (i, score(e)))
        .collect();
    order.sort_by(|(ia, sa), (ib, sb)| {
        sb.cmp(sa)
            .then_with(|| entries[*ia].relative.cmp(&entries[*ib].relative))
    });
    order.into_iter().map(|(i, _)| i).collect()
}
