//! The unified diff of an edit, computed only around the replaced regions.
//!
//! Each replacement gets a window of its lines plus [`CONTEXT`] + 1 lines on either side;
//! windows that touch are merged; each window is diffed once with `similar`, and hunk line
//! numbers are shifted to the window's place in the file. Outside the windows the old and new
//! files are identical, so the result equals a whole-file diff at a fraction of the cost.
//! Lines are shown with `\n` endings (a `\r` before a line break is dropped from the display).

use super::engine::Replacement;
use memchr::{memchr, memchr_iter, memrchr};
use similar::{ChangeTag, TextDiff};
use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::Range;

/// Lines of context around each change, as in `diff -U4`.
pub const CONTEXT: usize = 4;

/// A diff and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditDiff {
    /// The unified diff, with `--- a/<path>` / `+++ b/<path>` headers.
    pub unified: String,
    /// The 1-based line (in the new file) of the first changed line, if any changed.
    pub first_changed_line: Option<usize>,
}

/// The unified diff between `old` and `new`, where `new` is `old` with `replacements`
/// (sorted, disjoint) applied. `label` names the file in the headers.
#[must_use]
pub fn unified_diff(old: &str, new: &str, replacements: &[Replacement], label: &str) -> EditDiff {
    let mut unified = format!("--- a/{label}\n+++ b/{label}\n");
    let mut first_changed_line = None;
    let mut counted_to = 0; // old offset up to which newlines are counted
    let mut old_line = 0; // newlines in old[..counted_to]
    let mut line_shift: isize = 0; // new line number minus old line number after the windows so far
    let mut byte_shift: isize = 0; // new offset minus old offset after the windows so far
    for window in windows(old, replacements) {
        old_line += count_newlines(&old[counted_to..window.old.start]);
        counted_to = window.old.start;
        let new_start = offset(window.old.start, byte_shift);
        let new_end = offset(window.old.end, byte_shift + window.growth);
        let old_text = display(&old[window.old.clone()]);
        let new_text = display(&new[new_start..new_end]);
        let new_line = offset(old_line, line_shift);
        let first = write_hunks(&mut unified, &old_text, &new_text, old_line, new_line);
        if first_changed_line.is_none() {
            first_changed_line = first;
        }
        let old_lines = count_newlines(&old_text);
        let new_lines = count_newlines(&new_text);
        line_shift += to_isize(new_lines) - to_isize(old_lines);
        byte_shift += window.growth;
    }
    EditDiff {
        unified,
        first_changed_line,
    }
}

/// A window of the old file and how much longer it gets.
struct Window {
    old: Range<usize>,
    growth: isize,
}

fn windows(old: &str, replacements: &[Replacement]) -> Vec<Window> {
    let bytes = old.as_bytes();
    let mut out: Vec<Window> = Vec::new();
    for r in replacements {
        let start = lines_back(bytes, r.range.start, CONTEXT + 1);
        let end = lines_forward(bytes, r.range.end, CONTEXT + 1);
        let growth = to_isize(r.text.len()) - to_isize(r.range.len());
        match out.last_mut() {
            Some(last) if start <= last.old.end => {
                last.old.end = last.old.end.max(end);
                last.growth += growth;
            }
            _ => out.push(Window {
                old: start..end,
                growth,
            }),
        }
    }
    out
}

/// The start of the line `count` lines before the one holding `pos`.
fn lines_back(bytes: &[u8], pos: usize, count: usize) -> usize {
    let mut start = memrchr(b'\n', &bytes[..pos]).map_or(0, |at| at + 1);
    for _ in 0..count {
        if start == 0 {
            break;
        }
        start = memrchr(b'\n', &bytes[..start - 1]).map_or(0, |at| at + 1);
    }
    start
}

/// The end (after the newline) of the line `count` lines after the one holding `pos`.
fn lines_forward(bytes: &[u8], pos: usize, count: usize) -> usize {
    let mut end = pos;
    for _ in 0..=count {
        match memchr(b'\n', &bytes[end..]) {
            Some(at) => end += at + 1,
            None => return bytes.len(),
        }
        if end == bytes.len() {
            break;
        }
    }
    end
}

/// Writes the hunks of one window; returns the first changed line (1-based, new side).
fn write_hunks(
    out: &mut String,
    old: &str,
    new: &str,
    old_base: usize,
    new_base: usize,
) -> Option<usize> {
    let diff = TextDiff::from_lines(old, new);
    let mut first = None;
    for group in diff.grouped_ops(CONTEXT) {
        let (Some(head), Some(tail)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = head.old_range().start..tail.old_range().end;
        let new_range = head.new_range().start..tail.new_range().end;
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            hunk_range(old_base + old_range.start, old_range.len()),
            hunk_range(new_base + new_range.start, new_range.len())
        );
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                if sign != ' ' && first.is_none() {
                    first = Some(new_base + change.new_index().unwrap_or(op.new_range().start) + 1);
                }
                out.push(sign);
                out.push_str(change.value());
                if change.missing_newline() {
                    out.push_str("\n\\ No newline at end of file\n");
                }
            }
        }
    }
    first
}

/// A hunk range: `start,len`, with the unified-diff convention for empty ranges.
fn hunk_range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// The text with `\r\n` shown as `\n`.
fn display(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

fn count_newlines(text: &str) -> usize {
    memchr_iter(b'\n', text.as_bytes()).count()
}

fn to_isize(value: usize) -> isize {
    isize::try_from(value).unwrap_or(isize::MAX)
}

fn offset(base: usize, shift: isize) -> usize {
    base.checked_add_signed(shift).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::edit::{Edit, apply_edits};

    fn diff_of(old: &str, edits: &[Edit<'_>]) -> EditDiff {
        let applied = apply_edits(old, edits).unwrap();
        unified_diff(old, &applied.content, &applied.replacements, "f.txt")
    }

    /// The whole-file diff `similar` would produce, for comparison.
    fn reference(old: &str, new: &str) -> String {
        TextDiff::from_lines(old, new)
            .unified_diff()
            .context_radius(CONTEXT)
            .header("a/f.txt", "b/f.txt")
            .to_string()
    }

    #[test]
    fn windowed_diff_equals_whole_file_diff() {
        let old: String = (1..=60).map(|i| format!("line {i}\n")).collect();
        let edits = [
            Edit {
                old_text: "line 10\n",
                new_text: "line ten\n",
            },
            Edit {
                old_text: "line 14\nline 15\n",
                new_text: "",
            },
            Edit {
                old_text: "line 50\n",
                new_text: "line 50\nline 50b\n",
            },
        ];
        let diff = diff_of(&old, &edits);
        let new = apply_edits(&old, &edits).unwrap().content;
        assert_eq!(diff.unified, reference(&old, &new));
        assert_eq!(diff.first_changed_line, Some(10));
    }

    #[test]
    fn edits_at_the_edges_and_missing_final_newline() {
        let old = "first\nsecond\nthird";
        let diff = diff_of(
            old,
            &[Edit {
                old_text: "third",
                new_text: "THIRD",
            }],
        );
        let new = "first\nsecond\nTHIRD";
        assert_eq!(diff.unified, reference(old, new));
        assert_eq!(diff.first_changed_line, Some(3));
        let diff = diff_of(
            old,
            &[Edit {
                old_text: "first\n",
                new_text: "",
            }],
        );
        assert_eq!(diff.unified, reference(old, "second\nthird"));
        assert_eq!(diff.first_changed_line, Some(1));
    }

    #[test]
    fn crlf_is_displayed_as_lf() {
        let old = "a\r\nb\r\nc\r\n";
        let diff = diff_of(
            old,
            &[Edit {
                old_text: "b",
                new_text: "B",
            }],
        );
        assert_eq!(
            diff.unified,
            "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(diff.first_changed_line, Some(2));
    }

    #[test]
    fn first_changed_line_skips_unchanged_leading_lines_of_the_region() {
        let old = "x\ny\nz\n";
        let diff = diff_of(
            old,
            &[Edit {
                old_text: "x\ny",
                new_text: "x\nY",
            }],
        );
        assert_eq!(diff.first_changed_line, Some(2));
    }
}
