//! Rebuilding the ledger state from the journal's bytes.

use super::LedgerBounds;
use super::record::{Entry, decode};
use super::state::LedgerState;
use std::path::Path;

/// The state a journal describes, and what reading it found.
#[derive(Debug)]
pub(crate) struct Replayed {
    /// Every record applied in file order; started records are still `Started`.
    pub(crate) state: LedgerState,
    /// Lines applied.
    pub(crate) records: usize,
    /// Complete lines that could not be decoded (skipped with a warning).
    pub(crate) skipped_lines: usize,
    /// The last line was cut short by a crash mid-write (ignored with a warning).
    pub(crate) torn_tail: bool,
    /// The file does not end with `\n`; the next append must start a new line first.
    pub(crate) needs_newline: bool,
}

/// Applies every decodable line of `bytes` in order.
///
/// A line that does not decode is skipped with a warning, never an error: the journal must
/// stay usable after a crash. Skipping is safe in both directions that matter: a lost
/// `begin` means the tool never ran (its `begin` call never returned), and a lost resolution
/// leaves the operation started, which the caller turns into "outcome unknown".
pub(crate) fn replay(bytes: &[u8], bounds: LedgerBounds, path: &Path) -> Replayed {
    let mut replayed = Replayed {
        state: LedgerState::new(bounds),
        records: 0,
        skipped_lines: 0,
        torn_tail: false,
        needs_newline: !bytes.is_empty() && !bytes.ends_with(b"\n"),
    };
    let (body, tail) = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(last) => bytes.split_at(last + 1),
        None => (&[][..], bytes),
    };
    let mut line_number = 0;
    for line in body.split(|b| *b == b'\n') {
        line_number += 1;
        if line.trim_ascii().is_empty() {
            continue;
        }
        match decode(line) {
            Ok(entry) => replayed.apply(entry),
            Err(problem) => {
                replayed.skipped_lines += 1;
                tracing::warn!(
                    journal = %path.display(),
                    line = line_number,
                    %problem,
                    "operation journal: skipping a line that cannot be read"
                );
            }
        }
    }
    if !tail.trim_ascii().is_empty() {
        match decode(tail) {
            Ok(entry) => replayed.apply(entry),
            Err(problem) => {
                replayed.torn_tail = true;
                tracing::warn!(
                    journal = %path.display(),
                    %problem,
                    "operation journal: ignoring a last line cut short (a crash while writing it)"
                );
            }
        }
    }
    replayed
}

impl Replayed {
    fn apply(&mut self, entry: Entry) {
        self.records += 1;
        match entry {
            Entry::Begin { key, pid } => self.state.start(&key, pid),
            Entry::Complete { key, result } => self.state.complete(&key, result),
            Entry::Fail { key } => self.state.forget(&key),
            Entry::Unknown { key, reason } => self.state.mark_unknown(&key, reason),
        }
    }
}
