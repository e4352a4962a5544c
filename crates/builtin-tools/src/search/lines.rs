//! Turning searched lines into text for the model: terminators stripped, invalid UTF-8
//! replaced, very long lines (minified files, data) clipped around the match with a marker.

/// Lines longer than this many bytes are clipped.
pub(crate) const MAX_LINE_BYTES: usize = 400;

/// A line of text as a result carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineText {
    /// The (possibly clipped) text, without its line terminator.
    pub(crate) text: String,
    /// Whether the text was clipped.
    pub(crate) clipped: bool,
}

/// The bytes of a line without its terminator (`\n` or `\r\n`).
pub(crate) fn without_terminator(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// A context line: clipped from its start.
pub(crate) fn context_line(line: &[u8]) -> LineText {
    clip(&String::from_utf8_lossy(without_terminator(line)), 0)
}

/// A matched line and the 1-based character column of the match starting at byte
/// `match_start`; the clipped text keeps the match in view.
pub(crate) fn matched_line(line: &[u8], match_start: usize) -> (LineText, usize) {
    let line = without_terminator(line);
    let split = match_start.min(line.len());
    let before = String::from_utf8_lossy(&line[..split]);
    let column = before.chars().count() + 1;
    let keep_from = before.len();
    let text = String::from_utf8_lossy(line);
    (clip(&text, keep_from), column)
}

/// Clips `text` to [`MAX_LINE_BYTES`] around byte `keep_from`, marking what was cut.
fn clip(text: &str, keep_from: usize) -> LineText {
    if text.len() <= MAX_LINE_BYTES {
        return LineText {
            text: text.to_owned(),
            clipped: false,
        };
    }
    let start = if keep_from < MAX_LINE_BYTES / 2 {
        0
    } else {
        floor_char_boundary(text, keep_from - MAX_LINE_BYTES / 4)
    };
    let end = floor_char_boundary(text, start.saturating_add(MAX_LINE_BYTES).min(text.len()));
    let mut clipped = String::with_capacity(end - start + 64);
    if start > 0 {
        clipped.push('…');
    }
    clipped.push_str(&text[start..end]);
    clipped.push_str(&format!("… [line clipped: {} bytes in all]", text.len()));
    LineText {
        text: clipped,
        clipped: true,
    }
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminators_are_stripped() {
        assert_eq!(without_terminator(b"a\r\n"), b"a");
        assert_eq!(without_terminator(b"a\n"), b"a");
        assert_eq!(without_terminator(b"a"), b"a");
    }

    #[test]
    fn columns_count_characters() {
        let (text, column) = matched_line("héllo wörld\n".as_bytes(), "héllo w".len());
        assert_eq!(column, 8);
        assert_eq!(text.text, "héllo wörld");
        assert!(!text.clipped);
    }

    #[test]
    fn long_lines_keep_the_match_in_view() {
        let line = format!("{}NEEDLE{}", "x".repeat(5000), "é".repeat(3000));
        let (text, column) = matched_line(line.as_bytes(), 5000);
        assert_eq!(column, 5001);
        assert!(text.clipped);
        assert!(text.text.starts_with('…'));
        assert!(text.text.contains("NEEDLE"));
        assert!(
            text.text
                .ends_with(&format!("[line clipped: {} bytes in all]", line.len()))
        );
        assert!(text.text.len() < MAX_LINE_BYTES + 64);
        let context = context_line("é".repeat(1000).as_bytes());
        assert!(context.clipped && context.text.starts_with('é'));
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let (text, column) = matched_line(b"\xff\xfeab", 2);
        assert_eq!(text.text, "\u{fffd}\u{fffd}ab");
        assert_eq!(column, 3);
    }
}
