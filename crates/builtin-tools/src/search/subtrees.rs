//! A file listing (`glob`) walked on one thread per core and released in path order.
//!
//! The search root's own entries are read first, in path order, with every filter (a
//! one-level walk). Each directory among them becomes a **unit**: one worker walks its whole
//! subtree, in path order, with the same filters ([`sorted_walker_of`]: the ignore files above
//! it are read as parents, exactly as a walk of the whole root would have applied them). The
//! units' files come back out of order and are handed on strictly in unit order, so the result
//! is the sorted listing a single walk gives, line for line.
//!
//! Paging stays cheap: at most [`LOOKAHEAD_PER_WORKER`] units per worker are walked ahead of the
//! one being handed on, a unit stops once it holds more files than a page can take (`cap`: that
//! many always close the page), and when the page is full every worker drops what it is doing.
//! A resumed page prunes the units, and the entries inside them, that sort before the cursor.
//!
//! Each unit's directory is opened again beneath the workspace root's handle through no link
//! and must be the inode the root's walk saw ([`DirChain::below`]); everything below it is
//! confirmed on its own chain of handles, as in a single walk.

use super::handles::{DirChain, FileCheck};
use super::walk::{
    CHECK_EVERY, SearchRoot, WalkPart, is_reportable_file, path_key, sorted_walker_of,
};
use crate::Failure;
use kun_ports::AbortSignal;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, PoisonError};

/// Units walked ahead of the one being handed on, per worker.
const LOOKAHEAD_PER_WORKER: usize = 1;

/// One entry of the search root, in path order.
#[derive(Debug)]
pub(crate) enum Unit {
    /// A file to report: its key.
    File(Vec<u8>),
    /// A directory whose subtree one worker walks; `ino` is what the root's walk saw.
    Dir { path: PathBuf, ino: Option<u64> },
}

/// The search root's entries as units, when the listing is worth splitting: the root is a
/// directory holding at least two directories to walk and there are at least two workers.
/// `None` otherwise (the caller then walks on one thread).
///
/// # Errors
/// `invalid_arguments` when `glob` is not a valid glob.
pub(crate) fn units(
    root: &SearchRoot,
    glob: &str,
    after: Option<&[u8]>,
    workers: usize,
) -> Result<Option<(Vec<Unit>, usize)>, Failure> {
    if workers < 2 {
        return Ok(None);
    }
    let part = WalkPart {
        at: &root.walk_root,
        chain: DirChain::new(&root.anchored, &root.walk_root, FileCheck::Lookup),
        max_depth: Some(1),
    };
    let walker = sorted_walker_of(root, part, Some(glob), after.map(<[u8]>::to_vec))?;
    let (mut units, mut unreadable) = (Vec::new(), 0usize);
    for entry in walker {
        let Ok(entry) = entry else {
            unreadable += 1;
            continue;
        };
        if entry.depth() == 0 {
            if !entry.file_type().is_some_and(|t| t.is_dir()) {
                return Ok(None);
            }
            continue;
        }
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            units.push(Unit::Dir {
                ino: entry.ino(),
                path: entry.into_path(),
            });
        } else if is_reportable_file(&entry) {
            units.push(Unit::File(path_key(&root.walk_root, entry.path()).to_vec()));
        }
    }
    let dirs = units
        .iter()
        .filter(|u| matches!(u, Unit::Dir { .. }))
        .count();
    Ok((dirs >= 2).then_some((units, unreadable)))
}

/// What the walks saw besides the files.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// Directory entries that could not be read.
    pub(crate) unreadable: usize,
    /// The turn was aborted.
    pub(crate) aborted: bool,
}

/// What a listing needs to walk its units.
pub(crate) struct Listing<'a> {
    /// The search root.
    pub(crate) root: &'a SearchRoot,
    /// The glob (already known to be valid).
    pub(crate) glob: &'a str,
    /// The resume key, if any.
    pub(crate) after: Option<&'a [u8]>,
    /// Files a unit may stop after: more than one page can take.
    pub(crate) cap: usize,
    /// Threads to walk on.
    pub(crate) workers: usize,
}

/// Where the keys go, in path order.
pub(crate) trait KeySink {
    /// Takes the next key; [`ControlFlow::Break`] when no more are wanted (the page is full).
    fn accept(&mut self, key: Vec<u8>) -> ControlFlow<()>;
    /// About how many more keys are wanted.
    fn room(&self) -> usize;
}

/// Walks `units` on `listing.workers` threads, handing every file's key to `sink` in path
/// order until it answers [`ControlFlow::Break`] or the units run out.
///
/// Units are started in order, at most [`LOOKAHEAD_PER_WORKER`] per worker ahead of the one
/// being handed on, and only while the units already started are not expected (at the average
/// yield of the units finished so far) to fill the sink's room: the last units of a page are
/// not walked for nothing.
pub(crate) fn walk_units(
    listing: &Listing<'_>,
    units: Vec<Unit>,
    abort: &AbortSignal,
    sink: &mut impl KeySink,
) -> Walked {
    let workers = listing.workers.max(1);
    let stop = AtomicBool::new(false);
    let count = units.len();
    let units: Vec<Mutex<Option<Unit>>> = units.into_iter().map(|u| Mutex::new(Some(u))).collect();
    let (task_tx, task_rx) = mpsc::channel::<usize>();
    let task_rx = Mutex::new(task_rx);
    let (done_tx, done_rx) = mpsc::channel::<(usize, Walked, Vec<Vec<u8>>)>();
    let mut walked = Walked::default();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let done_tx = done_tx.clone();
            let (task_rx, stop, units) = (&task_rx, &stop, &units);
            scope.spawn(move || worker(listing, units, task_rx, &done_tx, stop, abort));
        }
        drop(done_tx);
        let mut waiting: BTreeMap<usize, Vec<Vec<u8>>> = BTreeMap::new();
        let (mut sent, mut released) = (0usize, 0usize);
        let (mut finished, mut yielded) = (0usize, 0usize);
        let ahead = workers * LOOKAHEAD_PER_WORKER;
        'release: while released < count {
            while sent < count && sent < released + ahead {
                // Units started and not yet handed on, at the average yield so far (before any
                // finished: as many as there are workers).
                let outstanding = sent - released;
                let expected = match yielded.checked_div(finished) {
                    Some(average) => outstanding.saturating_mul(average.max(1)),
                    None if outstanding < workers => 0,
                    None => usize::MAX,
                };
                if outstanding > 0 && expected >= sink.room() {
                    break;
                }
                if task_tx.send(sent).is_err() {
                    break 'release;
                }
                sent += 1;
            }
            let Ok((index, unit_walked, keys)) = done_rx.recv() else {
                break;
            };
            walked.unreadable += unit_walked.unreadable;
            if unit_walked.aborted || abort.is_aborted() {
                walked.aborted = true;
                break;
            }
            finished += 1;
            yielded += keys.len();
            waiting.insert(index, keys);
            while let Some(keys) = waiting.remove(&released) {
                released += 1;
                for key in keys {
                    if sink.accept(key).is_break() {
                        break 'release;
                    }
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        drop(task_tx);
    });
    walked.aborted |= abort.is_aborted();
    walked
}

fn worker(
    listing: &Listing<'_>,
    units: &[Mutex<Option<Unit>>],
    tasks: &Mutex<Receiver<usize>>,
    done: &Sender<(usize, Walked, Vec<Vec<u8>>)>,
    stop: &AtomicBool,
    abort: &AbortSignal,
) {
    loop {
        let task = tasks.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(index) = task else {
            return;
        };
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let unit = units
            .get(index)
            .and_then(|slot| slot.lock().unwrap_or_else(PoisonError::into_inner).take());
        let (walked, keys) = match unit {
            Some(Unit::File(key)) => (Walked::default(), vec![key]),
            Some(Unit::Dir { path, ino }) => walk_unit(listing, &path, ino, stop, abort),
            None => (Walked::default(), Vec::new()),
        };
        if done.send((index, walked, keys)).is_err() {
            return;
        }
    }
}

/// The files of one directory's subtree, in path order, at most `listing.cap` + 1 of them.
fn walk_unit(
    listing: &Listing<'_>,
    dir: &std::path::Path,
    ino: Option<u64>,
    stop: &AtomicBool,
    abort: &AbortSignal,
) -> (Walked, Vec<Vec<u8>>) {
    let root = listing.root;
    let mut walked = Walked::default();
    let mut keys = Vec::new();
    let part = WalkPart {
        at: dir,
        chain: DirChain::below(&root.anchored, dir, ino, FileCheck::Lookup),
        max_depth: None,
    };
    let Ok(walker) = sorted_walker_of(
        root,
        part,
        Some(listing.glob),
        listing.after.map(<[u8]>::to_vec),
    ) else {
        walked.unreadable += 1;
        return (walked, keys);
    };
    for (seen, entry) in walker.enumerate() {
        if seen % CHECK_EVERY == 0 {
            if abort.is_aborted() {
                walked.aborted = true;
                break;
            }
            if stop.load(Ordering::Relaxed) {
                break;
            }
        }
        let Ok(entry) = entry else {
            walked.unreadable += 1;
            continue;
        };
        if entry.depth() > 0 && is_reportable_file(&entry) {
            keys.push(path_key(&root.walk_root, entry.path()).to_vec());
            if keys.len() > listing.cap {
                break;
            }
        }
    }
    (walked, keys)
}
