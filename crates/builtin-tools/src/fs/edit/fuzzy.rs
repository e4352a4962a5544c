//! Views of a text prepared for matching, each with a map back to the original's bytes.
//!
//! The edit engine never rewrites a file to match in it. It matches in a *view* — the text with
//! line endings unified, or fully fuzzy-normalised — and maps the matched view range back to
//! the original bytes, so a replacement touches only the matched region.
//!
//! A view is the original text with some regions replaced; each replaced region is a
//! [`Span`]. Between spans the view and the original are byte-identical, so an offset there
//! maps by a constant shift. Spans are never merged: each one is a single change (one line
//! ending, one trailing-whitespace run, one normalised character cluster), so a match that
//! starts or ends at a span boundary maps exactly.
//!
//! The fuzzy normalisation ([`normalize_for_fuzzy_match`]) is conservative: NFKC (per
//! character cluster: a starter and the combining marks after it), trailing whitespace
//! removed from every line, smart single and double quotes to ASCII quotes, the dashes
//! U+2010–U+2015 and U+2212 to `-`, and special spaces (NBSP, U+2002–U+200A, U+202F, U+205F,
//! U+3000) to a plain space. Indentation and inner whitespace are never touched. Line endings
//! (`\r\n`, lone `\r`) become `\n`.

use memchr::{memchr, memchr2};
use std::borrow::Cow;
use std::ops::Range;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// Normalises text for fuzzy matching (see the module docs). The read-before-edit tracker
/// uses the same function, so "this oldText appears in the latest read" and "the edit tool
/// finds this oldText" agree.
///
/// ```
/// use kun_builtin_tools::fs::normalize_for_fuzzy_match;
/// assert_eq!(normalize_for_fuzzy_match("say \u{201c}hi\u{201d}  \r\nx\u{a0}\u{2014}y"), "say \"hi\"\nx -y");
/// ```
#[must_use]
pub fn normalize_for_fuzzy_match(text: &str) -> String {
    View::fuzzy(text).text.into_owned()
}

/// One region where a view differs from its original: original bytes
/// `orig_start..orig_end` appear as view bytes `view_start..view_end` (possibly empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    view_start: usize,
    view_end: usize,
    orig_start: usize,
    orig_end: usize,
}

/// A text prepared for matching, with the map back to the original.
///
/// Invariant: spans are sorted and disjoint in both coordinates, and between two spans (and
/// before the first, after the last) the view equals the original byte for byte.
#[derive(Debug, Clone)]
pub(crate) struct View<'a> {
    text: Cow<'a, str>,
    spans: Vec<Span>,
}

impl<'a> View<'a> {
    /// The text with `\r\n` and lone `\r` turned into `\n`; borrows when there is no `\r`.
    pub(crate) fn line_endings(original: &'a str) -> Self {
        let bytes = original.as_bytes();
        if memchr(b'\r', bytes).is_none() {
            return Self {
                text: Cow::Borrowed(original),
                spans: Vec::new(),
            };
        }
        let mut builder = Builder::with_capacity(original.len());
        let mut pos = 0;
        while let Some(found) = memchr(b'\r', &bytes[pos..]) {
            let cr = pos + found;
            builder.keep(&original[pos..cr]);
            let len = if bytes.get(cr + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            builder.replace(len, "\n");
            pos = cr + len;
        }
        builder.keep(&original[pos..]);
        builder.finish()
    }

    /// The fuzzy-normalised text (see the module docs).
    pub(crate) fn fuzzy(original: &str) -> View<'static> {
        let bytes = original.as_bytes();
        let mut builder = Builder::with_capacity(original.len());
        let mut pos = 0;
        while pos < bytes.len() {
            let (end, terminator) = match memchr2(b'\n', b'\r', &bytes[pos..]) {
                None => (bytes.len(), 0),
                Some(found) => {
                    let at = pos + found;
                    let len = if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
                        2
                    } else {
                        1
                    };
                    (at, len)
                }
            };
            builder.line(&original[pos..end]);
            match (terminator, bytes.get(end)) {
                (0, _) => {}
                (1, Some(b'\n')) => builder.keep("\n"),
                (len, _) => builder.replace(len, "\n"),
            }
            pos = end + terminator;
        }
        builder.finish()
    }

    /// The view's text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The original byte range a view range came from. A boundary inside a changed region
    /// widens to the whole region; a boundary at a removed trailing-whitespace run leaves the
    /// whitespace outside the range.
    pub(crate) fn original_range(&self, view: Range<usize>) -> Range<usize> {
        let start = self.original_start(view.start);
        let end = self.original_end(view.end).max(start);
        start..end
    }

    fn original_start(&self, pos: usize) -> usize {
        let after = self.spans.partition_point(|span| span.view_start <= pos);
        let Some(span) = after.checked_sub(1).and_then(|i| self.spans.get(i)) else {
            return pos;
        };
        if pos < span.view_end {
            span.orig_start
        } else {
            span.orig_end + (pos - span.view_end)
        }
    }

    fn original_end(&self, pos: usize) -> usize {
        let index = self.spans.partition_point(|span| span.view_end < pos);
        match self.spans.get(index) {
            Some(span) if span.view_start < pos => span.orig_end,
            Some(span) => span.orig_start - (span.view_start - pos),
            None => self
                .spans
                .last()
                .map_or(pos, |span| span.orig_end + (pos - span.view_end)),
        }
    }
}

/// Builds a view left to right.
struct Builder {
    text: String,
    spans: Vec<Span>,
    orig: usize,
}

impl Builder {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            text: String::with_capacity(capacity),
            spans: Vec::new(),
            orig: 0,
        }
    }

    /// Copies original text unchanged.
    fn keep(&mut self, original: &str) {
        self.text.push_str(original);
        self.orig += original.len();
    }

    /// Replaces `original_len` original bytes with `with`.
    fn replace(&mut self, original_len: usize, with: &str) {
        let view_start = self.text.len();
        self.text.push_str(with);
        self.spans.push(Span {
            view_start,
            view_end: self.text.len(),
            orig_start: self.orig,
            orig_end: self.orig + original_len,
        });
        self.orig += original_len;
    }

    /// One line without its terminator: normalised, trailing whitespace removed.
    fn line(&mut self, line: &str) {
        if line.is_ascii() {
            let trimmed = line.trim_end_matches(|c: char| c.is_ascii_whitespace() || c == '\x0b');
            self.keep(trimmed);
            if trimmed.len() < line.len() {
                self.replace(line.len() - trimmed.len(), "");
            }
            return;
        }
        let mut clusters: Vec<(Range<usize>, Cow<'_, str>)> = clusters(line)
            .map(|range| {
                let normalised = normalize_cluster(&line[range.clone()]);
                (range, normalised)
            })
            .collect();
        // Trailing whitespace, judged on the normalised text (NBSP counts as whitespace).
        let mut trailing_from = line.len();
        while let Some((range, normalised)) = clusters.last() {
            if normalised.chars().all(char::is_whitespace) {
                trailing_from = range.start;
                clusters.pop();
            } else {
                break;
            }
        }
        if let Some((range, normalised)) = clusters.last_mut() {
            let trimmed = normalised.trim_end();
            if trimmed.len() < normalised.len() {
                *normalised = Cow::Owned(trimmed.to_owned());
            }
            debug_assert!(range.end == trailing_from);
        }
        let mut unchanged_from: Option<usize> = None;
        for (range, normalised) in &clusters {
            if normalised.as_ref() == &line[range.clone()] {
                unchanged_from.get_or_insert(range.start);
                continue;
            }
            if let Some(start) = unchanged_from.take() {
                self.keep(&line[start..range.start]);
            }
            self.replace(range.len(), normalised);
        }
        if let Some(start) = unchanged_from {
            self.keep(&line[start..trailing_from]);
        }
        if trailing_from < line.len() {
            self.replace(line.len() - trailing_from, "");
        }
    }

    fn finish(self) -> View<'static> {
        View {
            text: Cow::Owned(self.text),
            spans: self.spans,
        }
    }
}

/// Splits a line into clusters: a starter and the non-starters after it (combining marks and
/// the Hangul vowel and trailing jamo that compose with what precedes them).
fn clusters(line: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut chars = line.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, first) = chars.next()?;
        let mut end = start + first.len_utf8();
        while let Some(&(index, next)) = chars.peek() {
            if !joins_previous(next) {
                break;
            }
            end = index + next.len_utf8();
            chars.next();
        }
        Some(start..end)
    })
}

fn joins_previous(c: char) -> bool {
    !c.is_ascii()
        && (canonical_combining_class(c) != 0
            || matches!(c, '\u{1161}'..='\u{1175}' | '\u{11a8}'..='\u{11c2}'))
}

/// NFKC of one cluster, then the quote, dash and space folding.
fn normalize_cluster(cluster: &str) -> Cow<'_, str> {
    if cluster.is_ascii() {
        return Cow::Borrowed(cluster);
    }
    let folded: String = cluster.nfkc().map(fold_char).collect();
    if folded == cluster {
        Cow::Borrowed(cluster)
    } else {
        Cow::Owned(folded)
    }
}

fn fold_char(c: char) -> char {
    match c {
        '\u{2018}'..='\u{201b}' => '\'',
        '\u{201c}'..='\u{201f}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{a0}' | '\u{2002}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => ' ',
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped<'v>(view: &View<'_>, original: &'v str, needle: &str) -> &'v str {
        let at = view.text().find(needle).unwrap();
        &original[view.original_range(at..at + needle.len())]
    }

    #[test]
    fn line_endings_view_borrows_without_cr() {
        let view = View::line_endings("a\nb\n");
        assert!(matches!(view.text, Cow::Borrowed(_)));
        assert_eq!(view.original_range(1..3), 1..3);
    }

    #[test]
    fn line_endings_view_maps_crlf_and_lone_cr() {
        let original = "a\r\nb\rc\r\n";
        let view = View::line_endings(original);
        assert_eq!(view.text(), "a\nb\nc\n");
        assert_eq!(mapped(&view, original, "a\nb"), "a\r\nb");
        assert_eq!(mapped(&view, original, "b\nc\n"), "b\rc\r\n");
        assert_eq!(mapped(&view, original, "c"), "c");
    }

    #[test]
    fn fuzzy_view_folds_and_trims() {
        let original = "x = \u{201c}hi\u{201d}   \r\nnext\u{a0}line\t\n  indent\u{2014}ok";
        let view = View::fuzzy(original);
        assert_eq!(view.text(), "x = \"hi\"\nnext line\n  indent-ok");
        assert_eq!(mapped(&view, original, "\"hi\""), "\u{201c}hi\u{201d}");
        // A match ending at a line end leaves the trailing whitespace outside.
        assert_eq!(
            mapped(&view, original, "x = \"hi\""),
            "x = \u{201c}hi\u{201d}"
        );
        // A match across the line end takes the whitespace and the CRLF with it.
        assert_eq!(
            mapped(&view, original, "\"hi\"\nnext"),
            "\u{201c}hi\u{201d}   \r\nnext"
        );
        // A match starting at the newline leaves the whitespace before it.
        assert_eq!(mapped(&view, original, "\nnext"), "\r\nnext");
        assert_eq!(mapped(&view, original, "indent-ok"), "indent\u{2014}ok");
    }

    #[test]
    fn nfkc_applies_per_cluster() {
        assert_eq!(normalize_for_fuzzy_match("\u{fb01}x"), "fix");
        assert_eq!(normalize_for_fuzzy_match("e\u{301}"), "\u{e9}");
        assert_eq!(normalize_for_fuzzy_match("\u{ff21}\u{3000}b"), "A b");
        let original = "a\u{fb01}b";
        let view = View::fuzzy(original);
        // A match inside an expanded cluster widens to the whole cluster.
        assert_eq!(mapped(&view, original, "ib"), "\u{fb01}b");
    }

    #[test]
    fn unicode_trailing_whitespace_is_trimmed() {
        assert_eq!(
            normalize_for_fuzzy_match("caf\u{e9}\u{a0} \u{3000}\nx"),
            "caf\u{e9}\nx"
        );
        let original = "caf\u{e9}\u{a0} \nx";
        let view = View::fuzzy(original);
        assert_eq!(mapped(&view, original, "caf\u{e9}"), "caf\u{e9}");
        assert_eq!(mapped(&view, original, "\u{e9}\nx"), "\u{e9}\u{a0} \nx");
    }

    #[test]
    fn indentation_is_kept() {
        assert_eq!(
            normalize_for_fuzzy_match("    a  b  \n\tc"),
            "    a  b\n\tc"
        );
    }
}
