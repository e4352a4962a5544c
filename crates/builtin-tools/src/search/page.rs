//! One page of a sorted result list: how much fits, and the fields every search tool returns
//! about it (when they apply: `total`, `next_cursor` and `notice`).
//!
//! The notice is also the last line the model reads, in brackets, and only when there is
//! something to say: more pages (`[matches 1–50 (50 matches per page); more follow; next page:
//! the same grep call with cursor "…", or narrow the search]`), the last of several pages
//! (`[matches 51–80 of 80: the last page]`), an empty result, or notes (clipped lines,
//! unreadable paths).
//!
//! A page holds at most `limit` entries (the `limit` argument, default and ceiling
//! [`OutputLimits::max_lines`]) and at most [`OutputLimits::max_bytes`] of estimated output, but
//! always at least one entry when any remain, so paging always advances.

use super::cursor::{QueryId, Resume};
use crate::OutputLimits;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Rough JSON overhead of one entry (keys, quotes, separators), added to its text sizes.
pub(crate) const ENTRY_OVERHEAD_BYTES: usize = 48;

/// How much one page may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageBudget {
    /// At most this many entries.
    pub(crate) limit: usize,
    /// At most this many bytes of estimated output (at least one entry regardless).
    pub(crate) max_bytes: usize,
}

impl PageBudget {
    /// The budget for a `limit` argument: clamped to `1..=limits.max_lines`; the default is
    /// the ceiling.
    pub(crate) fn new(requested: Option<u64>, limits: OutputLimits) -> Self {
        let ceiling = limits.max_lines.max(1);
        let limit = requested.map_or(ceiling, |n| {
            usize::try_from(n).unwrap_or(usize::MAX).clamp(1, ceiling)
        });
        Self {
            limit,
            max_bytes: limits.max_bytes.max(1),
        }
    }
}

/// Why a page stopped taking entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PageEnd {
    /// No entries were left.
    Exhausted,
    /// The entry limit was reached and another entry exists.
    Limit,
    /// The next entry would have exceeded the byte budget.
    Bytes,
}

/// A page being filled, one entry at a time, in result order. Offering an entry that no longer
/// fits closes the page: that entry is the proof that more results exist, so the search can stop
/// right there.
#[derive(Debug)]
pub(crate) struct PageFill<T> {
    budget: PageBudget,
    entries: Vec<T>,
    bytes: usize,
    end: PageEnd,
}

impl<T> PageFill<T> {
    /// An empty page with `budget`.
    pub(crate) fn new(budget: PageBudget) -> Self {
        Self {
            budget,
            entries: Vec::new(),
            bytes: 0,
            end: PageEnd::Exhausted,
        }
    }

    /// About how many more entries of `typical` bytes the page takes (before the one that
    /// closes it); 0 once it is closed.
    pub(crate) fn room(&self, typical: usize) -> usize {
        if self.is_full() {
            return 0;
        }
        let by_count = self.budget.limit.saturating_sub(self.entries.len());
        let by_bytes = self.budget.max_bytes.saturating_sub(self.bytes) / typical.max(1);
        by_count.min(by_bytes)
    }

    /// Whether the page is closed (an entry did not fit: more results exist).
    pub(crate) fn is_full(&self) -> bool {
        self.end != PageEnd::Exhausted
    }

    /// Offers the next entry of `size` estimated output bytes; `false` when it did not fit
    /// (the page is then closed). The first entry always fits, so paging always advances.
    pub(crate) fn offer(&mut self, entry: T, size: usize) -> bool {
        if self.is_full() {
            return false;
        }
        if self.entries.len() >= self.budget.limit {
            self.end = PageEnd::Limit;
            return false;
        }
        if !self.entries.is_empty() && self.bytes.saturating_add(size) > self.budget.max_bytes {
            self.end = PageEnd::Bytes;
            return false;
        }
        self.bytes = self.bytes.saturating_add(size);
        self.entries.push(entry);
        true
    }

    /// The entries and why the page ended.
    pub(crate) fn finish(self) -> (Vec<T>, PageEnd) {
        (self.entries, self.end)
    }
}

/// Takes entries for one page; `size` estimates an entry's output bytes.
pub(crate) fn fill<T>(
    entries: impl Iterator<Item = T>,
    size: impl Fn(&T) -> usize,
    budget: PageBudget,
) -> (Vec<T>, PageEnd) {
    let mut page = PageFill::new(budget);
    for entry in entries {
        let entry_bytes = size(&entry);
        if !page.offer(entry, entry_bytes) {
            break;
        }
    }
    page.finish()
}

/// The paging fields of a search tool's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PageFields {
    /// How many entries the whole result has, when known: on the last page (the earlier pages
    /// plus this one), and always for `ls`. Pages before the last stop searching as soon as
    /// they are full, so they do not count what follows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    /// The cursor for the next page, when more entries exist (pass it back as `cursor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// What was cut and how to continue, why nothing was found, or what was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

impl PageFields {
    /// Appends the notice, in brackets, as the last line of a rendering.
    pub(crate) fn append_notice(&self, text: &mut String) {
        if let Some(notice) = &self.notice {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push('[');
            text.push_str(notice);
            text.push(']');
        }
    }
}

/// One page's position in the result list, turned into [`PageFields`].
#[derive(Debug, Clone)]
pub(crate) struct PageReport<'a> {
    /// The tool to call for the next page.
    pub(crate) tool: &'a str,
    /// What the entries are, plural (`matches`, `files`, `entries`).
    pub(crate) noun: &'a str,
    /// Entries shown on the earlier pages.
    pub(crate) offset: usize,
    /// Entries on this page.
    pub(crate) shown: usize,
    /// Entries in the whole result, when known without searching further (`ls`).
    pub(crate) known_total: Option<usize>,
    /// Why the page stopped.
    pub(crate) end: PageEnd,
    /// The budget the page was filled with.
    pub(crate) budget: PageBudget,
    /// Where the next page resumes (the last entry shown), when more entries exist.
    pub(crate) next: Option<Resume>,
}

impl PageReport<'_> {
    /// The paging fields. `empty` explains an empty result; `notes` are appended to the notice.
    pub(crate) fn into_fields(self, id: &QueryId, empty: &str, notes: &[String]) -> PageFields {
        let more = self.end != PageEnd::Exhausted;
        let next_cursor = self
            .next
            .as_ref()
            .filter(|_| more)
            .map(|next| id.cursor(next));
        let total = match (self.known_total, more) {
            (Some(known), _) => Some(known),
            (None, true) => None,
            (None, false) => Some(self.offset.saturating_add(self.shown)),
        };
        let mut notice: Vec<String> = Vec::new();
        let (first, last) = (self.offset + 1, self.offset + self.shown);
        let of_total =
            |total: Option<usize>| total.map_or_else(String::new, |t| format!(" of {t}"));
        if self.shown == 0 && self.offset == 0 {
            notice.push(empty.to_owned());
        } else if self.shown == 0 {
            notice.push(format!(
                "no more {} after the cursor: the files changed since the previous page (a page resumes \
                 after the last entry shown, in the files as they are now); {} were shown before",
                self.noun, self.offset
            ));
        } else if let Some(cursor) = &next_cursor {
            let reason = match self.end {
                PageEnd::Bytes => format!("{} per page", format_bytes(self.budget.max_bytes)),
                PageEnd::Limit | PageEnd::Exhausted => {
                    format!("{} {} per page", self.budget.limit, self.noun)
                }
            };
            let more_follow = if self.known_total.is_some() {
                ""
            } else {
                "; more follow"
            };
            notice.push(format!(
                "{} {first}–{last}{} ({reason}){more_follow}; next page: the same {} call with cursor \
                 \"{cursor}\", or narrow the search",
                self.noun,
                of_total(self.known_total),
                self.tool
            ));
        } else if self.offset > 0 {
            notice.push(format!(
                "{} {first}–{last}{}: the last page",
                self.noun,
                of_total(total)
            ));
        }
        notice.extend(notes.iter().cloned());
        PageFields {
            total,
            next_cursor,
            notice: (!notice.is_empty()).then(|| notice.join("; ")),
        }
    }
}

/// `512 bytes`, `50 KB`, `3.5 MB` (base 1024).
fn format_bytes(bytes: usize) -> String {
    const KIB: usize = 1024;
    if bytes < KIB {
        format!("{bytes} bytes")
    } else if bytes < KIB * KIB {
        format!("{} KB", bytes / KIB)
    } else {
        format!(
            "{}.{} MB",
            bytes / (KIB * KIB),
            (bytes % (KIB * KIB)) * 10 / (KIB * KIB)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn budget(limit: usize, max_bytes: usize) -> PageBudget {
        PageBudget { limit, max_bytes }
    }

    #[test]
    fn budget_clamps_the_limit() {
        let limits = OutputLimits::new(100, 1000);
        assert_eq!(PageBudget::new(None, limits).limit, 100);
        assert_eq!(PageBudget::new(Some(0), limits).limit, 1);
        assert_eq!(PageBudget::new(Some(7), limits).limit, 7);
        assert_eq!(PageBudget::new(Some(u64::MAX), limits).limit, 100);
    }

    #[test]
    fn fill_stops_at_the_limit_or_the_bytes_but_takes_one() {
        let sizes = [10usize, 10, 10, 10];
        assert_eq!(
            fill(sizes.iter(), |s| **s, budget(2, 1000)).1,
            PageEnd::Limit
        );
        let (page, end) = fill(sizes.iter(), |s| **s, budget(10, 25));
        assert_eq!((page.len(), end), (2, PageEnd::Bytes));
        let (page, end) = fill([500usize].iter(), |s| **s, budget(10, 25));
        assert_eq!((page.len(), end), (1, PageEnd::Exhausted));
        let (page, end) = fill(sizes.iter(), |s| **s, budget(10, 1000));
        assert_eq!((page.len(), end), (4, PageEnd::Exhausted));
        let mut room = PageFill::new(budget(10, 100));
        assert_eq!(room.room(20), 5, "bytes bound it");
        assert!(room.offer(1, 20));
        assert_eq!(room.room(1), 9, "the count bounds it");
        while room.offer(1, 20) {}
        assert_eq!(room.room(1), 0, "closed");
        // Exactly `limit` entries and nothing after: the last page, not a full one.
        let (page, end) = fill(sizes.iter(), |s| **s, budget(4, 1000));
        assert_eq!((page.len(), end), (4, PageEnd::Exhausted));
    }

    #[test]
    fn fields_carry_a_cursor_only_when_more_remain() {
        let id = QueryId::of(&json!({"q": 1}));
        let next = Resume {
            after: b"a.rs".to_vec(),
            line: 9,
            shown: 4,
        };
        let report = PageReport {
            tool: "grep",
            noun: "matches",
            offset: 0,
            shown: 4,
            known_total: None,
            end: PageEnd::Limit,
            budget: budget(4, 1000),
            next: Some(next.clone()),
        };
        let fields = report.clone().into_fields(&id, "none", &[]);
        let cursor = fields.next_cursor.clone().unwrap();
        assert_eq!(id.resume(Some(&cursor)), Ok(Some(next)));
        assert_eq!(fields.total, None);
        assert_eq!(
            fields.notice.as_deref().unwrap_or_default(),
            format!(
                "matches 1–4 (4 matches per page); more follow; next page: the same grep call with \
                 cursor \"{cursor}\", or narrow the search"
            ),
        );
        let last = PageReport {
            offset: 8,
            shown: 2,
            end: PageEnd::Exhausted,
            ..report.clone()
        }
        .into_fields(&id, "none", &[]);
        assert!(last.next_cursor.is_none());
        assert_eq!(last.total, Some(10));
        assert_eq!(
            last.notice.as_deref(),
            Some("matches 9–10 of 10: the last page")
        );
        let empty = PageReport {
            shown: 0,
            end: PageEnd::Exhausted,
            ..report.clone()
        }
        .into_fields(&id, "nothing here", &[]);
        assert_eq!(empty.notice.as_deref(), Some("nothing here"));
        assert_eq!(empty.total, Some(0));
        let known = PageReport {
            known_total: Some(30),
            ..report
        }
        .into_fields(&id, "none", &[]);
        assert_eq!(known.total, Some(30));
        assert!(
            known
                .notice
                .unwrap_or_default()
                .starts_with("matches 1–4 of 30 (4 matches")
        );
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(format_bytes(512), "512 bytes");
        assert_eq!(format_bytes(50 * 1024), "50 KB");
        assert_eq!(format_bytes(3 * 1024 * 1024 + 512 * 1024), "3.5 MB");
    }
}
