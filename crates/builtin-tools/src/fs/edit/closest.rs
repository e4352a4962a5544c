//! Where a missing `oldText` comes closest: the hint in a not-found error.
//!
//! Lines are compared with surrounding whitespace trimmed (the first `oldText` line may start
//! mid-line and the last may end mid-line). Candidates are file lines matching one of the
//! first few non-blank `oldText` lines; the candidate alignment with the most matching lines
//! wins (the earliest on a tie). The search is bounded, so a pathological file costs at most
//! a few million line comparisons, and only on this error path.

use rustc_hash::FxHashSet;

/// How many non-blank `oldText` lines are tried as anchors.
const MAX_ANCHORS: usize = 8;
/// How many candidate alignments are scored at most.
const MAX_CANDIDATES: usize = 4_096;
/// How many `oldText` lines are compared per candidate at most.
const MAX_COMPARED_LINES: usize = 256;
/// How many file lines the region shows at most.
const MAX_REGION_LINES: usize = 12;
/// How many characters of one line are shown at most.
const MAX_LINE_CHARS: usize = 240;

/// What differs at the first divergent line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Divergence {
    /// The text differs.
    Text,
    /// Only whitespace differs (indentation, inner spaces).
    Whitespace,
    /// The file ends before `oldText` does.
    EndOfFile,
}

/// The closest region of the file to a missing `oldText`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosestRegion {
    /// The 1-based file line where the region starts.
    pub start_line: usize,
    /// How many `oldText` lines match there (whitespace-trimmed).
    pub matching_lines: usize,
    /// How many lines `oldText` has.
    pub total_lines: usize,
    /// The first line that differs: 1-based file line and what differs.
    pub divergence: Option<(usize, Divergence)>,
    /// The file's text at the divergent line (shortened).
    pub file_line: Option<String>,
    /// The `oldText` line expected there (shortened, fuzzy-normalised).
    pub expected_line: Option<String>,
    /// The region's lines, numbered as `read` numbers them (`"12│text"`).
    pub region: String,
}

/// Finds the closest region. `fuzzy` is the file's fuzzy view, `display` the same file with
/// only line endings unified (same line count), `needle` the fuzzy-normalised `oldText`.
pub(crate) fn closest_region(fuzzy: &str, display: &str, needle: &str) -> Option<ClosestRegion> {
    let file: Vec<&str> = fuzzy.split('\n').collect();
    let mut wanted: Vec<&str> = needle.split('\n').collect();
    if wanted.len() > 1 && wanted.last().is_some_and(|l| l.is_empty()) {
        wanted.pop();
    }
    let compared = wanted.len().min(MAX_COMPARED_LINES);
    let anchors: Vec<usize> = (0..compared)
        .filter(|&k| !wanted[k].trim().is_empty())
        .take(MAX_ANCHORS)
        .collect();
    let mut seen = FxHashSet::default();
    let mut best: Option<(usize, usize)> = None; // (start, score)
    'anchors: for &k in &anchors {
        for (i, line) in file.iter().enumerate() {
            if i < k || !lines_match(line.trim(), wanted[k].trim(), k, wanted.len()) {
                continue;
            }
            let start = i - k;
            if !seen.insert(start) {
                continue;
            }
            let score = (0..compared)
                .filter(|&j| {
                    file.get(start + j)
                        .is_some_and(|f| lines_match(f.trim(), wanted[j].trim(), j, wanted.len()))
                })
                .count();
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((start, score));
            }
            if seen.len() >= MAX_CANDIDATES {
                break 'anchors;
            }
        }
    }
    let (start, score) = best?;
    let display_lines: Vec<&str> = display.split('\n').collect();
    let divergence = first_divergence(&file, &wanted[..compared], start);
    let (file_line, expected_line) = match divergence {
        Some((j, Divergence::EndOfFile)) => (None, wanted.get(j).map(|l| shorten(l))),
        Some((j, _)) => (
            display_lines.get(start + j).map(|l| shorten(l)),
            wanted.get(j).map(|l| shorten(l)),
        ),
        None => (None, None),
    };
    let shown = wanted.len().min(MAX_REGION_LINES) + 1;
    // Numbered as `read` numbers lines (`12│text`, aligned to the widest number).
    let last = (start + shown).min(display_lines.len());
    let width = last.max(1).to_string().len();
    let region = display_lines
        .iter()
        .enumerate()
        .skip(start)
        .take(shown)
        .map(|(i, line)| format!("{:>width$}│{}", i + 1, shorten(line)))
        .collect::<Vec<_>>()
        .join("\n");
    Some(ClosestRegion {
        start_line: start + 1,
        matching_lines: score,
        total_lines: wanted.len(),
        divergence: divergence.map(|(j, kind)| (start + j + 1, kind)),
        file_line,
        expected_line,
        region,
    })
}

/// Whether a (trimmed) file line matches the (trimmed) `oldText` line at `index` of `count`.
fn lines_match(file: &str, wanted: &str, index: usize, count: usize) -> bool {
    match (index == 0, index + 1 == count) {
        (true, true) => file.contains(wanted),
        (true, false) => file.ends_with(wanted),
        (false, true) => file.starts_with(wanted),
        (false, false) => file == wanted,
    }
}

/// The first `oldText` line (index) that differs at this alignment, and how.
fn first_divergence(file: &[&str], wanted: &[&str], start: usize) -> Option<(usize, Divergence)> {
    let count = wanted.len();
    let mut whitespace = None;
    for (j, expected) in wanted.iter().enumerate() {
        let Some(line) = file.get(start + j) else {
            return Some((j, Divergence::EndOfFile));
        };
        if !lines_match(line.trim(), expected.trim(), j, count) {
            return Some((j, Divergence::Text));
        }
        if whitespace.is_none() && !lines_match(line, expected, j, count) {
            whitespace = Some((j, Divergence::Whitespace));
        }
    }
    whitespace
}

fn shorten(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_alignment_with_most_matching_lines() {
        let file = "fn a() {\n    one();\n}\nfn b() {\n    one();\n    two();\n}\n";
        let found = closest_region(file, file, "fn b() {\n    one();\n    three();\n}").unwrap();
        assert_eq!(found.start_line, 4);
        assert_eq!(found.matching_lines, 3);
        assert_eq!(found.divergence, Some((6, Divergence::Text)));
        assert_eq!(found.file_line.as_deref(), Some("    two();"));
        assert_eq!(found.expected_line.as_deref(), Some("    three();"));
        assert!(found.region.starts_with("4│fn b() {"), "{}", found.region);
    }

    #[test]
    fn indentation_only_difference_is_named() {
        let file = "if x {\n    go();\n}\n";
        let found = closest_region(file, file, "if x {\n  go();\n}").unwrap();
        assert_eq!(found.divergence, Some((2, Divergence::Whitespace)));
    }

    #[test]
    fn end_of_file_is_named() {
        let file = "a\nb";
        let found = closest_region(file, file, "a\nb\nc").unwrap();
        assert_eq!(found.divergence, Some((3, Divergence::EndOfFile)));
    }

    #[test]
    fn nothing_similar_gives_none() {
        assert_eq!(closest_region("a\nb\n", "a\nb\n", "zzz\nqqq"), None);
    }
}
