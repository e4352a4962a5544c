//! Head and tail truncation of text by lines and bytes, and the notice that says what was cut.
//!
//! Line counting: an empty text has no lines; lines are separated by `\n`, and a trailing `\n`
//! does not start another line (`"a\nb\n"` has two). A truncated result is the kept lines joined
//! by `\n`, without a trailing newline. Cuts fall between lines; only a single line longer
//! than the byte limit is cut inside (tail: its end is kept, moved forward to a character
//! boundary, and `last_line_partial` is set; head: nothing is kept and
//! `first_line_exceeds_limit` is set).

use crate::OutputLimits;
use std::fmt;
use std::path::Path;

/// Which end of a text a truncation keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptEnd {
    /// The first lines (reads, `git_inspect`).
    Head,
    /// The last lines (command output).
    Tail,
}

/// Which limit cut the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncatedBy {
    /// The line limit.
    Lines,
    /// The byte limit.
    Bytes,
}

/// What a truncation kept. Invariant: `content` is a valid UTF-8 substring of the input, at
/// most `max_bytes` long and at most `max_lines` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// The kept text (the input unchanged when nothing was cut).
    pub content: String,
    /// Which end was kept.
    pub kept: KeptEnd,
    /// The limit that cut the text; `None` when nothing was cut.
    pub truncated_by: Option<TruncatedBy>,
    /// Lines in the input.
    pub total_lines: usize,
    /// Bytes in the input.
    pub total_bytes: usize,
    /// Lines in `content`.
    pub output_lines: usize,
    /// Bytes in `content`.
    pub output_bytes: usize,
    /// Tail only: the one kept line is the end of a line longer than the byte limit.
    pub last_line_partial: bool,
    /// Head only: the first line alone is longer than the byte limit, so nothing was kept.
    pub first_line_exceeds_limit: bool,
}

impl Truncation {
    /// Whether anything was cut.
    #[must_use]
    pub const fn is_truncated(&self) -> bool {
        self.truncated_by.is_some()
    }

    /// The notice for this truncation, or `None` when nothing was cut.
    #[must_use]
    pub fn notice(&self, full: FullText<'_>) -> Option<String> {
        self.is_truncated().then(|| {
            TruncationNotice {
                kept: self.kept,
                shown_lines: self.output_lines as u64,
                total_lines: self.total_lines as u64,
                shown_bytes: self.output_bytes as u64,
                total_bytes: self.total_bytes as u64,
                partial_line: self.last_line_partial,
                full,
            }
            .to_string()
        })
    }

    fn unchanged(text: &str, kept: KeptEnd, total_lines: usize) -> Self {
        Self {
            content: text.to_owned(),
            kept,
            truncated_by: None,
            total_lines,
            total_bytes: text.len(),
            output_lines: total_lines,
            output_bytes: text.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
        }
    }
}

/// Where the whole text can be found, for the notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FullText<'a> {
    /// Saved to this file.
    Saved(&'a Path),
    /// Not kept anywhere.
    NotSaved,
    /// How to get the rest (e.g. "narrow the path or lower the limit").
    Hint(&'a str),
}

/// A one-line bracketed notice: how much is shown of how much, and where the rest is.
///
/// ```
/// use kun_builtin_tools::output::{FullText, KeptEnd, TruncationNotice};
/// use std::path::Path;
/// let notice = TruncationNotice {
///     kept: KeptEnd::Tail,
///     shown_lines: 2_000,
///     total_lines: 15_320,
///     shown_bytes: 51_200,
///     total_bytes: 1_258_291,
///     partial_line: false,
///     full: FullText::Saved(Path::new("/tmp/kun-output/x.log")),
/// };
/// assert_eq!(
///     notice.to_string(),
///     "[showing the last 2,000 of 15,320 lines (50.0 KB of 1.2 MB); full output: /tmp/kun-output/x.log]"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncationNotice<'a> {
    /// Which end is shown.
    pub kept: KeptEnd,
    /// Lines shown.
    pub shown_lines: u64,
    /// Lines in the whole text.
    pub total_lines: u64,
    /// Bytes shown.
    pub shown_bytes: u64,
    /// Bytes in the whole text.
    pub total_bytes: u64,
    /// Whether the shown line is only the end of a longer line.
    pub partial_line: bool,
    /// Where the whole text is.
    pub full: FullText<'a>,
}

impl fmt::Display for TruncationNotice<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let end = match self.kept {
            KeptEnd::Head => "first",
            KeptEnd::Tail => "last",
        };
        let noun = if self.total_lines == 1 {
            "line"
        } else {
            "lines"
        };
        write!(
            f,
            "[showing the {end} {} of {} {noun} ({} of {})",
            format_count(self.shown_lines),
            format_count(self.total_lines),
            format_size(self.shown_bytes),
            format_size(self.total_bytes),
        )?;
        if self.partial_line {
            f.write_str("; the shown line is only the end of a longer line")?;
        }
        match self.full {
            FullText::Saved(path) => write!(f, "; full output: {}]", path.display()),
            FullText::NotSaved => f.write_str("; the full output was not kept]"),
            FullText::Hint(hint) => write!(f, "; {hint}]"),
        }
    }
}

/// A byte count for people: `512B`, `50.0 KB`, `1.2 MB` (base 1024, rounded to one decimal).
#[must_use]
pub fn format_size(bytes: u64) -> String {
    const KIB: u128 = 1024;
    const MIB: u128 = 1024 * 1024;
    let exact = u128::from(bytes);
    let tenths = |unit: u128| (exact * 10 + unit / 2) / unit;
    if exact < KIB {
        format!("{bytes}B")
    } else if tenths(KIB) < 10 * 1024 {
        let t = tenths(KIB);
        format!("{}.{} KB", t / 10, t % 10)
    } else {
        let t = tenths(MIB);
        format!("{}.{} MB", t / 10, t % 10)
    }
}

/// A count with thousands separators: `15,320`.
#[must_use]
pub fn format_count(count: u64) -> String {
    let digits = count.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Lines in `text` under the module's counting rule.
pub(crate) fn count_lines(text: &[u8]) -> usize {
    let newlines = text.iter().filter(|&&b| b == b'\n').count();
    match text.last() {
        None => 0,
        Some(b'\n') => newlines,
        Some(_) => newlines + 1,
    }
}

/// The text without one trailing newline: the part whose `\n`-split pieces are the lines.
fn body(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
}

/// Keeps the first lines of `text` within `limits`.
///
/// ```
/// use kun_builtin_tools::OutputLimits;
/// use kun_builtin_tools::output::{truncate_head, TruncatedBy};
/// let cut = truncate_head("a\nb\nc\n", OutputLimits::new(2, 100));
/// assert_eq!(cut.content, "a\nb");
/// assert_eq!(cut.truncated_by, Some(TruncatedBy::Lines));
/// ```
#[must_use]
pub fn truncate_head(text: &str, limits: OutputLimits) -> Truncation {
    let total_lines = count_lines(text.as_bytes());
    if total_lines <= limits.max_lines && text.len() <= limits.max_bytes {
        return Truncation::unchanged(text, KeptEnd::Head, total_lines);
    }
    let body = body(text);
    let (lines, bytes, stop) = take_lines(body.split('\n'), limits);
    let Some(stop) = stop else {
        // Only the trailing newline was over the limit: every line fits.
        return Truncation::unchanged(body, KeptEnd::Head, total_lines);
    };
    Truncation {
        content: body[..bytes].to_owned(),
        kept: KeptEnd::Head,
        truncated_by: Some(stop),
        total_lines,
        total_bytes: text.len(),
        output_lines: lines,
        output_bytes: bytes,
        last_line_partial: false,
        first_line_exceeds_limit: lines == 0,
    }
}

/// Keeps the last lines of `text` within `limits`.
///
/// ```
/// use kun_builtin_tools::OutputLimits;
/// use kun_builtin_tools::output::truncate_tail;
/// let cut = truncate_tail("a\nb\nc\n", OutputLimits::new(2, 100));
/// assert_eq!(cut.content, "b\nc");
/// let long = truncate_tail("xyz", OutputLimits::new(10, 2));
/// assert_eq!((long.content.as_str(), long.last_line_partial), ("yz", true));
/// ```
#[must_use]
pub fn truncate_tail(text: &str, limits: OutputLimits) -> Truncation {
    let total_lines = count_lines(text.as_bytes());
    if total_lines <= limits.max_lines && text.len() <= limits.max_bytes {
        return Truncation::unchanged(text, KeptEnd::Tail, total_lines);
    }
    let body = body(text);
    let (lines, bytes, stop) = take_lines(body.rsplit('\n'), limits);
    let Some(stop) = stop else {
        return Truncation::unchanged(body, KeptEnd::Tail, total_lines);
    };
    let mut cut = Truncation {
        content: body[body.len() - bytes..].to_owned(),
        kept: KeptEnd::Tail,
        truncated_by: Some(stop),
        total_lines,
        total_bytes: text.len(),
        output_lines: lines,
        output_bytes: bytes,
        last_line_partial: false,
        first_line_exceeds_limit: false,
    };
    if lines == 0 {
        let last = body.rsplit('\n').next().unwrap_or_default();
        let mut start = last.len().saturating_sub(limits.max_bytes);
        while !last.is_char_boundary(start) {
            start += 1;
        }
        cut.content = last[start..].to_owned();
        cut.output_lines = 1;
        cut.output_bytes = cut.content.len();
        cut.last_line_partial = true;
    }
    cut
}

/// Takes whole lines while both limits hold: (lines taken, bytes taken including the joining
/// newlines, the limit that stopped it — `None` when every line fit).
fn take_lines<'a>(
    lines: impl Iterator<Item = &'a str>,
    limits: OutputLimits,
) -> (usize, usize, Option<TruncatedBy>) {
    let (mut taken, mut bytes) = (0usize, 0usize);
    for line in lines {
        if taken == limits.max_lines {
            return (taken, bytes, Some(TruncatedBy::Lines));
        }
        let add = line.len() + usize::from(taken > 0);
        if bytes + add > limits.max_bytes {
            return (taken, bytes, Some(TruncatedBy::Bytes));
        }
        bytes += add;
        taken += 1;
    }
    (taken, bytes, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(lines: usize, bytes: usize) -> OutputLimits {
        OutputLimits::new(lines, bytes)
    }

    #[test]
    fn line_counting_rule() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"\n\n"), 2);
    }

    #[test]
    fn sizes_and_counts_read_well() {
        assert_eq!(format_size(0), "0B");
        assert_eq!(format_size(1023), "1023B");
        assert_eq!(format_size(1024), "1.0 KB");
        assert_eq!(format_size(51_200), "50.0 KB");
        assert_eq!(format_size(1_258_291), "1.2 MB");
        assert_eq!(format_size(1_048_575), "1.0 MB");
        assert_eq!(format_size(1_587), "1.5 KB");
        assert_eq!(format_size(u64::MAX), "17592186044416.0 MB");
        assert_eq!(format_count(0), "0");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count(1_000), "1,000");
        assert_eq!(format_count(15_320), "15,320");
        assert_eq!(format_count(1_234_567), "1,234,567");
    }

    #[test]
    fn within_limits_is_unchanged() {
        for cut in [
            truncate_head("a\nb\n", limits(2, 4)),
            truncate_tail("a\nb\n", limits(2, 4)),
        ] {
            assert_eq!(cut.content, "a\nb\n");
            assert!(!cut.is_truncated());
            assert_eq!(cut.notice(FullText::NotSaved), None);
        }
    }

    #[test]
    fn head_stops_at_the_byte_limit_between_lines() {
        let cut = truncate_head("aaa\nbbb\nccc\n", limits(10, 8));
        assert_eq!(cut.content, "aaa\nbbb");
        assert_eq!(cut.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!(
            (
                cut.output_lines,
                cut.output_bytes,
                cut.total_lines,
                cut.total_bytes
            ),
            (2, 7, 3, 12)
        );
    }

    #[test]
    fn head_with_an_oversized_first_line_keeps_nothing() {
        let cut = truncate_head("abcdef\nx", limits(10, 3));
        assert_eq!(cut.content, "");
        assert!(cut.first_line_exceeds_limit);
        assert_eq!(cut.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn only_the_trailing_newline_over_the_limit_is_not_a_cut() {
        let cut = truncate_tail("abc\n", limits(10, 3));
        assert_eq!(cut.content, "abc");
        assert!(!cut.is_truncated());
    }

    #[test]
    fn tail_cuts_a_long_last_line_on_a_char_boundary() {
        // "é" is two bytes: the last 5 bytes of "aéééé" start inside a character.
        let cut = truncate_tail("x\naéééé", limits(10, 5));
        assert!(cut.last_line_partial);
        assert_eq!(cut.content, "éé");
        assert_eq!(cut.output_bytes, 4);
        assert_eq!(cut.output_lines, 1);
    }

    #[test]
    fn tail_keeps_whole_multibyte_lines() {
        let cut = truncate_tail("日本\n語の\nテキスト", limits(2, 100));
        assert_eq!(cut.content, "語の\nテキスト");
        assert_eq!(cut.truncated_by, Some(TruncatedBy::Lines));
    }

    #[test]
    fn notices_say_what_and_where() {
        let cut = truncate_head("a\nb\nc", limits(1, 100));
        assert_eq!(
            cut.notice(FullText::Hint("narrow the path")).as_deref(),
            Some("[showing the first 1 of 3 lines (1B of 5B); narrow the path]")
        );
        let partial = truncate_tail("abcdef", limits(1, 2));
        let text = partial
            .notice(FullText::Saved(Path::new("/tmp/o.log")))
            .unwrap();
        assert_eq!(
            text,
            "[showing the last 1 of 1 line (2B of 6B); the shown line is only the end of a longer line; \
             full output: /tmp/o.log]"
        );
    }
}
