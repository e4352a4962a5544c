//! The `read` tool: pages through text files, returns images as base64.
//!
//! * The path is resolved for reading (sandbox-checked) and opened without following a final
//!   symlink.
//! * Files up to 256 KiB (`INLINE_READ_BYTES`) are read on the calling task (cheaper than
//!   two thread hand-offs); larger ones in the blocking pool.
//! * `revision` is `<size>:<mtime in ns>` ([`FileRevision`]); passing the previous page's
//!   revision as `expected_revision` makes the read fail with `reason: "file_revision_mismatch"`
//!   if the file changed between pages.
//! * PNG, JPEG, GIF and WEBP files (by magic bytes) come back as an image block with a line
//!   giving its type, size and dimensions; other files with a NUL byte in the first 8 KiB are
//!   refused (`reason: "binary_file"`).
//! * Text comes back a page at a time ([`paging`]): `offset` (1-based line) and `limit`,
//!   bounded by the [`OutputLimits`] given at construction. The model reads numbered lines
//!   ([`render`]); the output says where the next page starts (`next_offset`) and what stopped
//!   this one (`truncated_by`). A line longer than the whole byte budget is left out
//!   (`omitted_line_bytes`) and the model is told how to get at it.

mod paging;
mod render;
mod sniff;

pub use render::{ImageOutput, ReadBody, ReadOutput, TextPage, TruncatedBy};

use super::{no_follow, run_blocking};
use crate::{Failure, OutputLimits};
use async_trait::async_trait;
use base64::Engine as _;
use kun_ports::{
    ContentBlock, FileRevision, PathAccess, ReadObservation, ResolvedPath, SideEffect, ToolContext,
    ToolHostContext, ToolKind, ToolPolicy, ToolSpec, TypedTool,
};
use paging::{Page, PageRequest, Stop};
use schemars::JsonSchema;
use serde::Deserialize;
use sniff::ContentKind;
use std::fs::{File, Metadata};
use std::io::{BufReader, Read as _};

const DESCRIPTION: &str = "Read a file. Text comes back a page at a time as numbered lines (`  12│text`; the \
number and `│` are not part of the file): use `offset` (1-based line) and `limit` to choose the page; a page that \
does not reach the end says which offset continues. Pass the previous page's `revision` as `expected_revision` to be \
told if the file changed in between. Images (PNG, JPEG, GIF, WEBP) come back as images; other binary files are \
refused.";

/// Files up to this size are read on the calling task: reading them from the page cache
/// costs less than handing the work to the blocking pool and back (two thread wake-ups).
/// Larger files are read in the blocking pool.
pub(crate) const INLINE_READ_BYTES: u64 = 256 * 1024;

/// The read buffer after the sniffed head: the rest of the file, within these bounds.
const MIN_READ_BUFFER: usize = 4 * 1024;
const MAX_READ_BUFFER: usize = 64 * 1024;

/// Images larger than this are refused by default.
pub const DEFAULT_MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// Arguments of `read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
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
        let spec = ToolSpec::typed::<ReadArgs, ReadOutput>("read", DESCRIPTION)
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

    async fn read(&self, args: ReadArgs, ctx: ToolContext<'_>) -> Result<ReadOutput, Failure> {
        if args.path.trim().is_empty() {
            return Err(Failure::invalid(
                "path is empty: name a file (find one with ls, glob or grep)",
            )
            .with("reason", "missing_path"));
        }
        let resolved = ctx.resolve_path(&args.path, PathAccess::Read)?;
        let limits = self.limits;
        let max_image_bytes = self.max_image_bytes;
        let at = super::beneath(&resolved, &ctx);
        // Opening never waits: the path was resolved just above, and a FIFO is refused
        // without blocking (`no_follow::open_file`).
        let file = no_follow::open_file(&at).map_err(|err| err.named(&resolved.relative))?;
        let meta = file.metadata()?;
        if meta.len() <= INLINE_READ_BYTES {
            read_file(&resolved, file, &meta, &args, limits, max_image_bytes)
        } else {
            run_blocking(move || read_file(&resolved, file, &meta, &args, limits, max_image_bytes))
                .await
        }
    }
}

fn read_file(
    resolved: &ResolvedPath,
    mut file: File,
    meta: &Metadata,
    args: &ReadArgs,
    limits: OutputLimits,
    max_image_bytes: u64,
) -> Result<ReadOutput, Failure> {
    let path = resolved.relative.clone();
    let revision = FileRevision::of(meta).to_string();
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
                    crate::output::format_size(meta.len()),
                    crate::output::format_size(max_image_bytes)
                ))
                .with("reason", "file_too_large"));
            }
            let mut data = head;
            file.read_to_end(&mut data)?;
            let size = imagesize::blob_size(&data).ok();
            Ok(ReadOutput {
                path,
                revision,
                byte_size: meta.len(),
                body: ReadBody::Image(ImageOutput {
                    mime_type: mime_type.to_owned(),
                    width: size.map(|s| s.width as u64),
                    height: size.map(|s| s.height as u64),
                    data_base64: base64::engine::general_purpose::STANDARD.encode(&data),
                }),
            })
        }
        ContentKind::Text => {
            let offset = args.offset.unwrap_or(1).max(1);
            let (max_lines, line_stop) = match args.limit {
                Some(limit) if limit < limits.max_lines => (limit.max(1), Stop::Requested),
                _ => (limits.max_lines, Stop::MaxLines),
            };
            let request = PageRequest { offset, max_lines, line_stop, max_bytes: limits.max_bytes };
            let rest = usize::try_from(meta.len())
                .unwrap_or(usize::MAX)
                .saturating_sub(head.len());
            let capacity = rest.clamp(MIN_READ_BUFFER, MAX_READ_BUFFER);
            let reader = BufReader::with_capacity(capacity, std::io::Cursor::new(head).chain(file));
            let page = paging::read_page(reader, request)?;
            let body = text_page(resolved, offset, page)?;
            Ok(ReadOutput {
                path,
                revision,
                byte_size: meta.len(),
                body: ReadBody::Text(body),
            })
        }
    }
}

/// The text of one page, or `invalid_arguments` for an offset past the end.
fn text_page(resolved: &ResolvedPath, offset: usize, page: Page) -> Result<TextPage, Failure> {
    if offset > page.total_lines.max(1) {
        return Err(Failure::invalid(format!(
            "offset {offset} is past the end of {}, which has {} lines",
            resolved.relative, page.total_lines
        ))
        .with("total_lines", page.total_lines));
    }
    let has_more = page.end_line < page.total_lines;
    let (content, omitted_line_bytes) = match page.first_line_too_long {
        Some(len) => (String::new(), Some(len as u64)),
        None => (
            String::from_utf8(page.content)
                .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned()),
            None,
        ),
    };
    let truncated_by = if has_more || omitted_line_bytes.is_some() {
        page.stop.map(TruncatedBy::from)
    } else {
        None
    };
    Ok(TextPage {
        content,
        start_line: offset,
        end_line: page.end_line,
        total_lines: page.total_lines,
        next_offset: has_more.then_some(page.end_line + 1),
        truncated_by,
        omitted_line_bytes,
    })
}

#[async_trait]
impl TypedTool for ReadTool {
    type Args = ReadArgs;
    type Output = ReadOutput;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn render(&self, output: &ReadOutput) -> String {
        render::render(output, self.limits)
    }

    fn media(&self, output: &ReadOutput) -> Vec<ContentBlock> {
        match &output.body {
            ReadBody::Image(image) => vec![ContentBlock::image(
                image.data_base64.clone(),
                image.mime_type.clone(),
            )],
            ReadBody::Text(_) => Vec::new(),
        }
    }

    /// The file read (as the call named it), its text and revision, and whether the page was
    /// partial (not starting at line 1, not reaching the end, or an omitted long line).
    fn observed_read(
        &self,
        args: &ReadArgs,
        output: &ReadOutput,
        _ctx: &ToolHostContext,
    ) -> Option<ReadObservation> {
        let revision = output.revision.parse().ok();
        let (content, partial) = match &output.body {
            ReadBody::Image(_) => (None, false),
            ReadBody::Text(page) => (
                Some(page.content.clone()),
                page.start_line > 1
                    || page.next_offset.is_some()
                    || page.omitted_line_bytes.is_some()
                    || page.end_line < page.total_lines,
            ),
        };
        Some(ReadObservation {
            path: args.path.clone().into(),
            content,
            partial,
            revision,
        })
    }

    async fn run(&self, args: ReadArgs, ctx: ToolContext<'_>) -> Result<ReadOutput, Failure> {
        self.read(args, ctx).await
    }
}
