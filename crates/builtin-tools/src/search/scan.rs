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
//! The calling thread walks (the walk is cheap next to searching) and numbers each file; one
//! worker per core takes files from a bounded queue and searches them; their results come back
//! out of order and are released to the caller strictly in walk order. When the caller says the
//! page is full, a shared flag makes the workers drop what is still queued, and the walk stops:
//! a page costs the files up to its end plus at most the queue's length of look-ahead, and the
//! next page, resuming after the cursor, never re-reads what this one covered.
//!
//! Within a file, at most `cap` matches keep their text (more could not fit on a page) and the
//! search of that file stops at the match after them.

use super::lines::{LineText, context_line, matched_line};
use super::walk::{is_reportable_file, path_key, threads};
use grep_matcher::Matcher as _;
use grep_regex::RegexMatcher;
use grep_searcher::{
    BinaryDetection, MmapChoice, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind,
    SinkMatch,
};
use ignore::{DirEntry, Walk};
use kun_ports::AbortSignal;
use std::collections::BTreeMap;
use std::io;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, PoisonError};

/// Files queued ahead of the result the caller waits for, per worker: enough to keep every
/// worker busy, few enough that a full page wastes little.
const QUEUE_PER_WORKER: usize = 32;

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

/// One file to search, numbered in walk order.
struct Task {
    seq: usize,
    entry: DirEntry,
}

/// One searched file.
struct Done {
    seq: usize,
    outcome: Searched,
}

enum Searched {
    Hits { key: Vec<u8>, hits: Vec<Hit>, binary_root: bool },
    Unreadable,
}

/// Searches the files `walk` yields, handing each file with matches to `accept` in walk order
/// until it answers [`ControlFlow::Break`] (the page is full) or the walk ends.
pub(crate) fn grep(
    walk: Walk,
    job: &GrepJob,
    mut accept: impl FnMut(FileHits) -> ControlFlow<()>,
) -> ScanNotes {
    let workers = threads().max(1);
    let stop = AtomicBool::new(false);
    let (task_tx, task_rx) = mpsc::sync_channel::<Task>(workers * QUEUE_PER_WORKER);
    let task_rx = Mutex::new(task_rx);
    let (done_tx, done_rx) = mpsc::channel::<Done>();
    let mut notes = ScanNotes::default();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let done_tx = done_tx.clone();
            let (task_rx, stop) = (&task_rx, &stop);
            scope.spawn(move || work(job, task_rx, &done_tx, stop));
        }
        drop(done_tx);
        let mut order = InOrder::default();
        let mut release = |done: Done, notes: &mut ScanNotes| {
            order.insert(done);
            while let Some(outcome) = order.pop_next() {
                if stop.load(AtomicOrdering::Relaxed) {
                    return;
                }
                match outcome {
                    Searched::Unreadable => notes.unreadable += 1,
                    Searched::Hits { key, hits, binary_root } => {
                        notes.binary_root |= binary_root;
                        if !hits.is_empty() && accept(FileHits { key, hits }).is_break() {
                            stop.store(true, AtomicOrdering::Relaxed);
                        }
                    }
                }
            }
        };
        let mut seq = 0usize;
        for entry in walk {
            if stop.load(AtomicOrdering::Relaxed) || job.abort.is_aborted() {
                break;
            }
            for done in done_rx.try_iter() {
                release(done, &mut notes);
            }
            match entry {
                Ok(entry) if is_reportable_file(&entry) => {
                    if task_tx.send(Task { seq, entry }).is_err() {
                        break;
                    }
                    seq += 1;
                }
                Ok(_) => {}
                Err(_) => notes.unreadable += 1,
            }
        }
        drop(task_tx);
        for done in done_rx {
            release(done, &mut notes);
        }
    });
    notes.aborted = job.abort.is_aborted();
    notes
}

/// Results waiting for the ones before them.
#[derive(Default)]
struct InOrder {
    next: usize,
    waiting: BTreeMap<usize, Searched>,
}

impl InOrder {
    fn insert(&mut self, done: Done) {
        self.waiting.insert(done.seq, done.outcome);
    }

    fn pop_next(&mut self) -> Option<Searched> {
        let outcome = self.waiting.remove(&self.next)?;
        self.next += 1;
        Some(outcome)
    }
}

/// One worker: its own matcher clone (its own regex cache) and searcher.
fn work(job: &GrepJob, tasks: &Mutex<Receiver<Task>>, done: &Sender<Done>, stop: &AtomicBool) {
    let matcher = job.matcher.clone();
    let mut searcher = searcher(job.context);
    loop {
        let task = tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv();
        let Ok(Task { seq, entry }) = task else {
            return;
        };
        if stop.load(AtomicOrdering::Relaxed) || job.abort.is_aborted() {
            continue;
        }
        let outcome = search(job, &matcher, &mut searcher, &entry);
        if done.send(Done { seq, outcome }).is_err() {
            return;
        }
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
            SinkContextKind::Before => {
                self.before.push(context_line(context.bytes()))
            }
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
