//! The streaming accumulator: totals, the bounded tail, the spill file, UTF-8 across chunk
//! boundaries, and reading new output since an offset.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::output::{OutputAccumulator, Spill, StreamEnd};

fn spill_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn short_output_is_kept_whole_and_not_spilled() {
    let dir = spill_dir();
    let mut acc =
        OutputAccumulator::with_spill(OutputLimits::new(10, 1_000), Spill::Dir(dir.path().into()));
    acc.push(b"hello\n");
    acc.push(b"world\n");
    let snap = acc.snapshot();
    assert_eq!(snap.text, "hello\nworld\n");
    assert!(!snap.truncated);
    assert_eq!((snap.total_lines, snap.total_bytes), (2, 12));
    assert_eq!(snap.notice, None);
    assert_eq!(snap.full_output_path, None);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn long_output_spills_everything_and_keeps_a_bounded_tail() {
    let dir = spill_dir();
    let limits = OutputLimits::new(50, 300);
    let mut acc = OutputAccumulator::with_spill(limits, Spill::Dir(dir.path().join("nested")));
    let mut expected = Vec::new();
    for n in 0..5_000 {
        let line = format!("line {n}\n");
        expected.extend_from_slice(line.as_bytes());
        acc.push(line.as_bytes());
    }
    let snap = acc.snapshot();
    assert!(snap.truncated);
    assert_eq!(snap.total_lines, 5_000);
    assert_eq!(snap.total_bytes, expected.len() as u64);
    assert!(snap.text.ends_with("line 4999"), "{}", snap.text);
    assert!(snap.text.len() <= 300);
    let path = snap.full_output_path.clone().expect("spilled");
    assert!(path.starts_with(dir.path().join("nested")));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        expected,
        "the spill file holds the full stream"
    );
    let notice = snap.notice.unwrap();
    assert!(notice.contains("of 5,000 lines"), "{notice}");
    assert!(notice.contains(&path.display().to_string()), "{notice}");
}

#[test]
fn the_line_limit_alone_triggers_a_spill() {
    let dir = spill_dir();
    let mut acc =
        OutputAccumulator::with_spill(OutputLimits::new(3, 10_000), Spill::Dir(dir.path().into()));
    acc.push(b"a\nb\nc\nd\n");
    let snap = acc.snapshot();
    assert!(snap.truncated);
    assert_eq!(snap.text, "b\nc\nd");
    assert_eq!(
        std::fs::read_to_string(snap.full_output_path.unwrap()).unwrap(),
        "a\nb\nc\nd\n"
    );
}

#[test]
fn disabled_spill_says_the_output_was_not_kept() {
    let mut acc = OutputAccumulator::with_spill(OutputLimits::new(1, 100), Spill::Disabled);
    acc.push(b"1\n2\n3\n");
    let snap = acc.snapshot();
    assert_eq!(snap.full_output_path, None);
    assert!(snap.notice.unwrap().contains("was not kept"));
}

#[test]
fn an_unwritable_spill_dir_is_reported_not_fatal() {
    let dir = spill_dir();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let mut acc = OutputAccumulator::with_spill(OutputLimits::new(1, 100), Spill::Dir(file));
    acc.push(b"1\n2\n");
    let snap = acc.snapshot();
    assert_eq!(snap.text, "2");
    assert!(snap.notice.unwrap().contains("could not be saved"));
}

#[test]
fn characters_split_across_chunks_decode_whole() {
    let mut acc = OutputAccumulator::with_spill(OutputLimits::new(10, 1_000), Spill::Disabled);
    let text = "naïve 日本語 😀\n";
    for byte in text.as_bytes() {
        acc.push(std::slice::from_ref(byte));
    }
    assert_eq!(acc.snapshot().text, text);
}

#[test]
fn a_trimmed_tail_starts_on_a_character_boundary() {
    // 3-byte characters, a tail capacity of 2 × 10 bytes: the trim lands inside one.
    let mut acc = OutputAccumulator::with_spill(OutputLimits::new(100, 10), Spill::Disabled);
    acc.push("€€€€€€€€€€€€€€€€€€€€".as_bytes());
    let snap = acc.snapshot();
    assert!(!snap.text.contains('\u{FFFD}'), "{:?}", snap.text);
    assert!(snap.text.chars().all(|c| c == '€'));
    assert!(snap.text.len() <= 10);
}

#[test]
fn read_since_returns_new_output_and_holds_back_partial_characters() {
    let mut acc = OutputAccumulator::with_spill(OutputLimits::new(100, 1_000), Spill::Disabled);
    acc.push(b"first\n");
    let first = acc.read_since(0, StreamEnd::Open);
    assert_eq!(
        (first.text.as_str(), first.skipped_bytes, first.next_offset),
        ("first\n", 0, 6)
    );
    let euro = "€".as_bytes();
    acc.push(b"x");
    acc.push(&euro[..1]);
    let second = acc.read_since(first.next_offset, StreamEnd::Open);
    assert_eq!(second.text, "x");
    acc.push(&euro[1..]);
    let third = acc.read_since(second.next_offset, StreamEnd::Closed);
    assert_eq!(third.text, "€");
    assert_eq!(
        acc.read_since(third.next_offset, StreamEnd::Closed).text,
        ""
    );
}

#[test]
fn read_since_counts_bytes_that_left_the_tail() {
    let dir = spill_dir();
    let mut acc =
        OutputAccumulator::with_spill(OutputLimits::new(1_000, 10), Spill::Dir(dir.path().into()));
    acc.push(b"0123456789abcdefghijklmnopqrstuvwxyz");
    let read = acc.read_since(0, StreamEnd::Closed);
    assert_eq!(
        read.text, "ghijklmnopqrstuvwxyz",
        "the tail holds the last 2 × 10 bytes"
    );
    assert_eq!(read.skipped_bytes, 16);
    assert!(acc.full_output_path().is_some());
}
