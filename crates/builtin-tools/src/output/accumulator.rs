//! The streaming output accumulator for child processes.
//!
//! Invariants:
//! * the kept tail never holds more than `2 × max_bytes` bytes, however long the stream;
//! * `total_bytes` and `total_lines` count the whole stream;
//! * once the stream exceeds either limit, the spill file (when spilling is on) holds every
//!   byte of the stream from the start, and every later chunk is appended to it. Before that,
//!   the tail *is* the whole stream (it cannot have been trimmed yet), so nothing is lost.
//!
//! Bytes are kept raw and decoded as UTF-8 (lossily) only when read, never inside a
//! character: a cut that falls inside one moves to the next character boundary.

use super::truncate::{FullText, KeptEnd, TruncationNotice, truncate_tail};
use crate::OutputLimits;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Where the full stream goes once it exceeds the limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spill {
    /// Into a fresh `kun-output-*.log` file in this directory (created when needed).
    Dir(PathBuf),
    /// Nowhere: only the bounded tail is kept.
    Disabled,
}

impl Default for Spill {
    /// `std::env::temp_dir()/kun-output`.
    fn default() -> Self {
        Self::Dir(std::env::temp_dir().join("kun-output"))
    }
}

/// The spill file's state.
#[derive(Debug)]
enum SpillState {
    /// The stream is still within the limits (or spilling is disabled).
    Idle,
    /// Writing to `path`.
    Writing {
        path: PathBuf,
        writer: BufWriter<File>,
    },
    /// Spilling failed; the message says why.
    Failed {
        path: Option<PathBuf>,
        error: String,
    },
}

/// Accumulates a child's output; see the module docs.
#[derive(Debug)]
pub struct OutputAccumulator {
    limits: OutputLimits,
    spill: Spill,
    tail: VecDeque<u8>,
    total_bytes: u64,
    newlines: u64,
    last_byte: Option<u8>,
    state: SpillState,
}

/// What [`OutputAccumulator::snapshot`] returns: the tail-truncated text and what was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSnapshot {
    /// The end of the output, within the limits.
    pub text: String,
    /// Whether the whole stream exceeded the limits.
    pub truncated: bool,
    /// Lines in the whole stream.
    pub total_lines: u64,
    /// Bytes in the whole stream.
    pub total_bytes: u64,
    /// Lines in `text`.
    pub output_lines: usize,
    /// Bytes in `text`.
    pub output_bytes: usize,
    /// The notice saying what was cut and where the full output is (only when truncated).
    pub notice: Option<String>,
    /// The file holding the full stream (only when truncated and spilling worked).
    pub full_output_path: Option<PathBuf>,
}

/// Output that arrived since an offset; see [`OutputAccumulator::read_since`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOutput {
    /// The new text (decoded lossily; an incomplete character at the end is left for later).
    pub text: String,
    /// Bytes after the offset that dropped out of the kept tail before this read.
    pub skipped_bytes: u64,
    /// The offset to pass next time.
    pub next_offset: u64,
}

impl OutputAccumulator {
    /// An accumulator spilling into the default directory.
    #[must_use]
    pub fn new(limits: OutputLimits) -> Self {
        Self::with_spill(limits, Spill::default())
    }

    /// An accumulator with an explicit spill setting.
    #[must_use]
    pub fn with_spill(limits: OutputLimits, spill: Spill) -> Self {
        Self {
            limits,
            spill,
            tail: VecDeque::new(),
            total_bytes: 0,
            newlines: 0,
            last_byte: None,
            state: SpillState::Idle,
        }
    }

    /// The most bytes the tail keeps.
    fn tail_capacity(&self) -> usize {
        self.limits.max_bytes.saturating_mul(2)
    }

    /// Feeds a chunk of output (stdout and stderr interleaved as they arrive).
    pub fn push(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.total_bytes += chunk.len() as u64;
        self.newlines += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
        self.last_byte = chunk.last().copied();
        match &mut self.state {
            SpillState::Writing { writer, path } => {
                if let Err(err) = writer.write_all(chunk) {
                    self.state = SpillState::Failed {
                        path: Some(path.clone()),
                        error: err.to_string(),
                    };
                }
                self.tail.extend(chunk);
            }
            SpillState::Idle => {
                self.tail.extend(chunk);
                if self.exceeds_limits() {
                    self.start_spill();
                }
            }
            SpillState::Failed { .. } => self.tail.extend(chunk),
        }
        let excess = self.tail.len().saturating_sub(self.tail_capacity());
        self.tail.drain(..excess);
    }

    /// Opens the spill file and writes the whole stream so far (the tail, untrimmed yet).
    fn start_spill(&mut self) {
        let Spill::Dir(dir) = &self.spill else {
            return;
        };
        let opened = std::fs::create_dir_all(dir).and_then(|()| {
            tempfile::Builder::new()
                .prefix("kun-output-")
                .suffix(".log")
                .rand_bytes(16)
                .tempfile_in(dir)
        });
        let (file, path) = match opened.and_then(|temp| temp.keep().map_err(|err| err.error)) {
            Ok(kept) => kept,
            Err(err) => {
                self.state = SpillState::Failed {
                    path: None,
                    error: err.to_string(),
                };
                return;
            }
        };
        let mut writer = BufWriter::new(file);
        let (front, back) = self.tail.as_slices();
        self.state = match writer
            .write_all(front)
            .and_then(|()| writer.write_all(back))
        {
            Ok(()) => SpillState::Writing { path, writer },
            Err(err) => SpillState::Failed {
                path: Some(path),
                error: err.to_string(),
            },
        };
    }

    /// Bytes in the whole stream.
    #[must_use]
    pub const fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Lines in the whole stream (a trailing newline does not start a line).
    #[must_use]
    pub fn total_lines(&self) -> u64 {
        match self.last_byte {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }

    /// Whether the whole stream is over either limit.
    #[must_use]
    pub fn exceeds_limits(&self) -> bool {
        self.total_lines() > self.limits.max_lines as u64
            || self.total_bytes > self.limits.max_bytes as u64
    }

    /// The spill file, once the stream has exceeded the limits and spilling works.
    #[must_use]
    pub fn full_output_path(&self) -> Option<&Path> {
        match &self.state {
            SpillState::Writing { path, .. } => Some(path),
            SpillState::Idle | SpillState::Failed { .. } => None,
        }
    }

    /// Why the full output could not be saved (and where a partial copy is), if spilling
    /// failed.
    #[must_use]
    pub fn spill_error(&self) -> Option<String> {
        match &self.state {
            SpillState::Failed {
                error,
                path: Some(path),
            } => Some(format!("{error}; a partial copy is in {}", path.display())),
            SpillState::Failed { error, path: None } => Some(error.clone()),
            SpillState::Idle | SpillState::Writing { .. } => None,
        }
    }

    /// Flushes the spill file so readers see every byte pushed so far.
    fn flush(&mut self) {
        if let SpillState::Writing { writer, path } = &mut self.state
            && let Err(err) = writer.flush()
        {
            self.state = SpillState::Failed {
                path: Some(path.clone()),
                error: err.to_string(),
            };
        }
    }

    /// The stream offset of the first kept tail byte.
    fn tail_start(&self) -> u64 {
        self.total_bytes - self.tail.len() as u64
    }

    /// The kept tail as text, starting at a character boundary when the front was trimmed.
    fn tail_text(&self) -> String {
        let mut bytes: Vec<u8> = self.tail.iter().copied().collect();
        if self.tail_start() > 0 {
            let skip = bytes
                .iter()
                .take(3)
                .take_while(|&&b| is_continuation(b))
                .count();
            bytes.drain(..skip);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The output so far: the tail within the limits, the notice and the spill path. Flushes
    /// the spill file first.
    #[must_use]
    pub fn snapshot(&mut self) -> OutputSnapshot {
        self.flush();
        let text = self.tail_text();
        let cut = truncate_tail(&text, self.limits);
        let truncated = self.exceeds_limits();
        let full_output_path = if truncated {
            self.full_output_path().map(Path::to_path_buf)
        } else {
            None
        };
        let failure = self
            .spill_error()
            .map(|error| format!("the full output could not be saved ({error})"));
        let notice = truncated.then(|| {
            let full = match (&full_output_path, &failure) {
                (Some(path), _) => FullText::Saved(path),
                (None, Some(message)) => FullText::Hint(message),
                (None, None) => FullText::NotSaved,
            };
            TruncationNotice {
                kept: KeptEnd::Tail,
                shown_lines: cut.output_lines as u64,
                total_lines: self.total_lines(),
                shown_bytes: cut.output_bytes as u64,
                total_bytes: self.total_bytes,
                partial_line: cut.last_line_partial,
                full,
            }
            .to_string()
        });
        OutputSnapshot {
            output_lines: cut.output_lines,
            output_bytes: cut.output_bytes,
            text: cut.content,
            truncated,
            total_lines: self.total_lines(),
            total_bytes: self.total_bytes,
            notice,
            full_output_path,
        }
    }

    /// The output after stream offset `offset` that is still in the kept tail. Bytes that
    /// dropped out of the tail are counted in `skipped_bytes` (they are in the spill file). An
    /// incomplete character at the end stays for the next read unless `at_end` says the stream
    /// is over.
    #[must_use]
    pub fn read_since(&mut self, offset: u64, at_end: StreamEnd) -> NewOutput {
        self.flush();
        let tail_start = self.tail_start();
        let start = offset.clamp(tail_start, self.total_bytes);
        let skipped_bytes = start - offset.min(start);
        let from = usize::try_from(start - tail_start).unwrap_or(usize::MAX);
        let mut bytes: Vec<u8> = self.tail.iter().skip(from).copied().collect();
        if skipped_bytes > 0 {
            let skip = bytes
                .iter()
                .take(3)
                .take_while(|&&b| is_continuation(b))
                .count();
            bytes.drain(..skip);
        }
        let held_back = match at_end {
            StreamEnd::Open => incomplete_suffix_len(&bytes),
            StreamEnd::Closed => 0,
        };
        bytes.truncate(bytes.len() - held_back);
        NewOutput {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            skipped_bytes,
            next_offset: self.total_bytes - held_back as u64,
        }
    }
}

/// Whether more output may still arrive, for [`OutputAccumulator::read_since`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// The producer is still running: hold back an incomplete trailing character.
    Open,
    /// The producer is done: decode everything.
    Closed,
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// How many bytes at the end of `bytes` start a UTF-8 character that is not complete yet.
fn incomplete_suffix_len(bytes: &[u8]) -> usize {
    let window = bytes.len().min(4);
    for back in 1..=window {
        let byte = bytes[bytes.len() - back];
        if is_continuation(byte) {
            continue;
        }
        let needed = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if needed > back { back } else { 0 };
    }
    0
}

/// Decodes a byte stream chunk by chunk without splitting characters: an incomplete character
/// at the end of a chunk is held until the next one. Used to forward live output.
#[derive(Debug, Default)]
pub struct Utf8Chunker {
    pending: Vec<u8>,
}

impl Utf8Chunker {
    /// A decoder with nothing pending.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The text of `chunk` (plus anything held back), lossily decoded.
    pub fn decode(&mut self, chunk: &[u8]) -> String {
        self.pending.extend_from_slice(chunk);
        let keep = incomplete_suffix_len(&self.pending);
        let rest = self.pending.split_off(self.pending.len() - keep);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = rest;
        text
    }

    /// Whatever is still held back, lossily decoded.
    pub fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_suffixes() {
        assert_eq!(incomplete_suffix_len(b"abc"), 0);
        assert_eq!(incomplete_suffix_len("é".as_bytes()), 0);
        assert_eq!(incomplete_suffix_len(&"é".as_bytes()[..1]), 1);
        assert_eq!(incomplete_suffix_len(&"日".as_bytes()[..2]), 2);
        assert_eq!(incomplete_suffix_len(&"😀".as_bytes()[..3]), 3);
        assert_eq!(incomplete_suffix_len("😀".as_bytes()), 0);
        assert_eq!(incomplete_suffix_len(b""), 0);
    }

    #[test]
    fn chunker_never_splits_characters() {
        let text = "aé日😀z";
        let bytes = text.as_bytes();
        let mut chunker = Utf8Chunker::new();
        let mut out = String::new();
        for byte in bytes {
            out.push_str(&chunker.decode(std::slice::from_ref(byte)));
        }
        out.push_str(&chunker.finish());
        assert_eq!(out, text);
    }
}
