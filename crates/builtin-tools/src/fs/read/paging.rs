//! One page of a text file, read in a single streaming pass.
//!
//! Lines are numbered from 1 and end at `\n`; a final line without `\n` still counts, and a
//! trailing `\n` does not start another line (`"a\nb\n"` has 2 lines, `""` has 0). A page
//! holds whole lines with their `\n` (a `\r` before it is dropped), so concatenating the pages
//! of a file gives back its text with LF endings. Lines are taken while both the line limit
//! and the byte budget (newlines included) allow; the file is scanned to its end anyway to
//! count its lines, holding no more than one page in memory.

use memchr::memchr;
use std::io::{self, BufRead};

/// What stopped a page before the end of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The caller's `limit`.
    Requested,
    /// The tool's line limit.
    MaxLines,
    /// The tool's byte budget.
    MaxBytes,
}

/// Which lines to take.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageRequest {
    /// The first line (1-based).
    pub(crate) offset: usize,
    /// At most this many lines.
    pub(crate) max_lines: usize,
    /// What stops the page when `max_lines` is reached.
    pub(crate) line_stop: Stop,
    /// At most this many bytes.
    pub(crate) max_bytes: usize,
}

/// A page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page {
    /// The lines taken, with their `\n`.
    pub(crate) content: Vec<u8>,
    /// The last line covered (the omitted line when `first_line_too_long`); `offset - 1` when
    /// no line was taken.
    pub(crate) end_line: usize,
    /// Lines in the whole file.
    pub(crate) total_lines: usize,
    /// What stopped the page, if anything did.
    pub(crate) stop: Option<Stop>,
    /// The first line of the page alone exceeds the budget; it is omitted.
    pub(crate) first_line_too_long: Option<usize>,
}

/// Reads one page from `reader` (see the module docs).
pub(crate) fn read_page<R: BufRead>(mut reader: R, request: PageRequest) -> io::Result<Page> {
    let mut pager = Pager::new(request);
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        let len = chunk.len();
        let mut rest = chunk;
        while let Some(at) = memchr(b'\n', rest) {
            pager.bytes(&rest[..at]);
            pager.newline();
            rest = &rest[at + 1..];
        }
        pager.bytes(rest);
        reader.consume(len);
    }
    Ok(pager.finish())
}

struct Pager {
    request: PageRequest,
    /// The line being scanned (1-based).
    line: usize,
    /// Bytes seen on the line being scanned.
    line_len: usize,
    /// The line being scanned, while it is collected and fits.
    current: Vec<u8>,
    content: Vec<u8>,
    budget: usize,
    taken: usize,
    end_line: usize,
    stop: Option<Stop>,
    first_line_too_long: Option<usize>,
}

impl Pager {
    fn new(request: PageRequest) -> Self {
        Self {
            request,
            line: 1,
            line_len: 0,
            current: Vec::new(),
            content: Vec::new(),
            budget: request.max_bytes,
            taken: 0,
            end_line: request.offset.saturating_sub(1),
            stop: None,
            first_line_too_long: None,
        }
    }

    fn collecting(&self) -> bool {
        self.stop.is_none() && self.line >= self.request.offset
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.line_len += bytes.len();
        // One byte of slack for a `\r` that is dropped before the newline.
        if self.collecting() && self.line_len <= self.budget + 1 {
            self.current.extend_from_slice(bytes);
        }
    }

    fn newline(&mut self) {
        self.end_of_line(true);
        self.line += 1;
    }

    fn end_of_line(&mut self, newline: bool) {
        let fits_so_far = self.line_len <= self.budget + 1;
        let mut len = self.line_len;
        if newline && self.current.last() == Some(&b'\r') {
            self.current.pop();
            len -= 1;
        }
        if self.collecting() {
            let cost = len + usize::from(newline);
            if !fits_so_far || cost > self.budget {
                if self.taken == 0 {
                    self.first_line_too_long = Some(len);
                    self.end_line = self.line;
                }
                self.stop = Some(Stop::MaxBytes);
            } else {
                self.content.extend_from_slice(&self.current);
                if newline {
                    self.content.push(b'\n');
                }
                self.budget -= cost;
                self.taken += 1;
                self.end_line = self.line;
                if self.taken >= self.request.max_lines {
                    self.stop = Some(self.request.line_stop);
                }
            }
        }
        self.current.clear();
        self.line_len = 0;
    }

    fn finish(mut self) -> Page {
        let partial_last_line = self.line_len > 0;
        if partial_last_line {
            self.end_of_line(false);
        }
        let total_lines = if partial_last_line {
            self.line
        } else {
            self.line - 1
        };
        Page {
            content: self.content,
            end_line: self.end_line,
            total_lines,
            stop: self.stop,
            first_line_too_long: self.first_line_too_long,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str, offset: usize, max_lines: usize, max_bytes: usize) -> Page {
        let request = PageRequest {
            offset,
            max_lines,
            line_stop: Stop::MaxLines,
            max_bytes,
        };
        // A tiny buffer exercises lines split across chunks.
        read_page(io::BufReader::with_capacity(3, text.as_bytes()), request).unwrap()
    }

    #[test]
    fn counts_lines_like_editors_do() {
        assert_eq!(page("", 1, 10, 100).total_lines, 0);
        assert_eq!(page("a", 1, 10, 100).total_lines, 1);
        assert_eq!(page("a\n", 1, 10, 100).total_lines, 1);
        assert_eq!(page("a\nb", 1, 10, 100).total_lines, 2);
        assert_eq!(page("a\n\n", 1, 10, 100).total_lines, 2);
    }

    #[test]
    fn pages_by_lines_and_bytes() {
        let p = page("one\r\ntwo\nthree\nfour", 2, 2, 100);
        assert_eq!(p.content, b"two\nthree\n");
        assert_eq!(
            (p.end_line, p.total_lines, p.stop),
            (3, 4, Some(Stop::MaxLines))
        );
        let p = page("one\ntwo\nthree\n", 1, 10, 8);
        assert_eq!(p.content, b"one\ntwo\n");
        assert_eq!((p.end_line, p.stop), (2, Some(Stop::MaxBytes)));
        let p = page("one\ntwo\nthree", 3, 10, 100);
        assert_eq!(p.content, b"three");
        assert_eq!((p.end_line, p.stop), (3, None));
    }

    #[test]
    fn a_first_line_over_budget_is_omitted() {
        let p = page("short\nthis line is long\nx\n", 2, 10, 8);
        assert_eq!(p.content, b"");
        assert_eq!(p.first_line_too_long, Some(17));
        assert_eq!((p.end_line, p.total_lines), (2, 3));
    }
}
