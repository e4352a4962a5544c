//! The edit engine: pure text in, text out.
//!
//! [`apply_edits`] locates every edit in the original content, checks them all, and only then
//! builds the new content. It never normalises the file:
//!
//! 1. A leading BOM is set aside; offsets in the result still count it.
//! 2. Each `oldText` (line endings unified to `\n`) is searched for exactly in the content
//!    with its line endings unified (a view that costs nothing for LF-only files). One exact
//!    occurrence is a match; several are ambiguous. Uniqueness of an exact match is judged
//!    exactly: a fuzzy look-alike elsewhere does not make it ambiguous (finding one would
//!    mean normalising the whole file for every edit).
//! 3. Only if that misses, both sides are fuzzy-normalised ([`normalize_for_fuzzy_match`];
//!    the file's fuzzy view is built once per call, on first need) and searched again.
//! 4. Every match maps back to an original byte range; only those ranges are replaced. The
//!    new text takes the line ending of the region it replaces (CRLF stays CRLF), or the
//!    file's own ending when the region has none. Everything else stays byte-identical.
//!
//! All edits are located in the original content (not one after another), must be
//! disjoint (touching is fine), and together must change something.
//!
//! [`normalize_for_fuzzy_match`]: super::normalize_for_fuzzy_match

use super::closest::{ClosestRegion, closest_region};
use super::fuzzy::View;
use memchr::memmem;
use std::borrow::Cow;
use std::ops::Range;

/// One replacement: `old_text` becomes `new_text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edit<'a> {
    /// The text to find; must be non-empty and occur once.
    pub old_text: &'a str,
    /// What replaces it.
    pub new_text: &'a str,
}

/// How an edit was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchKind {
    /// Byte for byte (line endings aside).
    Exact,
    /// After fuzzy normalisation of both sides.
    Fuzzy,
}

/// A located edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// Which edit (index into the request).
    pub edit_index: usize,
    /// The original bytes replaced (offsets into the whole content, BOM included).
    pub range: Range<usize>,
    /// The bytes written instead (line endings adapted to the region).
    pub text: String,
    /// How it was found.
    pub kind: MatchKind,
}

/// The result of a successful [`apply_edits`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The new content.
    pub content: String,
    /// The replacements, sorted by position.
    pub replacements: Vec<Replacement>,
}

/// Why the edits cannot be applied. Nothing is changed in any of these cases.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// An `oldText` is empty.
    #[error("edit {index} has an empty oldText")]
    EmptyOldText {
        /// Which edit.
        index: usize,
    },
    /// An `oldText` is not in the content, exactly or fuzzily.
    #[error("edit {index} was not found")]
    NotFound {
        /// Which edit.
        index: usize,
        /// Where the content comes closest, if anywhere.
        closest: Option<ClosestRegion>,
    },
    /// An `oldText` occurs more than once.
    #[error("edit {index} occurs {occurrences} times")]
    Ambiguous {
        /// Which edit.
        index: usize,
        /// How often it occurs (non-overlapping).
        occurrences: usize,
    },
    /// Two edits cover overlapping regions.
    #[error("edits {first} and {second} overlap")]
    Overlap {
        /// The edit that comes first in the file.
        first: usize,
        /// The edit that starts inside it.
        second: usize,
    },
    /// Every replacement equals what it replaces.
    #[error("the edits change nothing")]
    NoChange,
}

/// A line ending style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    /// `\n`.
    Lf,
    /// `\r\n`.
    CrLf,
}

impl LineEnding {
    /// The ending of the first line break in `text` (`\n` when there is none).
    #[must_use]
    pub fn detect(text: &str) -> Self {
        match memchr::memchr(b'\n', text.as_bytes()) {
            Some(at) if at > 0 && text.as_bytes()[at - 1] == b'\r' => Self::CrLf,
            _ => Self::Lf,
        }
    }

    /// The ending a replacement of `region` should use: the region's own, else `fallback`.
    fn of_region(region: &str, fallback: Self) -> Self {
        if memmem::find(region.as_bytes(), b"\r\n").is_some() {
            Self::CrLf
        } else if memchr::memchr(b'\n', region.as_bytes()).is_some() {
            Self::Lf
        } else {
            fallback
        }
    }
}

const BOM: &str = "\u{feff}";

/// Applies `edits` to `content`; see the module docs for the rules.
///
/// ```
/// use kun_builtin_tools::fs::edit::{Edit, apply_edits};
/// let applied = apply_edits("a = 1;\r\nb = 2;\r\n", &[Edit { old_text: "b = 2;\n", new_text: "b = 3;\nc = 4;\n" }]).unwrap();
/// assert_eq!(applied.content, "a = 1;\r\nb = 3;\r\nc = 4;\r\n");
/// ```
///
/// # Errors
/// [`EditError`] when an edit is empty, missing, ambiguous, overlaps another, or nothing
/// would change.
pub fn apply_edits(content: &str, edits: &[Edit<'_>]) -> Result<Applied, EditError> {
    if let Some(index) = edits.iter().position(|edit| edit.old_text.is_empty()) {
        return Err(EditError::EmptyOldText { index });
    }
    let bom = if content.starts_with(BOM) {
        BOM.len()
    } else {
        0
    };
    let body = &content[bom..];
    let ending = LineEnding::detect(body);
    let mut matcher = Matcher {
        body,
        exact: View::line_endings(body),
        fuzzy: None,
    };
    let mut replacements = Vec::with_capacity(edits.len());
    for (index, edit) in edits.iter().enumerate() {
        let (range, kind) = matcher.locate(index, edit.old_text)?;
        let region = &body[range.clone()];
        let text = with_ending(edit.new_text, LineEnding::of_region(region, ending));
        replacements.push(Replacement {
            edit_index: index,
            range: range.start + bom..range.end + bom,
            text,
            kind,
        });
    }
    replacements.sort_by_key(|r| r.range.start);
    for pair in replacements.windows(2) {
        if let [a, b] = pair
            && b.range.start < a.range.end
        {
            return Err(EditError::Overlap {
                first: a.edit_index,
                second: b.edit_index,
            });
        }
    }
    if replacements
        .iter()
        .all(|r| content[r.range.clone()] == r.text)
    {
        return Err(EditError::NoChange);
    }
    Ok(Applied {
        content: splice(content, &replacements),
        replacements,
    })
}

/// Locates edits, building the fuzzy view at most once.
struct Matcher<'a> {
    body: &'a str,
    exact: View<'a>,
    fuzzy: Option<View<'static>>,
}

impl Matcher<'_> {
    fn locate(
        &mut self,
        index: usize,
        old_text: &str,
    ) -> Result<(Range<usize>, MatchKind), EditError> {
        let needle = to_lf(old_text);
        match find_unique(self.exact.text(), &needle) {
            Found::One(at) => {
                return Ok((
                    self.exact.original_range(at..at + needle.len()),
                    MatchKind::Exact,
                ));
            }
            Found::Many(occurrences) => return Err(EditError::Ambiguous { index, occurrences }),
            Found::None => {}
        }
        let body = self.body;
        let fuzzy = self.fuzzy.get_or_insert_with(|| View::fuzzy(body));
        let needle = View::fuzzy(old_text);
        let needle = needle.text();
        if needle.is_empty() {
            return Err(EditError::NotFound {
                index,
                closest: None,
            });
        }
        match find_unique(fuzzy.text(), needle) {
            Found::One(at) => Ok((
                fuzzy.original_range(at..at + needle.len()),
                MatchKind::Fuzzy,
            )),
            Found::Many(occurrences) => Err(EditError::Ambiguous { index, occurrences }),
            Found::None => Err(EditError::NotFound {
                index,
                closest: closest_region(fuzzy.text(), self.exact.text(), needle),
            }),
        }
    }
}

enum Found {
    None,
    One(usize),
    Many(usize),
}

/// Finds `needle` and counts its non-overlapping occurrences after the first (one pass).
fn find_unique(haystack: &str, needle: &str) -> Found {
    let finder = memmem::Finder::new(needle.as_bytes());
    let bytes = haystack.as_bytes();
    let Some(first) = finder.find(bytes) else {
        return Found::None;
    };
    let more = finder.find_iter(&bytes[first + needle.len()..]).count();
    if more == 0 {
        Found::One(first)
    } else {
        Found::Many(more + 1)
    }
}

/// `\r\n` and lone `\r` to `\n`.
fn to_lf(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

fn with_ending(text: &str, ending: LineEnding) -> String {
    let lf = to_lf(text);
    match ending {
        LineEnding::Lf => lf.into_owned(),
        LineEnding::CrLf => lf.replace('\n', "\r\n"),
    }
}

/// The content with sorted, disjoint replacements applied.
fn splice(content: &str, replacements: &[Replacement]) -> String {
    let grown: usize = replacements.iter().map(|r| r.text.len()).sum();
    let mut out = String::with_capacity(content.len() + grown);
    let mut pos = 0;
    for r in replacements {
        out.push_str(&content[pos..r.range.start]);
        out.push_str(&r.text);
        pos = r.range.end;
    }
    out.push_str(&content[pos..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(content: &str, old: &str, new: &str) -> Result<Applied, EditError> {
        apply_edits(
            content,
            &[Edit {
                old_text: old,
                new_text: new,
            }],
        )
    }

    #[test]
    fn exact_edit_replaces_only_the_match() {
        let applied = one("alpha\nbeta\ngamma\n", "beta", "BETA").unwrap();
        assert_eq!(applied.content, "alpha\nBETA\ngamma\n");
        assert_eq!(applied.replacements[0].range, 6..10);
        assert_eq!(applied.replacements[0].kind, MatchKind::Exact);
    }

    #[test]
    fn bom_is_kept_and_counted() {
        let applied = one("\u{feff}x = 1\n", "x = 1", "x = 2").unwrap();
        assert_eq!(applied.content, "\u{feff}x = 2\n");
        assert_eq!(applied.replacements[0].range, 3..8);
    }

    #[test]
    fn mixed_endings_outside_the_region_survive() {
        let content = "a\r\nb\nc\r\nd\n";
        let applied = one(content, "c\nd", "C\nD").unwrap();
        assert_eq!(applied.content, "a\r\nb\nC\r\nD\n");
    }

    #[test]
    fn single_line_edit_in_crlf_file_uses_crlf_for_new_lines() {
        let applied = one("a\r\nb\r\n", "b", "b\nc").unwrap();
        assert_eq!(applied.content, "a\r\nb\r\nc\r\n");
    }

    #[test]
    fn fuzzy_edit_touches_only_the_region() {
        let content =
            "keep \u{201c}this\u{201d}   \nsay(\u{201c}hi\u{201d});   \nkeep\u{a0}too  \n";
        let applied = one(content, "say(\"hi\");", "say(\"bye\");").unwrap();
        assert_eq!(
            applied.content,
            "keep \u{201c}this\u{201d}   \nsay(\"bye\");   \nkeep\u{a0}too  \n"
        );
        assert_eq!(applied.replacements[0].kind, MatchKind::Fuzzy);
    }

    #[test]
    fn errors_are_typed() {
        assert_eq!(
            one("abc", "", "x"),
            Err(EditError::EmptyOldText { index: 0 })
        );
        assert_eq!(
            one("ab ab ab", "ab", "x"),
            Err(EditError::Ambiguous {
                index: 0,
                occurrences: 3
            })
        );
        assert_eq!(one("abc", "b", "b"), Err(EditError::NoChange));
        assert!(matches!(
            one("abc", "zzz", "x"),
            Err(EditError::NotFound { index: 0, .. })
        ));
        let overlap = apply_edits(
            "one two three",
            &[
                Edit {
                    old_text: "two three",
                    new_text: "x",
                },
                Edit {
                    old_text: "one two",
                    new_text: "y",
                },
            ],
        );
        assert_eq!(
            overlap,
            Err(EditError::Overlap {
                first: 1,
                second: 0
            })
        );
    }

    #[test]
    fn touching_edits_are_fine() {
        let applied = apply_edits(
            "onetwo",
            &[
                Edit {
                    old_text: "two",
                    new_text: "2",
                },
                Edit {
                    old_text: "one",
                    new_text: "1",
                },
            ],
        )
        .unwrap();
        assert_eq!(applied.content, "12");
        assert_eq!(
            applied
                .replacements
                .iter()
                .map(|r| r.edit_index)
                .collect::<Vec<_>>(),
            vec![1, 0]
        );
    }

    #[test]
    fn fuzzy_ambiguity_is_reported() {
        let content = "x = \u{2018}a\u{2019}\ny = 'a'  \n";
        assert_eq!(
            one(content, "'a'\u{a0}", "b"),
            Err(EditError::Ambiguous {
                index: 0,
                occurrences: 2
            })
        );
    }
}
