//! One page of a sorted result list: how much fits, and the fields every search tool returns
//! about it (`total`, and when they apply `next_cursor` and `notice`).
//!
//! The notice is also the last line the model reads, in brackets, and only when there is
//! something to say: more pages (`[matches 1–50 of 120; next page: the same call with cursor
//! "…"]`), the last of several pages, an empty result, or notes (clipped lines, unreadable
//! paths).
//!
//! A page holds at most `limit` entries (the `limit` argument, default and ceiling
//! [`OutputLimits::max_lines`]) and at most [`OutputLimits::max_bytes`] of estimated output, but
//! always at least one entry when any remain, so paging always advances.

use super::cursor::QueryId;
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
    /// The entry limit was reached.
    Limit,
    /// The next entry would have exceeded the byte budget.
    Bytes,
}

/// Takes entries for one page; `size` estimates an entry's output bytes.
pub(crate) fn fill<T>(
    entries: impl Iterator<Item = T>,
    size: impl Fn(&T) -> usize,
    budget: PageBudget,
) -> (Vec<T>, PageEnd) {
    let mut page = Vec::new();
    let mut bytes = 0usize;
    for entry in entries {
        if page.len() >= budget.limit {
            return (page, PageEnd::Limit);
        }
        let entry_bytes = size(&entry);
        if !page.is_empty() && bytes.saturating_add(entry_bytes) > budget.max_bytes {
            return (page, PageEnd::Bytes);
        }
        bytes = bytes.saturating_add(entry_bytes);
        page.push(entry);
    }
    (page, PageEnd::Exhausted)
}

/// The paging fields of a search tool's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PageFields {
    /// How many entries the whole result has.
    pub total: usize,
    /// The cursor for the next page, when later pages exist (pass it back as `cursor`).
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
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageReport<'a> {
    /// The tool to call for the next page.
    pub(crate) tool: &'a str,
    /// What the entries are, plural (`matches`, `files`, `entries`).
    pub(crate) noun: &'a str,
    /// Entries in the whole result.
    pub(crate) total: usize,
    /// Index of this page's first entry.
    pub(crate) offset: usize,
    /// Entries on this page.
    pub(crate) shown: usize,
    /// Why the page stopped.
    pub(crate) end: PageEnd,
    /// The budget the page was filled with.
    pub(crate) budget: PageBudget,
}

impl PageReport<'_> {
    /// Whether entries remain after this page.
    pub(crate) fn has_more(&self) -> bool {
        self.offset.saturating_add(self.shown) < self.total
    }

    /// The paging fields. `empty` explains an empty result; `notes` are appended to the notice.
    pub(crate) fn into_fields(self, id: &QueryId, empty: &str, notes: &[String]) -> PageFields {
        let has_more = self.has_more();
        let next_cursor = has_more.then(|| id.cursor(self.offset + self.shown));
        let mut notice: Vec<String> = Vec::new();
        let (first, last) = (self.offset + 1, self.offset + self.shown);
        if self.total == 0 {
            notice.push(empty.to_owned());
        } else if self.shown == 0 {
            notice.push(format!(
                "the cursor points past the end of the {} {}: the files changed since the previous \
                 page; start again without a cursor",
                self.total, self.noun
            ));
        } else if let Some(cursor) = &next_cursor {
            let reason = match self.end {
                PageEnd::Bytes => format!("{} per page", format_bytes(self.budget.max_bytes)),
                PageEnd::Limit | PageEnd::Exhausted => {
                    format!("{} {} per page", self.budget.limit, self.noun)
                }
            };
            notice.push(format!(
                "{} {first}–{last} of {} ({reason}); next page: the same {} call with cursor \
                 \"{cursor}\", or narrow the search",
                self.noun, self.total, self.tool
            ));
        } else if self.offset > 0 {
            notice.push(format!(
                "{} {first}–{last} of {}: the last page",
                self.noun, self.total
            ));
        }
        notice.extend(notes.iter().cloned());
        PageFields {
            total: self.total,
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
    }

    #[test]
    fn fields_carry_a_cursor_only_when_more_remain() {
        let id = QueryId::of(&json!({"q": 1}));
        let report = PageReport {
            tool: "grep",
            noun: "matches",
            total: 10,
            offset: 0,
            shown: 4,
            end: PageEnd::Limit,
            budget: budget(4, 1000),
        };
        let fields = report.into_fields(&id, "none", &[]);
        let cursor = fields.next_cursor.clone().unwrap();
        assert_eq!(id.offset(Some(&cursor)), Ok(4));
        assert_eq!(
            fields.notice.as_deref().unwrap_or_default(),
            format!(
                "matches 1–4 of 10 (4 matches per page); next page: the same grep call with \
                 cursor \"{cursor}\", or narrow the search"
            ),
        );
        let last = PageReport {
            offset: 8,
            shown: 2,
            end: PageEnd::Exhausted,
            ..report
        }
        .into_fields(&id, "none", &[]);
        assert!(last.next_cursor.is_none());
        assert_eq!(
            last.notice.as_deref(),
            Some("matches 9–10 of 10: the last page")
        );
        let empty = PageReport {
            total: 0,
            shown: 0,
            ..report
        }
        .into_fields(&id, "nothing here", &[]);
        assert_eq!(empty.notice.as_deref(), Some("nothing here"));
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(format_bytes(512), "512 bytes");
        assert_eq!(format_bytes(50 * 1024), "50 KB");
        assert_eq!(format_bytes(3 * 1024 * 1024 + 512 * 1024), "3.5 MB");
    }
}
