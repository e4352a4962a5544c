//! An ordered parallel map over a walk in path order: the calling thread walks (cheap next to
//! the per-file work) and numbers each file; one worker per core takes files from a bounded
//! queue and does the work (search a file); the results come back out of order
//! and are handed to the caller strictly in walk order. When the caller says it has enough
//! (a full page), a shared flag makes the workers drop what is still queued and the walk stops:
//! a page costs the files up to its end plus at most the queue's length of look-ahead.

use super::walk::{is_reportable_file, threads};
use ignore::{DirEntry, Walk};
use kun_ports::AbortSignal;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, PoisonError};

/// Files handed to a worker at a time (one channel message and one wake-up per batch, not per
/// file).
const BATCH: usize = 16;
/// Batches queued ahead of the result the caller waits for, per worker: enough to keep every
/// worker busy, few enough that a full page wastes little (at most this many batches of
/// look-ahead).
const QUEUE_PER_WORKER: usize = 4;

/// The work done on each file, on a worker thread.
pub(crate) trait FileWork: Sync {
    /// Per-worker state (a matcher clone, a searcher).
    type State;
    /// One file's result.
    type Output: Send;
    /// A worker's fresh state.
    fn state(&self) -> Self::State;
    /// The work on one file the walk yielded.
    fn run(&self, state: &mut Self::State, entry: &DirEntry) -> Self::Output;
}

/// What the walk itself saw.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// Directory entries that could not be read.
    pub(crate) unreadable: usize,
    /// The turn was aborted.
    pub(crate) aborted: bool,
}

/// Runs `work` on every regular file `walk` yields, handing the results to `accept` in walk
/// order until it answers [`ControlFlow::Break`] or the walk ends.
pub(crate) fn in_order<W: FileWork>(
    walk: Walk,
    work: &W,
    abort: &AbortSignal,
    mut accept: impl FnMut(W::Output) -> ControlFlow<()>,
) -> Walked {
    let workers = threads().max(1);
    let stop = AtomicBool::new(false);
    let (task_tx, task_rx) = mpsc::sync_channel::<Batch>(workers * QUEUE_PER_WORKER);
    let task_rx = Mutex::new(task_rx);
    let (done_tx, done_rx) = mpsc::channel::<Vec<(usize, W::Output)>>();
    let mut walked = Walked::default();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let done_tx = done_tx.clone();
            let (task_rx, stop) = (&task_rx, &stop);
            scope.spawn(move || worker(work, abort, task_rx, &done_tx, stop));
        }
        drop(done_tx);
        let mut order = InOrder::default();
        let mut release = |outputs: Vec<(usize, W::Output)>| {
            order.waiting.extend(outputs);
            while let Some(output) = order.pop_next() {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                if accept(output).is_break() {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        };
        let mut seq = 0usize;
        let mut batch: Batch = Vec::with_capacity(BATCH);
        for entry in walk {
            if stop.load(Ordering::Relaxed) || abort.is_aborted() {
                break;
            }
            match entry {
                Ok(entry) if is_reportable_file(&entry) => {
                    batch.push((seq, entry));
                    seq += 1;
                }
                Ok(_) => {}
                Err(_) => walked.unreadable += 1,
            }
            if batch.len() >= BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if task_tx.send(full).is_err() {
                    break;
                }
                for outputs in done_rx.try_iter() {
                    release(outputs);
                }
            }
        }
        if !batch.is_empty() && !stop.load(Ordering::Relaxed) {
            // The walk ended (or was stopped, and then the workers drop it).
            let _ = task_tx.send(batch);
        }
        drop(task_tx);
        for outputs in done_rx {
            release(outputs);
        }
    });
    walked.aborted = abort.is_aborted();
    walked
}

/// Results waiting for the ones before them.
struct InOrder<T> {
    next: usize,
    waiting: BTreeMap<usize, T>,
}

impl<T> Default for InOrder<T> {
    fn default() -> Self {
        Self {
            next: 0,
            waiting: BTreeMap::new(),
        }
    }
}

impl<T> InOrder<T> {
    fn pop_next(&mut self) -> Option<T> {
        let output = self.waiting.remove(&self.next)?;
        self.next += 1;
        Some(output)
    }
}

/// Files numbered in walk order.
type Batch = Vec<(usize, DirEntry)>;

fn worker<W: FileWork>(
    work: &W,
    abort: &AbortSignal,
    tasks: &Mutex<Receiver<Batch>>,
    done: &Sender<Vec<(usize, W::Output)>>,
    stop: &AtomicBool,
) {
    let mut state = work.state();
    loop {
        let batch = tasks.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(batch) = batch else {
            return;
        };
        let mut outputs = Vec::with_capacity(batch.len());
        for (seq, entry) in batch {
            if stop.load(Ordering::Relaxed) || abort.is_aborted() {
                break;
            }
            outputs.push((seq, work.run(&mut state, &entry)));
        }
        if done.send(outputs).is_err() {
            return;
        }
    }
}
