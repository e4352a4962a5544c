//! The in-memory read tracker: the contract, normalisation, and its LRU bounds.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

use kun_ports::testkit::read_tracker_contract;
use kun_ports::{ReadCheck, ReadObservation, ReadTracker};
use kun_registry::read_tracker::{InMemoryReadTracker, ReadTrackerBounds, normalise_line_ends};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn read(
    tracker: &dyn ReadTracker,
    thread: &str,
    path: &Path,
    content: Option<&str>,
    partial: bool,
) {
    tracker.record_read(
        thread,
        ReadObservation {
            path: path.to_owned(),
            content: content.map(str::to_owned),
            partial,
            revision: None,
        },
    );
}

fn frags(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| (*t).to_owned()).collect()
}

fn file(n: usize) -> PathBuf {
    PathBuf::from(format!("/ws/file{n}.txt"))
}

#[test]
fn honours_the_contract() {
    read_tracker_contract(|| Box::new(InMemoryReadTracker::default()) as Box<dyn ReadTracker>);
}

#[test]
fn honours_the_contract_with_an_injected_normaliser() {
    read_tracker_contract(|| {
        Box::new(InMemoryReadTracker::with_normaliser(|s: &str| {
            s.to_lowercase()
        })) as Box<dyn ReadTracker>
    });
}

#[test]
fn line_endings_and_trailing_whitespace_do_not_matter() {
    let tracker = InMemoryReadTracker::default();
    let path = Path::new("/ws/crlf.txt");
    read(
        &tracker,
        "t",
        path,
        Some("alpha  \r\nbeta\t\r\ngamma\rdelta\n"),
        false,
    );
    let cases = [
        (frags(&["alpha\nbeta"]), ReadCheck::Ok),
        (frags(&["alpha \r\nbeta  "]), ReadCheck::Ok),
        (frags(&["gamma\ndelta"]), ReadCheck::Ok),
        (frags(&["  alpha"]), ReadCheck::StaleOldText),
        (frags(&["alpha beta"]), ReadCheck::StaleOldText),
    ];
    for (fragments, expected) in cases {
        assert_eq!(
            tracker.check_edit("t", path, &fragments, None),
            expected,
            "{fragments:?}"
        );
    }
}

#[test]
fn blank_fragments_are_not_checked() {
    let tracker = InMemoryReadTracker::default();
    let path = Path::new("/ws/a.txt");
    read(&tracker, "t", path, Some("content\n"), false);
    assert_eq!(
        tracker.check_edit("t", path, &frags(&["", "  \n\t", "content"]), None),
        ReadCheck::Ok
    );
    assert_eq!(
        tracker.check_edit("t", path, &frags(&["", "missing"]), None),
        ReadCheck::StaleOldText
    );
}

#[test]
fn a_complete_read_without_text_allows_the_edit() {
    let tracker = InMemoryReadTracker::default();
    let path = Path::new("/ws/logo.png");
    read(&tracker, "t", path, None, false);
    assert_eq!(
        tracker.check_edit("t", path, &frags(&["anything"]), None),
        ReadCheck::Ok
    );
}

#[test]
fn the_injected_normaliser_applies_to_both_sides() {
    let fold_quotes = |s: &str| s.replace(['\u{201c}', '\u{201d}'], "\"");
    let tracker = InMemoryReadTracker::with_normaliser(fold_quotes);
    let path = Path::new("/ws/quotes.md");
    read(&tracker, "t", path, Some("say \u{201c}hi\u{201d}\n"), false);
    assert_eq!(
        tracker.check_edit("t", path, &frags(&["say \"hi\""]), None),
        ReadCheck::Ok
    );
    let exact = InMemoryReadTracker::default();
    read(&exact, "t", path, Some("say \u{201c}hi\u{201d}\n"), false);
    assert_eq!(
        exact.check_edit("t", path, &frags(&["say \"hi\""]), None),
        ReadCheck::StaleOldText
    );
}

#[test]
fn each_thread_keeps_its_128_most_recent_files() {
    let tracker = InMemoryReadTracker::default();
    for n in 0..129 {
        read(&tracker, "t", &file(n), Some("x"), false);
    }
    assert_eq!(
        tracker.check_edit("t", &file(0), &[], None),
        ReadCheck::NotRead,
        "least recent evicted"
    );
    assert_eq!(tracker.check_edit("t", &file(1), &[], None), ReadCheck::Ok);
    assert_eq!(
        tracker.check_edit("t", &file(128), &[], None),
        ReadCheck::Ok
    );
}

#[test]
fn checking_a_file_keeps_it_recent() {
    let tracker = InMemoryReadTracker::with_bounds(
        Arc::new(normalise_line_ends),
        ReadTrackerBounds {
            files_per_thread: 2,
            threads: 2,
        },
    );
    read(&tracker, "t", &file(0), Some("x"), false);
    read(&tracker, "t", &file(1), Some("x"), false);
    assert_eq!(tracker.check_edit("t", &file(0), &[], None), ReadCheck::Ok);
    read(&tracker, "t", &file(2), Some("x"), false);
    assert_eq!(
        tracker.check_edit("t", &file(0), &[], None),
        ReadCheck::Ok,
        "used recently, kept"
    );
    assert_eq!(
        tracker.check_edit("t", &file(1), &[], None),
        ReadCheck::NotRead,
        "evicted"
    );
}

#[test]
fn at_most_128_threads_are_remembered() {
    let tracker = InMemoryReadTracker::default();
    for n in 0..129 {
        read(&tracker, &format!("thread{n}"), &file(0), Some("x"), false);
    }
    assert_eq!(
        tracker.check_edit("thread0", &file(0), &[], None),
        ReadCheck::NotRead
    );
    assert_eq!(
        tracker.check_edit("thread1", &file(0), &[], None),
        ReadCheck::Ok
    );
    assert_eq!(
        tracker.check_edit("thread128", &file(0), &[], None),
        ReadCheck::Ok
    );
}

#[test]
fn reads_from_earlier_turns_count_and_clearing_is_per_thread() {
    // The tracker has no notion of turns: a read stays until replaced, evicted or cleared.
    let tracker = InMemoryReadTracker::default();
    read(&tracker, "t", &file(0), Some("old turn"), false);
    read(&tracker, "t", &file(1), Some("later turn"), false);
    assert_eq!(
        tracker.check_edit("t", &file(0), &frags(&["old turn"]), None),
        ReadCheck::Ok
    );
    tracker.clear_thread("t");
    tracker.clear_thread("never-seen");
    assert_eq!(
        tracker.check_edit("t", &file(0), &[], None),
        ReadCheck::NotRead
    );
    read(&tracker, "t", &file(0), Some("again"), false);
    assert_eq!(
        tracker.check_edit("t", &file(0), &frags(&["again"]), None),
        ReadCheck::Ok
    );
}

#[test]
fn the_default_normaliser_is_documented_behaviour() {
    assert_eq!(normalise_line_ends("a \t\r\n\r\nb  "), "a\n\nb");
    assert_eq!(normalise_line_ends("no change\n"), "no change\n");
    assert_eq!(
        normalise_line_ends("\u{a0}lead stays\u{a0}"),
        "\u{a0}lead stays"
    );
}
