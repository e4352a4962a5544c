//! The `read` tool: pages through text files, returns images as base64.
//!
//! * The path is resolved for reading (sandbox-checked) and opened without following a final
//!   symlink.
//! * `revision` is `<size>:<mtime in ns>`; passing the previous page's revision as
//!   `expected_revision` makes the read fail with `reason: "file_revision_mismatch"` if the
//!   file changed between pages.
//! * PNG, JPEG, GIF and WEBP files (by magic bytes) come back as `{kind: "image", mime_type,
//!   width, height, data_base64, …}`; other files with a NUL byte in the first 8 KiB are
//!   refused (`reason: "binary_file"`).
//! * Text comes back a page at a time ([`paging`]): `offset` (1-based line) and `limit`,
//!   bounded by the [`OutputLimits`] given at construction. The output says whether more
//!   follows (`has_more`, `next_offset`) and a `notice` says what was cut and how to continue.
//!   A line longer than the whole byte budget is replaced by a placeholder
//!   (`first_line_exceeds_limit: true`).

mod paging;
mod sniff;

use super::{no_follow, run_blocking};
use crate::{Failure, Outcome, OutputLimits, finish, parse_args, schema_for};
use async_trait::async_trait;
use base64::Engine as _;
use kun_ports::{
    PathAccess, ReadObservation, ResolvedPath, SideEffect, Tool, ToolContext, ToolError,
    ToolHostContext, ToolKind, ToolPolicy, ToolResult, ToolSpec,
};
use paging::{Page, PageRequest, Stop};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use sniff::ContentKind;
use std::io::{BufReader, Read as _};
use std::path::PathBuf;
use std::time::UNIX_EPOCH;

const DESCRIPTION: &str = "Read a file. Text comes back a page at a time, as raw lines (no line numbers): use \
`offset` (1-based line) and `limit` to choose the page, and continue with `next_offset` while `has_more` is true. \
Pass the previous page's `revision` as `expected_revision` to be told if the file changed in between. Images (PNG, \
JPEG, GIF, WEBP) come back as base64 with their size; other binary files are refused.";

/// Images larger than this are refused by default.
pub const DEFAULT_MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// Arguments of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// The file to read: relative to the workspace root, or absolute inside it.
    path: String,
    /// The first line to return, 1-based (default 1). Use the previous page's `next_offset`.
    #[serde(default)]
    offset: Option<usize>,
    /// At most this many lines for this page (the tool's own line limit still applies).
    #[serde(default)]
    limit: Option<usize>,
    /// The `revision` of a previous page: the read fails if the file changed since.
    #[serde(default)]
    expected_revision: Option<String>,
}

/// The `read` tool: `tool_call`, `auto`, read-only.
#[derive(Debug)]
pub struct ReadTool {
    spec: ToolSpec,
    limits: OutputLimits,
    max_image_bytes: u64,
}

impl Default for ReadTool {
    fn default() -> Self {
        Self::new(OutputLimits::default())
    }
}

impl ReadTool {
    /// A read tool whose pages stay within `limits`.
    #[must_use]
    pub fn new(limits: OutputLimits) -> Self {
        let spec = ToolSpec::new("read", DESCRIPTION, schema_for::<ReadArgs>())
            .with_kind(ToolKind::ToolCall)
            .with_policy(ToolPolicy::Auto)
            .with_side_effect(SideEffect::ReadOnly);
        Self {
            spec,
            limits,
            max_image_bytes: DEFAULT_MAX_IMAGE_BYTES,
        }
    }

    /// Sets the largest image returned (default [`DEFAULT_MAX_IMAGE_BYTES`]).
    #[must_use]
    pub fn with_max_image_bytes(mut self, max: u64) -> Self {
        self.max_image_bytes = max;
        self
    }

    async fn run(&self, arguments: Value, ctx: ToolContext<'_>) -> Outcome {
        let args: ReadArgs = parse_args("read", arguments)?;
        if args.path.trim().is_empty() {
            return Err(Failure::invalid(
                "path is empty: name a file (find one with ls, glob or grep)",
            )
            .with("reason", "missing_path"));
        }
        let resolved = ctx.resolve_path(&args.path, PathAccess::Read)?;
        let limits = self.limits;
        let max_image_bytes = self.max_image_bytes;
        run_blocking(move || read_file(&resolved, &args, limits, max_image_bytes)).await
    }
}

fn read_file(
    resolved: &ResolvedPath,
    args: &ReadArgs,
    limits: OutputLimits,
    max_image_bytes: u64,
) -> Outcome {
    let path = resolved.lexical.display().to_string();
    let mut file = no_follow::open_file(&resolved.physical)?;
    let meta = file.metadata()?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let revision = format!("{}:{mtime}", meta.len());
    if let Some(expected) = args.expected_revision.as_deref()
        && expected != revision
    {
        return Err(Failure::new(format!(
            "{} changed since the page with revision {expected} was read; start again from offset 1 without \
             expected_revision",
            resolved.relative
        ))
        .with("reason", "file_revision_mismatch")
        .with("path", path)
        .with("relative_path", resolved.relative.clone())
        .with("expected_revision", expected)
        .with("revision", revision));
    }
    let mut head = Vec::with_capacity(sniff::SNIFF_BYTES);
    (&mut file)
        .take(sniff::SNIFF_BYTES as u64)
        .read_to_end(&mut head)?;
    match sniff::sniff(&head) {
        ContentKind::Binary => Err(Failure::new(format!(
            "{} is a binary file; read returns text and images only (inspect it with a command such as `file` or \
             `xxd | head`)",
            resolved.relative
        ))
        .with("reason", "binary_file")
        .with("path", path)),
        ContentKind::Image(mime_type) => {
            if meta.len() > max_image_bytes {
                return Err(Failure::new(format!(
                    "{} is a {} image larger than the {} this tool returns",
                    resolved.relative,
                    format_size(meta.len()),
                    format_size(max_image_bytes)
                ))
                .with("reason", "file_too_large"));
            }
            let mut data = head;
            file.read_to_end(&mut data)?;
            let size = imagesize::blob_size(&data).ok();
            Ok(json!({
                "path": path,
                "relative_path": resolved.relative,
                "kind": "image",
                "mime_type": mime_type,
                "width": size.map(|s| s.width),
                "height": size.map(|s| s.height),
                "byte_size": data.len(),
                "revision": revision,
                "data_base64": base64::engine::general_purpose::STANDARD.encode(&data),
            }))
        }
        ContentKind::Text => {
            let offset = args.offset.unwrap_or(1).max(1);
            let (max_lines, line_stop) = match args.limit {
                Some(limit) if limit < limits.max_lines => (limit.max(1), Stop::Requested),
                _ => (limits.max_lines, Stop::MaxLines),
            };
            let request = PageRequest { offset, max_lines, line_stop, max_bytes: limits.max_bytes };
            let reader = BufReader::with_capacity(64 * 1024, std::io::Cursor::new(head).chain(file));
            let page = paging::read_page(reader, request)?;
            text_output(resolved, path, revision, meta.len(), offset, &page, limits)
        }
    }
}

fn text_output(
    resolved: &ResolvedPath,
    path: String,
    revision: String,
    byte_size: u64,
    offset: usize,
    page: &Page,
    limits: OutputLimits,
) -> Outcome {
    if offset > page.total_lines.max(1) {
        return Err(Failure::invalid(format!(
            "offset {offset} is past the end of {}, which has {} lines",
            resolved.relative, page.total_lines
        ))
        .with("total_lines", page.total_lines));
    }
    let has_more = page.end_line < page.total_lines;
    let next_offset = has_more.then_some(page.end_line + 1);
    let (content, notice) = match page.first_line_too_long {
        Some(len) => {
            let mut notice = format!(
                "Line {offset} is {} long, more than the {} a page may hold, so it was left out; search inside it \
                 with grep",
                format_size(len as u64),
                format_size(limits.max_bytes as u64)
            );
            if let Some(next) = next_offset {
                notice.push_str(&format!(", or continue with offset={next}"));
            }
            notice.push('.');
            (format!("[{notice}]"), Some(notice))
        }
        None => {
            let content = String::from_utf8(page.content.clone())
                .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned());
            let notice = next_offset.map(|next| {
                let why = match page.stop {
                    Some(Stop::MaxBytes) => format!("the {} page budget", format_size(limits.max_bytes as u64)),
                    Some(Stop::MaxLines) => format!("the {}-line page limit", limits.max_lines),
                    _ => "the requested limit".to_owned(),
                };
                format!(
                    "Showing lines {offset}-{} of {} (stopped at {why}); {} more lines not shown. Continue with \
                     offset={next}.",
                    page.end_line,
                    page.total_lines,
                    page.total_lines - page.end_line
                )
            });
            (content, notice)
        }
    };
    Ok(json!({
        "path": path,
        "relative_path": resolved.relative,
        "content": content,
        "start_line": offset,
        "end_line": page.end_line,
        "total_lines": page.total_lines,
        "byte_size": byte_size,
        "revision": revision,
        "truncated": has_more,
        "truncated_by": if has_more { page.stop.map(Stop::as_str) } else { None },
        "has_more": has_more,
        "next_offset": next_offset,
        "first_line_exceeds_limit": page.first_line_too_long.is_some(),
        "notice": notice,
    }))
}

/// `512B`, `1.5KiB`, `10.0MiB`.
fn format_size(bytes: u64) -> String {
    let value = bytes as f64;
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KiB", value / 1024.0)
    } else {
        format!("{:.1}MiB", value / (1024.0 * 1024.0))
    }
}

#[async_trait]
impl Tool for ReadTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The file read (absolute lexical path), its text, and whether the page was partial
    /// (cut short, not starting at line 1, not reaching the end, or an omitted long line).
    fn observed_read(
        &self,
        _arguments: &Value,
        output: &Value,
        _ctx: &ToolHostContext,
    ) -> Option<ReadObservation> {
        if output.get("error").is_some() {
            return None;
        }
        let path = PathBuf::from(output.get("path")?.as_str()?);
        if output.get("kind").and_then(Value::as_str) == Some("image") {
            return Some(ReadObservation {
                path,
                content: None,
                partial: false,
            });
        }
        let flag = |key: &str| output.get(key).and_then(Value::as_bool).unwrap_or(false);
        let number = |key: &str| output.get(key).and_then(Value::as_u64).unwrap_or(0);
        let partial = flag("truncated")
            || flag("first_line_exceeds_limit")
            || number("start_line") > 1
            || number("end_line") < number("total_lines");
        let content = output
            .get("content")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Some(ReadObservation {
            path,
            content,
            partial,
        })
    }

    async fn execute<'a>(
        &self,
        arguments: Value,
        ctx: ToolContext<'a>,
    ) -> Result<ToolResult, ToolError> {
        Ok(finish(self.run(arguments, ctx).await))
    }
}
