//! The grep engine: ripgrep's walk ([`super::walk`]) with one `grep-searcher` per thread,
//! matches collected per file, then merged in path order.
//!
//! # Searching like `rg`
//!
//! The matcher is built as `rg` builds it (multi-line flag on, line terminator `\n`, NUL banned,
//! octal escapes off), and the searcher reads files through a buffer (no memory maps, as `rg`
//! during a directory walk), sniffs a UTF-16 BOM, and quits a file at its first NUL byte
//! (binary detection "quit", `rg`'s default for files found by walking). Matches reported before
//! a NUL that sits past the first buffer are kept, as `rg` keeps them.
//!
//! # Bounded memory with a deterministic result
//!
//! The caller asks for the first `window` matches in (path, line) order — the page's end — and
//! for the exact total. Every match is counted; only matches that can still land inside the
//! window keep their text. Each thread keeps its own list; when it holds more than twice the
//! window it sorts it, keeps the first `window` matches, and from then on only counts files that
//! sort after the last kept one (they cannot reach the window: this thread alone already has
//! `window` matches before them). Whatever order the threads visit files in, the kept prefix is
//! the same, so pages are deterministic.

use super::lines::{LineText, context_line, matched_line};
use super::walk::{cmp_path_keys, is_reportable_file, path_key};
use grep_matcher::Matcher as _;
use grep_regex::RegexMatcher;
use grep_searcher::{
    BinaryDetection, MmapChoice, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind,
    SinkMatch,
};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkParallel, WalkState};
use kun_ports::AbortSignal;
use std::cmp::Ordering;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Mutex, PoisonError};

/// What to search for and how much of the result to keep.
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
    /// Matches needed in global order (the end of the requested page).
    pub(crate) window: usize,
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

/// The matches of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileHits {
    /// Path relative to the walk root (see [`path_key`]).
    pub(crate) key: Vec<u8>,
    /// Matching lines in the file.
    pub(crate) count: usize,
    /// The first of them, as far as they can fall inside the window.
    pub(crate) hits: Vec<Hit>,
}

/// The outcome of a search.
#[derive(Debug, Default)]
pub(crate) struct GrepScan {
    /// Files with at least one match, in path order.
    pub(crate) files: Vec<FileHits>,
    /// Matching lines in all files.
    pub(crate) total: usize,
    /// Directory entries or files that could not be read.
    pub(crate) unreadable: usize,
    /// The search root is a file that turned out to be binary.
    pub(crate) binary_root: bool,
    /// The turn was aborted during the walk.
    pub(crate) aborted: bool,
    window: usize,
}

impl GrepScan {
    /// The matches from global index `offset` on, in (path, line) order, up to the window.
    pub(crate) fn hits_from(&self, offset: usize) -> impl Iterator<Item = (&FileHits, &Hit)> {
        let mut skip = offset;
        self.files
            .iter()
            .flat_map(move |file| {
                let start = skip.min(file.count);
                skip -= start;
                file.hits.iter().skip(start).map(move |hit| (file, hit))
            })
            .take(self.window.saturating_sub(offset))
    }
}

/// Runs the search over `walker` (built for `job.root`).
pub(crate) fn grep(walker: WalkParallel, job: &GrepJob) -> GrepScan {
    let shared = Shared::default();
    walker.visit(&mut VisitorFactory {
        job,
        shared: &shared,
    });
    let mut files = shared
        .files
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner);
    files.sort_unstable_by(|a, b| cmp_path_keys(&a.key, &b.key));
    GrepScan {
        total: files.iter().map(|file| file.count).sum(),
        files,
        unreadable: shared.unreadable.into_inner(),
        binary_root: shared.binary_root.into_inner(),
        aborted: job.abort.is_aborted(),
        window: job.window,
    }
}

/// What the threads hand back.
#[derive(Default)]
struct Shared {
    files: Mutex<Vec<FileHits>>,
    unreadable: AtomicUsize,
    binary_root: AtomicBool,
}

struct VisitorFactory<'s> {
    job: &'s GrepJob,
    shared: &'s Shared,
}

impl<'s> ParallelVisitorBuilder<'s> for VisitorFactory<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(GrepVisitor {
            job: self.job,
            shared: self.shared,
            matcher: self.job.matcher.clone(),
            collecting: searcher(self.job.context, LineNumbers::Count),
            counting: searcher(0, LineNumbers::Skip),
            local: Vec::new(),
            kept: 0,
            cutoff: None,
            unreadable: 0,
        })
    }
}

/// Whether a searcher counts line numbers (only needed when match text is kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineNumbers {
    Count,
    Skip,
}

fn searcher(context: usize, line_numbers: LineNumbers) -> Searcher {
    SearcherBuilder::new()
        .line_number(line_numbers == LineNumbers::Count)
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

/// One walker thread: its own matcher clone (its own regex cache) and searchers.
struct GrepVisitor<'s> {
    job: &'s GrepJob,
    shared: &'s Shared,
    matcher: RegexMatcher,
    collecting: Searcher,
    counting: Searcher,
    local: Vec<FileHits>,
    /// Hits held in `local`.
    kept: usize,
    /// Files sorting after this key cannot reach the window; they are only counted.
    cutoff: Option<Vec<u8>>,
    unreadable: usize,
}

impl ParallelVisitor for GrepVisitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.job.abort.is_aborted() {
            return WalkState::Quit;
        }
        match entry {
            Ok(entry) if is_reportable_file(&entry) => self.search(&entry),
            Ok(_) => {}
            Err(_) => self.unreadable += 1,
        }
        WalkState::Continue
    }
}

impl GrepVisitor<'_> {
    fn search(&mut self, entry: &DirEntry) {
        let key = path_key(&self.job.root, entry.path());
        let keep = self
            .cutoff
            .as_deref()
            .is_none_or(|cutoff| cmp_path_keys(key, cutoff) == Ordering::Less);
        // Opened from the root's handle through no link, and only when it is still the file
        // the walk listed: a directory swapped for a link is never read through.
        let Some(file) = open_checked(self.job, entry) else {
            self.unreadable += 1;
            return;
        };
        let mut sink = FileSink::new(&self.matcher, if keep { self.job.window } else { 0 });
        let searcher = if keep {
            &mut self.collecting
        } else {
            &mut self.counting
        };
        if searcher
            .search_file(&self.matcher, &file, &mut sink)
            .is_err()
        {
            self.unreadable += 1;
            return;
        }
        if sink.binary && entry.depth() == 0 {
            self.shared.binary_root.store(true, AtomicOrdering::Relaxed);
        }
        if sink.count == 0 {
            return;
        }
        self.kept += sink.hits.len();
        self.local.push(FileHits {
            key: key.to_vec(),
            count: sink.count,
            hits: sink.hits,
        });
        if self.kept > self.job.window.saturating_mul(2) {
            self.prune();
        }
    }

    /// Keeps only the hits that can still fall inside the window (see the module docs).
    fn prune(&mut self) {
        let window = self.job.window;
        self.local
            .sort_unstable_by(|a, b| cmp_path_keys(&a.key, &b.key));
        let mut before = 0usize;
        self.kept = 0;
        for file in &mut self.local {
            let room = window.saturating_sub(before);
            if file.hits.len() > room {
                file.hits.truncate(room);
                file.hits.shrink_to_fit();
            }
            self.kept += file.hits.len();
            before = before.saturating_add(file.count);
            if before >= window && room > 0 {
                // The window fills inside this file: later files are only counted.
                self.cutoff = Some(file.key.clone());
            }
        }
    }
}

impl Drop for GrepVisitor<'_> {
    fn drop(&mut self) {
        let mut files = self
            .shared
            .files
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        files.append(&mut self.local);
        self.shared
            .unreadable
            .fetch_add(self.unreadable, AtomicOrdering::Relaxed);
    }
}

/// Receives one file's matches and context lines from the searcher.
struct FileSink<'m> {
    matcher: &'m RegexMatcher,
    /// Keep the text of at most this many matches.
    cap: usize,
    count: usize,
    hits: Vec<Hit>,
    /// Before-context waiting for its match.
    before: Vec<LineText>,
    /// After-context lines belong to the last kept hit.
    last_kept: bool,
    binary: bool,
}

impl<'m> FileSink<'m> {
    fn new(matcher: &'m RegexMatcher, cap: usize) -> Self {
        Self {
            matcher,
            cap,
            count: 0,
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
        self.count += 1;
        if self.hits.len() >= self.cap {
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
            line: mat.line_number().unwrap_or(0),
            column,
            text,
            before,
            after: Vec::new(),
        });
        self.last_kept = true;
        Ok(true)
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, io::Error> {
        match context.kind() {
            SinkContextKind::Before if self.hits.len() < self.cap => {
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
