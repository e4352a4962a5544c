//! What `read` returns ([`ReadOutput`]) and what the model reads of it.
//!
//! Text pages are numbered lines: the line number right-aligned to the width of the largest
//! number on the page, then `│` (U+2502), then the line as it is:
//!
//! ```text
//!  9│fn main() {
//! 10│    println!("hi");
//! ```
//!
//! Why this shape (client-conventions §5, §6): Claude Code's own Read prints numbered lines
//! (`<n><TAB>` today, a 6-column number and `→` before), codex's `read_file` prints
//! `L<n>: `; models are trained on both, so the number comes first. A tab separator is
//! ambiguous in tab-indented files (the reason openclaude moved off it), so the separator is
//! a character no source line starts with; `│` reads as a gutter, not as content, and unlike
//! `|` it is not Markdown or shell syntax. Padding to the page's widest number (not a fixed
//! six columns) keeps the columns aligned at two to five bytes less per line.
//!
//! A header line comes first only when the page is not the whole file:
//! `lines 1–2000 of 5120; continue with offset 2001`. An image is one line
//! (`image/png, 640×480, 12.3 KiB`) followed by the image block.

use super::paging::Stop;
use crate::OutputLimits;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// What `read` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReadOutput {
    /// The file, relative to the workspace root.
    pub path: String,
    /// `<size>:<mtime in ns>`; pass it as `expected_revision` when reading the next page.
    pub revision: String,
    /// Size of the whole file in bytes.
    pub byte_size: u64,
    /// The page of text, or the image.
    #[serde(flatten)]
    pub body: ReadBody,
}

/// A text page or an image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReadBody {
    /// A page of a text file.
    Text(TextPage),
    /// An image file.
    Image(ImageOutput),
}

/// A page of a text file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TextPage {
    /// The lines of the page, each ending with `\n` (a `\r` before it dropped), as in the file.
    pub content: String,
    /// The first line of the page (1-based).
    pub start_line: usize,
    /// The last line of the page.
    pub end_line: usize,
    /// Lines in the whole file.
    pub total_lines: usize,
    /// Where the next page starts, when the page does not reach the end of the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
    /// What cut the page short, when something did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_by: Option<TruncatedBy>,
    /// The page's first line alone is longer than a page may hold (this many bytes), so it
    /// was left out; `content` is empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted_line_bytes: Option<u64>,
}

/// What cut a page short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TruncatedBy {
    /// The `limit` argument.
    RequestedLimit,
    /// The tool's line limit.
    MaxLines,
    /// The tool's byte budget.
    MaxBytes,
}

impl From<Stop> for TruncatedBy {
    fn from(stop: Stop) -> Self {
        match stop {
            Stop::Requested => Self::RequestedLimit,
            Stop::MaxLines => Self::MaxLines,
            Stop::MaxBytes => Self::MaxBytes,
        }
    }
}

/// An image file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImageOutput {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
    /// Width in pixels, when the header could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u64>,
    /// Height in pixels, when the header could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u64>,
    /// The file's bytes, base64.
    pub data_base64: String,
}

/// What the model reads of a read (see the module docs).
pub(crate) fn render(output: &ReadOutput, limits: OutputLimits) -> String {
    match &output.body {
        ReadBody::Text(page) => render_page(page, limits),
        ReadBody::Image(image) => {
            let mut line = image.mime_type.clone();
            if let (Some(width), Some(height)) = (image.width, image.height) {
                let _ = write!(line, ", {width}×{height}");
            }
            let _ = write!(line, ", {}", crate::output::format_size(output.byte_size));
            line
        }
    }
}

fn render_page(page: &TextPage, limits: OutputLimits) -> String {
    let mut out = String::new();
    if let Some(bytes) = page.omitted_line_bytes {
        let _ = write!(
            out,
            "line {} is {} long, more than the {} a page holds, so it is not shown; search inside \
             it with grep",
            page.start_line,
            crate::output::format_size(bytes),
            crate::output::format_size(limits.max_bytes as u64),
        );
        if let Some(next) = page.next_offset {
            let _ = write!(out, ", or continue with offset {next}");
        }
        return out;
    }
    if page.total_lines == 0 {
        return "(empty file)".to_owned();
    }
    let whole = page.start_line <= 1 && page.next_offset.is_none();
    if !whole {
        let _ = write!(
            out,
            "lines {}–{} of {}",
            page.start_line, page.end_line, page.total_lines
        );
        if let Some(next) = page.next_offset {
            let _ = write!(out, "; continue with offset {next}");
        }
        out.push('\n');
    }
    let width = decimal_digits(page.end_line.max(1));
    // The page's lines, each with its number and the bar (3 bytes); a hint only.
    let lines = page
        .end_line
        .saturating_sub(page.start_line)
        .saturating_add(1);
    out.reserve(
        lines
            .saturating_mul(width + 3)
            .saturating_add(page.content.len())
            .min(4 * page.content.len() + 64),
    );
    for (index, line) in page.content.lines().enumerate() {
        push_line_number(&mut out, page.start_line + index, width);
        out.push('│');
        out.push_str(line);
        out.push('\n');
    }
    if out.ends_with('\n') {
        out.pop();
    }
    out
}

/// How many decimal digits `n` has.
const fn decimal_digits(mut n: usize) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

/// Appends `number` right-aligned in `width` columns. By hand: `format!` with a width costs
/// several hundred instructions a line, most of a page's rendering.
fn push_line_number(out: &mut String, number: usize, width: usize) {
    const DIGITS: &[u8; 10] = b"0123456789";
    let mut buffer = [b' '; 20];
    let mut start = buffer.len();
    let mut rest = number;
    loop {
        start -= 1;
        buffer[start] = DIGITS[rest % 10];
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for _ in buffer.len() - start..width {
        out.push(' ');
    }
    out.push_str(std::str::from_utf8(&buffer[start..]).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_are_right_aligned_like_format_would() {
        for (number, width) in [(0, 1), (7, 1), (7, 3), (10, 2), (999, 5), (usize::MAX, 20)] {
            let mut out = String::new();
            push_line_number(&mut out, number, width);
            assert_eq!(out, format!("{number:>width$}"));
            assert_eq!(decimal_digits(number), number.to_string().len());
        }
    }

    fn page(content: &str, start: usize, end: usize, total: usize) -> TextPage {
        TextPage {
            content: content.to_owned(),
            start_line: start,
            end_line: end,
            total_lines: total,
            next_offset: (end < total).then_some(end + 1),
            truncated_by: (end < total).then_some(TruncatedBy::MaxLines),
            omitted_line_bytes: None,
        }
    }

    #[test]
    fn renderings() {
        let limits = OutputLimits::default();
        let cases: [(&str, TextPage, &str); 5] = [
            (
                "whole file: no header",
                page("fn main() {\n}\n", 1, 2, 2),
                "1│fn main() {\n2│}",
            ),
            (
                "numbers aligned to the widest on the page",
                page("a\nb\n", 9, 10, 10),
                "lines 9–10 of 10\n 9│a\n10│b",
            ),
            (
                "more to come: the header says where",
                page("x\n\ty\n", 1, 2, 5120),
                "lines 1–2 of 5120; continue with offset 3\n1│x\n2│\ty",
            ),
            ("empty file", page("", 1, 0, 0), "(empty file)"),
            ("UTF-8 as is", page("café ✓\n", 1, 1, 1), "1│café ✓"),
        ];
        for (name, page, expected) in cases {
            assert_eq!(render_page(&page, limits), expected, "{name}");
        }
        let long = TextPage {
            omitted_line_bytes: Some(200_000),
            content: String::new(),
            ..page("", 3, 3, 9)
        };
        assert_eq!(
            render_page(&long, limits),
            "line 3 is 195.3 KB long, more than the 50.0 KB a page holds, so it is not shown; \
             search inside it with grep, or continue with offset 4"
        );
    }
}
