//! Paging cursors: where the next page resumes.
//!
//! A cursor is base64url (no padding) of a small JSON object
//! `{"q": <query id>, "a": <last path>, "l": <last line>, "n": <entries shown so far>}`:
//!
//! * `q` — a blake3 fingerprint of everything that decides the result list (tool family,
//!   pattern, root, glob, flags), not of the page size, so a caller may change `limit` between
//!   pages. A cursor presented with other arguments is refused.
//! * `a` — the last entry the previous page showed: its path relative to the search root
//!   (base64url of the raw bytes, so names that are not UTF-8 survive), or for `ls` its name.
//! * `l` — for `grep`, the line of that entry's last match shown (`0` otherwise).
//! * `n` — how many entries the earlier pages showed, for numbering and the final total.
//!
//! The next page **resumes after** that position in path order: the walk prunes every
//! directory and file sorting before it, so page k+1 never re-reads what page k covered.
//! Results after the cursor reflect the files as they are when the next page is asked for;
//! entries added or removed before the cursor are not seen (the numbering `n` is then off by
//! that much, nothing else).
//!
//! A cursor is model input, hence untrusted: it is length-bounded, must decode exactly, and its
//! path must be relative with no `.`/`..`/empty component and no NUL. It is only ever compared
//! with walk entries, never opened, so even a forged path cannot reach outside the root.

use crate::Failure;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How many hex digits of the blake3 hash identify a query.
const QUERY_ID_HEX: usize = 16;
/// Cursors longer than this are refused before decoding.
const MAX_CURSOR_CHARS: usize = 8 * 1024;
/// Paths longer than this (bytes) are refused (Linux's `PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;

/// The wire form of a cursor.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CursorBody {
    /// The query id.
    q: String,
    /// The last entry shown, base64url of its raw path bytes.
    a: String,
    /// The last line shown in that entry (grep), else 0.
    l: u64,
    /// Entries shown on earlier pages.
    n: usize,
}

/// Where a page resumes: after `line` of `after` (or after `after` itself when `line` is 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resume {
    /// The last entry shown: a path relative to the walk root (`/`-separated), or a name.
    pub(crate) after: Vec<u8>,
    /// The last line of `after` shown (grep); 0 for tools whose entries are whole paths.
    pub(crate) line: u64,
    /// Entries shown on the earlier pages.
    pub(crate) shown: usize,
}

/// The identity of one query, for issuing and checking cursors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueryId(String);

impl QueryId {
    /// The id of a query described by `parts` (a JSON object; its keys are sorted when
    /// serialised, so the id does not depend on construction order).
    pub(crate) fn of(parts: &Value) -> Self {
        let hash = blake3::hash(parts.to_string().as_bytes());
        let mut hex = hash.to_hex().to_string();
        hex.truncate(QUERY_ID_HEX);
        Self(hex)
    }

    /// The cursor for the page resuming at `resume`.
    pub(crate) fn cursor(&self, resume: &Resume) -> String {
        let body = CursorBody {
            q: self.0.clone(),
            a: URL_SAFE_NO_PAD.encode(&resume.after),
            l: resume.line,
            n: resume.shown,
        };
        // Serialising a struct of strings and integers cannot fail.
        let json = serde_json::to_vec(&body).unwrap_or_default();
        URL_SAFE_NO_PAD.encode(json)
    }

    /// Where the page a cursor asks for resumes; `None` without a cursor (or with a blank one):
    /// the first page.
    ///
    /// # Errors
    /// `invalid_arguments` when the cursor is malformed, oversized, names a path that is not
    /// a plain relative path, or was issued for another query.
    pub(crate) fn resume(&self, cursor: Option<&str>) -> Result<Option<Resume>, Failure> {
        let Some(cursor) = cursor.map(str::trim).filter(|c| !c.is_empty()) else {
            return Ok(None);
        };
        let quoted: String = cursor.chars().take(80).collect();
        let malformed = |why: &str| {
            Failure::invalid(format!(
                "cursor is malformed ({why}): pass next_cursor from the previous page unchanged, or leave \
                 cursor out to start from the first page"
            ))
            .with("cursor", quoted.clone())
        };
        if cursor.len() > MAX_CURSOR_CHARS {
            return Err(malformed("too long"));
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(cursor)
            .map_err(|_| malformed("not base64url"))?;
        let body: CursorBody =
            serde_json::from_slice(&bytes).map_err(|_| malformed("not a cursor"))?;
        if body.q != self.0 {
            return Err(Failure::invalid(
                "cursor does not belong to this query: it was issued for a call with other arguments; repeat \
                 that call's arguments with it, or leave cursor out to start from the first page",
            )
            .with("cursor", quoted));
        }
        let after = URL_SAFE_NO_PAD
            .decode(&body.a)
            .map_err(|_| malformed("bad path"))?;
        if !is_plain_relative(&after) {
            return Err(malformed(
                "its path is not a relative path inside the search root",
            ));
        }
        Ok(Some(Resume {
            after,
            line: body.l,
            shown: body.n,
        }))
    }
}

/// Whether `path` is empty (the root itself) or a relative path of normal components: no
/// leading `/`, no empty, `.` or `..` component, no NUL, at most [`MAX_PATH_BYTES`].
fn is_plain_relative(path: &[u8]) -> bool {
    if path.is_empty() {
        return true;
    }
    path.len() <= MAX_PATH_BYTES
        && !path.contains(&0)
        && path
            .split(|&b| b == b'/')
            .all(|part| !part.is_empty() && part != b"." && part != b"..")
}

#[cfg(test)]
mod tests {
    use super::*;
    use kun_ports::ErrorCode;
    use serde_json::json;

    fn at(after: &str, line: u64, shown: usize) -> Resume {
        Resume {
            after: after.as_bytes().to_vec(),
            line,
            shown,
        }
    }

    #[test]
    fn cursors_round_trip() {
        let id = QueryId::of(&json!({"tool": "grep", "pattern": "fn"}));
        for resume in [at("src/a.rs", 42, 7), at("", 3, 1), at("d/é ü.txt", 0, 0)] {
            let cursor = id.cursor(&resume);
            assert!(
                cursor
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "{cursor}"
            );
            assert_eq!(id.resume(Some(&cursor)), Ok(Some(resume)));
        }
        let raw = Resume {
            after: b"bad\xffname".to_vec(),
            line: 0,
            shown: 1,
        };
        assert_eq!(id.resume(Some(&id.cursor(&raw))), Ok(Some(raw)));
        assert_eq!(id.resume(None), Ok(None));
        assert_eq!(id.resume(Some("  ")), Ok(None));
    }

    #[test]
    fn ids_ignore_key_order_but_not_values() {
        let a = QueryId::of(&json!({"pattern": "fn", "tool": "grep"}));
        let b = QueryId::of(&json!({"tool": "grep", "pattern": "fn"}));
        let c = QueryId::of(&json!({"tool": "grep", "pattern": "fn2"}));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    fn forged(id: &QueryId, after: &[u8]) -> String {
        let body = json!({"q": id.0, "a": URL_SAFE_NO_PAD.encode(after), "l": 1, "n": 1});
        URL_SAFE_NO_PAD.encode(body.to_string())
    }

    #[test]
    fn foreign_malformed_and_hostile_cursors_are_refused() {
        let mine = QueryId::of(&json!({"pattern": "a"}));
        let other = QueryId::of(&json!({"pattern": "b"}));
        let err = mine
            .resume(Some(&other.cursor(&at("x", 1, 1))))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArguments);
        assert!(
            err.message
                .starts_with("cursor does not belong to this query"),
            "{}",
            err.message
        );
        let huge = "A".repeat(MAX_CURSOR_CHARS + 1);
        let mut bad: Vec<String> = vec![
            "%%%".into(),
            "bm90IGpzb24".into(),
            URL_SAFE_NO_PAD.encode(br#"{"q":"x","o":-1}"#),
            huge,
        ];
        for path in [
            &b"/etc/passwd"[..],
            b"../outside",
            b"a/../../b",
            b"a//b",
            b"./a",
            b"a/\0b",
            &[b'a'; MAX_PATH_BYTES + 1],
        ] {
            bad.push(forged(&mine, path));
        }
        for bad in &bad {
            let err = mine.resume(Some(bad)).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArguments);
            assert!(err.message.contains("malformed"), "{}", err.message);
            assert!(
                serde_json::to_string(&err.details).unwrap().len() < 400,
                "the cursor is quoted briefly"
            );
        }
        assert!(mine.resume(Some(&forged(&mine, b"a/b.c"))).is_ok());
    }
}
