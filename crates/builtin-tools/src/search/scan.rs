//! The grep engine: ripgrep's walk in path order ([`super::walk::sorted_walker`]) feeding a
//! pool of `grep-searcher` workers, with the results handed back **in path order** and the
//! search stopped as soon as the page is full.
//!
//! # Searching like `rg`
//!
//! The matcher is built as `rg` builds it (multi-line flag on, line terminator `\n`, NUL banned,
//! octal escapes off), and the searcher reads files through a buffer (no memory maps, as `rg`
//! during a directory walk), sniffs a UTF-16 BOM, and quits a file at its first NUL byte
//! (binary detection "quit", `rg`'s default for files found by walking). Matches reported before
//! a NUL that sits past the first buffer are kept, as `rg` keeps them.
//!
//! # Ordered and early-stopping
//!
//! Files are searched in parallel and released in walk order ([`super::ordered`]); when the
//! page is full the search stops, and the next page, resuming after the cursor, never re-reads
//! what this one covered.
//!
//! Within a file, at most `cap` matches keep their text (more could not fit on a page) and the
//! search of that file stops at the match after them.

use super::lines::{LineText, context_line, matched_line};
use super::ordered::{FileWork, in_order};
use super::walk::path_key;
use grep_matcher::Matcher as _;
use grep_regex::RegexMatcher;
use grep_searcher::{
    BinaryDetection, MmapChoice, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind,
    SinkMatch,
};
use ignore::{DirEntry, Walk};
use kun_ports::AbortSignal;
use std::io;
use std::ops::ControlFlow;
use std::path::PathBuf;

/// What to search for.
#[derive(Debug, Clone)]
pub(crate) struct GrepJob {
    /// The walk root (physical); keys are relative to it.
    pub(crate) root: PathBuf,
    /// The root's handle each file is opened from (never through a link).
    pub(crate) anchored: std::sync::Arc<crate::fs::beneath::Anchored>,
    /// The compiled pattern.
    pub(crate) matcher: RegexMatcher,
    /// Context lines before and after each match.
    pub(crate) context: usize,
    /// At most this many matches per file keep their text (the search of the file stops at
    /// the next one).
    pub(crate) cap: usize,
    /// Resume inside this file (a key) after this line: its earlier matches are not reported.
    pub(crate) resume: Option<(Vec<u8>, u64)>,
    /// The turn's abort signal; checked for every entry.
    pub(crate) abort: AbortSignal,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    /// 1-based line number.
    pub(crate) line: u64,
    /// 1-based character column of the first match on the line.
    pub(crate) column: usize,
    /// The line.
    pub(crate) text: LineText,
    /// Context lines before it (not already shown after the previous match).
    pub(crate) before: Vec<LineText>,
    /// Context lines after it (up to the next match).
    pub(crate) after: Vec<LineText>,
}

impl Hit {
    /// Whether any of its text was clipped.
    pub(crate) fn clipped(&self) -> bool {
        self.text.clipped
            || self
                .before
                .iter()
                .chain(&self.after)
                .any(|line| line.clipped)
    }
}

/// The matches of one file, released to the caller in walk order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileHits {
    /// Path relative to the walk root (see [`path_key`]).
    pub(crate) key: Vec<u8>,
    /// Its matches (after the resume line), at most the job's `cap` plus one.
    pub(crate) hits: Vec<Hit>,
}

/// What the search saw besides the matches.
#[derive(Debug, Default)]
pub(crate) struct ScanNotes {
    /// Directory entries or files that could not be read.
    pub(crate) unreadable: usize,
    /// The search root is a file that turned out to be binary.
    pub(crate) binary_root: bool,
    /// The turn was aborted during the walk.
    pub(crate) aborted: bool,
}

/// One searched file.
pub(crate) enum Searched {
    Hits {
        key: Vec<u8>,
        hits: Vec<Hit>,
        binary_root: bool,
    },
    Unreadable,
}

/// Searches the files `walk` yields (see [`super::ordered`]), handing each file with matches
/// to `accept` in walk order until it answers [`ControlFlow::Break`] (the page is full) or the
/// walk ends.
pub(crate) fn grep(
    walk: Walk,
    job: &GrepJob,
    mut accept: impl FnMut(FileHits) -> ControlFlow<()>,
) -> ScanNotes {
    let mut notes = ScanNotes::default();
    let walked = in_order(walk, job, &job.abort, |searched| match searched {
        Searched::Unreadable => {
            notes.unreadable += 1;
            ControlFlow::Continue(())
        }
        Searched::Hits {
            key,
            hits,
            binary_root,
        } => {
            notes.binary_root |= binary_root;
            if hits.is_empty() {
                ControlFlow::Continue(())
            } else {
                accept(FileHits { key, hits })
            }
        }
    });
    notes.unreadable += walked.unreadable;
    notes.aborted = walked.aborted;
    notes
}

impl FileWork for GrepJob {
    /// Each worker's own matcher clone (its own regex cache) and searcher.
    type State = (RegexMatcher, Searcher);
    type Output = Searched;

    fn state(&self) -> Self::State {
        (self.matcher.clone(), searcher(self.context))
    }

    fn run(&self, (matcher, searcher): &mut Self::State, entry: &DirEntry) -> Searched {
        search(self, matcher, searcher, entry)
    }
}

fn searcher(context: usize) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .multi_line(false)
        .memory_map(MmapChoice::never())
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .bom_sniffing(true)
        .before_context(context)
        .after_context(context)
        .build()
}

/// The entry's file, opened beneath the root, when it is the regular file the walk saw.
fn open_checked(job: &GrepJob, entry: &DirEntry) -> Option<std::fs::File> {
    let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK;
    let fd = job.anchored.open(entry.path(), flags).ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    let same = rustix::fs::FileType::from_raw_mode(stat.st_mode)
        == rustix::fs::FileType::RegularFile
        && entry.ino().is_none_or(|ino| ino == stat.st_ino);
    same.then(|| std::fs::File::from(fd))
}

fn search(
    job: &GrepJob,
    matcher: &RegexMatcher,
    searcher: &mut Searcher,
    entry: &DirEntry,
) -> Searched {
    let key = path_key(&job.root, entry.path());
    // Opened from the root's handle through no link, and only when it is still the file the
    // walk listed: a directory swapped for a link is never read through.
    let Some(file) = open_checked(job, entry) else {
        return Searched::Unreadable;
    };
    let skip_through = match &job.resume {
        Some((after, line)) if after.as_slice() == key => *line,
        _ => 0,
    };
    let mut sink = FileSink::new(matcher, job.cap, skip_through);
    if searcher.search_file(matcher, &file, &mut sink).is_err() {
        return Searched::Unreadable;
    }
    Searched::Hits {
        key: key.to_vec(),
        hits: sink.hits,
        binary_root: sink.binary && entry.depth() == 0,
    }
}

/// Receives one file's matches and context lines from the searcher.
struct FileSink<'m> {
    matcher: &'m RegexMatcher,
    /// Keep at most this many matches; the search of the file stops at the one after.
    cap: usize,
    /// Matches on lines up to this one were shown on an earlier page.
    skip_through: u64,
    hits: Vec<Hit>,
    /// Before-context waiting for its match.
    before: Vec<LineText>,
    /// After-context lines belong to the last kept hit.
    last_kept: bool,
    binary: bool,
}

impl<'m> FileSink<'m> {
    fn new(matcher: &'m RegexMatcher, cap: usize, skip_through: u64) -> Self {
        Self {
            matcher,
            cap,
            skip_through,
            hits: Vec::new(),
            before: Vec::new(),
            last_kept: false,
            binary: false,
        }
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let line = mat.line_number().unwrap_or(0);
        if line <= self.skip_through {
            self.last_kept = false;
            self.before.clear();
            return Ok(true);
        }
        let bytes = mat.bytes();
        let start = self
            .matcher
            .find(bytes)
            .ok()
            .flatten()
            .map_or(0, |m| m.start());
        let (text, column) = matched_line(bytes, start);
        let before = std::mem::take(&mut self.before);
        self.hits.push(Hit {
            line,
            column,
            text,
            before,
            after: Vec::new(),
        });
        self.last_kept = true;
        // One match past the cap proves that more follow; nothing after it can be shown.
        Ok(self.hits.len() <= self.cap)
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, io::Error> {
        match context.kind() {
            SinkContextKind::Before => self.before.push(context_line(context.bytes())),
            SinkContextKind::After if self.last_kept => {
                if let Some(hit) = self.hits.last_mut() {
                    hit.after.push(context_line(context.bytes()));
                }
            }
            _ => {}
        }
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, io::Error> {
        self.before.clear();
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(true)
    }
}
