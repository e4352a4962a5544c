//! Head and tail truncation: limits, line rules, UTF-8 boundaries, notices, and properties
//! that hold for any input.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers fail loudly"
)]

use kun_builtin_tools::OutputLimits;
use kun_builtin_tools::output::{FullText, KeptEnd, TruncatedBy, truncate_head, truncate_tail};
use proptest::prelude::*;
use std::path::Path;

fn numbered(lines: usize) -> String {
    (1..=lines).map(|n| format!("line {n}\n")).collect()
}

#[test]
fn tail_keeps_the_last_lines_and_counts_everything() {
    let text = numbered(100);
    let cut = truncate_tail(&text, OutputLimits::new(3, 10_000));
    assert_eq!(cut.content, "line 98\nline 99\nline 100");
    assert_eq!(cut.kept, KeptEnd::Tail);
    assert_eq!(cut.truncated_by, Some(TruncatedBy::Lines));
    assert_eq!((cut.total_lines, cut.total_bytes), (100, text.len()));
    assert_eq!((cut.output_lines, cut.output_bytes), (3, cut.content.len()));
}

#[test]
fn head_keeps_the_first_lines() {
    let text = numbered(100);
    let cut = truncate_head(&text, OutputLimits::new(2, 10_000));
    assert_eq!(cut.content, "line 1\nline 2");
    assert_eq!(cut.kept, KeptEnd::Head);
    assert!(cut.is_truncated());
}

#[test]
fn the_byte_limit_cuts_between_lines() {
    let text = numbered(10);
    let tail = truncate_tail(&text, OutputLimits::new(1_000, 20));
    assert_eq!(tail.content, "line 9\nline 10");
    assert_eq!(tail.truncated_by, Some(TruncatedBy::Bytes));
    let head = truncate_head(&text, OutputLimits::new(1_000, 20));
    assert_eq!(head.content, "line 1\nline 2\nline 3");
}

#[test]
fn an_empty_text_has_no_lines_and_is_never_cut() {
    let cut = truncate_tail("", OutputLimits::new(1, 1));
    assert_eq!(
        (cut.total_lines, cut.content.as_str(), cut.is_truncated()),
        (0, "", false)
    );
}

#[test]
fn a_long_last_line_keeps_its_end_without_splitting_a_character() {
    // Each "€" is three bytes; a 10-byte cut from the end must start on a boundary.
    let text = "head\n€€€€€€€€";
    let cut = truncate_tail(text, OutputLimits::new(5, 10));
    assert!(cut.last_line_partial);
    assert_eq!(cut.content, "€€€");
    assert_eq!(cut.output_bytes, 9);
}

#[test]
fn four_byte_characters_survive_every_byte_limit() {
    let text = "😀😀😀😀";
    for max_bytes in 1..=text.len() {
        let cut = truncate_tail(text, OutputLimits::new(5, max_bytes));
        assert!(cut.content.len() <= max_bytes, "{max_bytes}");
        assert!(text.ends_with(&cut.content));
        assert_eq!(cut.content.chars().count(), max_bytes / 4, "{max_bytes}");
    }
}

#[test]
fn the_notice_names_the_spill_file() {
    let text = numbered(15_320);
    let cut = truncate_tail(&text, OutputLimits::new(2_000, 1_000_000));
    let notice = cut
        .notice(FullText::Saved(Path::new("/tmp/kun-output/run.log")))
        .unwrap();
    assert!(
        notice.starts_with("[showing the last 2,000 of 15,320 lines ("),
        "{notice}"
    );
    assert!(
        notice.ends_with("; full output: /tmp/kun-output/run.log]"),
        "{notice}"
    );
}

proptest! {
    #[test]
    fn tails_are_suffixes_within_the_limits(text in "(\\PC{0,12}\n?){0,30}", lines in 1usize..10, bytes in 1usize..80) {
        let limits = OutputLimits::new(lines, bytes);
        let cut = truncate_tail(&text, limits);
        if cut.is_truncated() {
            let body = text.strip_suffix('\n').unwrap_or(&text);
            prop_assert!(body.ends_with(&cut.content));
            prop_assert!(cut.content.len() <= bytes);
            prop_assert!(cut.output_lines <= lines);
        } else {
            prop_assert!(text.starts_with(&cut.content));
        }
    }

    #[test]
    fn heads_are_prefixes_within_the_limits(text in "(\\PC{0,12}\n?){0,30}", lines in 1usize..10, bytes in 1usize..80) {
        let cut = truncate_head(&text, OutputLimits::new(lines, bytes));
        prop_assert!(text.starts_with(&cut.content));
        if cut.is_truncated() {
            prop_assert!(cut.content.len() <= bytes);
            prop_assert!(cut.output_lines <= lines);
        }
    }
}
