//! Contract suite for [`ReadTracker`]: an edit needs a read of the file in the same thread,
//! and the file must not have changed on disk since; without revisions, each fragment must be
//! in the latest complete read.
//!
//! | situation                                          | `check_edit` must answer |
//! |----------------------------------------------------|--------------------------|
//! | file never read in this thread                     | `NotRead`                |
//! | read by another thread only                        | `NotRead`                |
//! | same revision on disk, fragment absent or present  | `Ok`                     |
//! | another revision on disk (complete or partial read) | `Changed`               |
//! | no revision: complete read containing every fragment | `Ok`                   |
//! | no revision: complete read missing a fragment      | `StaleOldText`           |
//! | re-read: only the latest read counts               | per the latest read      |
//! | no revision: partial read (content not checked)    | `Ok`                     |
//! | after `clear_thread`                               | `NotRead`                |

use crate::{FileRevision, ReadCheck, ReadObservation, ReadTracker};
use std::path::{Path, PathBuf};

const THREAD: &str = "thread-contract";
const CONTENT: &str = "fn main() {\n    println!(\"hello\");\n}\n";
const SEEN: FileRevision = FileRevision {
    size: 38,
    modified_ns: 1_000,
};
const LATER: FileRevision = FileRevision {
    size: 38,
    modified_ns: 2_000,
};

fn observation(path: &Path, content: &str, partial: bool) -> ReadObservation {
    ReadObservation {
        path: path.to_owned(),
        content: Some(content.to_owned()),
        partial,
        revision: None,
    }
}

fn seen_at(path: &Path, partial: bool, revision: FileRevision) -> ReadObservation {
    ReadObservation {
        revision: Some(revision),
        ..observation(path, CONTENT, partial)
    }
}

fn fragments(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|t| (*t).to_owned()).collect()
}

fn path(name: &str) -> PathBuf {
    Path::new("/workspace-contract/src").join(name)
}

/// Runs every rule of the read-tracker contract. `make` must build a new, empty tracker.
pub fn read_tracker_contract<F: Fn() -> Box<dyn ReadTracker>>(make: F) {
    unread_file_is_not_read(&*make());
    revisions_decide_when_known(&*make());
    fragments_present_pass_and_absent_ones_are_stale(&*make());
    only_the_latest_read_counts(&*make());
    partial_read_skips_the_content_check(&*make());
    reads_belong_to_their_thread(&*make());
    clear_thread_forgets(&*make());
}

fn unread_file_is_not_read(tracker: &dyn ReadTracker) {
    let file = path("unread.rs");
    assert_eq!(
        tracker.check_edit(THREAD, &file, &fragments(&["anything"]), None),
        ReadCheck::NotRead,
        "read-tracker contract: a file never read answers NotRead"
    );
    tracker.record_read(THREAD, observation(&path("other.rs"), CONTENT, false));
    assert_eq!(
        tracker.check_edit(THREAD, &file, &fragments(&["fn main"]), None),
        ReadCheck::NotRead,
        "read-tracker contract: a read of another file does not count"
    );
}

fn revisions_decide_when_known(tracker: &dyn ReadTracker) {
    let file = path("revised.rs");
    tracker.record_read(THREAD, seen_at(&file, false, SEEN));
    for fragments in [
        fragments(&["fn main"]),
        fragments(&["fn not_in_the_file()"]),
    ] {
        assert_eq!(
            tracker.check_edit(THREAD, &file, &fragments, Some(SEEN)),
            ReadCheck::Ok,
            "read-tracker contract: an unchanged file passes whatever the fragments ({fragments:?}); \
             the edit tool reports a missing one"
        );
    }
    assert_eq!(
        tracker.check_edit(THREAD, &file, &fragments(&["fn main"]), Some(LATER)),
        ReadCheck::Changed,
        "read-tracker contract: a file changed on disk since the read answers Changed"
    );
    let window = path("window.rs");
    tracker.record_read(THREAD, seen_at(&window, true, SEEN));
    assert_eq!(
        tracker.check_edit(THREAD, &window, &fragments(&["fn main"]), Some(LATER)),
        ReadCheck::Changed,
        "read-tracker contract: a partial read of a file changed since answers Changed"
    );
    assert_eq!(
        tracker.check_edit(THREAD, &window, &fragments(&["line 9000"]), Some(SEEN)),
        ReadCheck::Ok,
        "read-tracker contract: a partial read of an unchanged file passes"
    );
}

fn fragments_present_pass_and_absent_ones_are_stale(tracker: &dyn ReadTracker) {
    let file = path("main.rs");
    tracker.record_read(THREAD, observation(&file, CONTENT, false));
    let rule = "after a complete read, present fragments pass";
    for present in [
        fragments(&["println!(\"hello\");"]),
        fragments(&["fn main() {", "}\n"]),
        fragments(&[]),
    ] {
        assert_eq!(
            tracker.check_edit(THREAD, &file, &present, None),
            ReadCheck::Ok,
            "read-tracker contract ({rule}): {present:?}"
        );
    }
    let rule = "after a complete read, any absent fragment is stale";
    for absent in [
        fragments(&["println!(\"bye\");"]),
        fragments(&["fn main() {", "fn helper()"]),
    ] {
        assert_eq!(
            tracker.check_edit(THREAD, &file, &absent, None),
            ReadCheck::StaleOldText,
            "read-tracker contract ({rule}): {absent:?}"
        );
    }
}

fn only_the_latest_read_counts(tracker: &dyn ReadTracker) {
    let file = path("changing.rs");
    tracker.record_read(THREAD, observation(&file, "let version = 1;\n", false));
    tracker.record_read(THREAD, observation(&file, "let version = 2;\n", false));
    assert_eq!(
        tracker.check_edit(THREAD, &file, &fragments(&["let version = 2;"]), None),
        ReadCheck::Ok,
        "read-tracker contract: the latest read counts"
    );
    assert_eq!(
        tracker.check_edit(THREAD, &file, &fragments(&["let version = 1;"]), None),
        ReadCheck::StaleOldText,
        "read-tracker contract: a re-read replaces the earlier record"
    );
}

fn partial_read_skips_the_content_check(tracker: &dyn ReadTracker) {
    let file = path("large.rs");
    tracker.record_read(THREAD, observation(&file, "line 1\nline 2\n", true));
    assert_eq!(
        tracker.check_edit(THREAD, &file, &fragments(&["line 9000"]), None),
        ReadCheck::Ok,
        "read-tracker contract: a partial read allows the edit without checking fragments"
    );
}

fn reads_belong_to_their_thread(tracker: &dyn ReadTracker) {
    let file = path("shared.rs");
    tracker.record_read("thread-a", observation(&file, CONTENT, false));
    assert_eq!(
        tracker.check_edit("thread-b", &file, &fragments(&["fn main"]), None),
        ReadCheck::NotRead,
        "read-tracker contract: another thread's read does not count"
    );
    assert_eq!(
        tracker.check_edit("thread-a", &file, &fragments(&["fn main"]), None),
        ReadCheck::Ok,
        "read-tracker contract: the reading thread may edit"
    );
}

fn clear_thread_forgets(tracker: &dyn ReadTracker) {
    let file = path("cleared.rs");
    tracker.record_read(THREAD, observation(&file, CONTENT, false));
    tracker.record_read("thread-kept", observation(&file, CONTENT, false));
    tracker.clear_thread(THREAD);
    assert_eq!(
        tracker.check_edit(THREAD, &file, &fragments(&["fn main"]), None),
        ReadCheck::NotRead,
        "read-tracker contract: clear_thread forgets the thread's reads"
    );
    assert_eq!(
        tracker.check_edit("thread-kept", &file, &fragments(&["fn main"]), None),
        ReadCheck::Ok,
        "read-tracker contract: clear_thread leaves other threads alone"
    );
}
