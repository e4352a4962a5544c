//! Opaque paging cursors.
//!
//! A cursor is base64url (no padding) of a small JSON object `{"q": <query id>, "o": <offset>}`.
//! The query id is a blake3 fingerprint of everything that decides the result list (tool
//! family, pattern, root, glob, flags) — not of the page size, so a caller may change `limit`
//! between pages. A cursor presented with other arguments is refused rather than silently
//! paging through a different list.
//!
//! The offset indexes the sorted result list as it is when the next page is computed; if files
//! change between pages the pages may overlap or skip entries (the list is recomputed, not
//! stored).

use crate::Failure;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How many hex digits of the blake3 hash identify a query.
const QUERY_ID_HEX: usize = 16;

/// The wire form of a cursor.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CursorBody {
    /// The query id.
    q: String,
    /// Index of the first entry of the next page.
    o: usize,
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

    /// The cursor for the page starting at `offset`.
    pub(crate) fn cursor(&self, offset: usize) -> String {
        let body = CursorBody {
            q: self.0.clone(),
            o: offset,
        };
        // Serialising a struct of a string and an integer cannot fail.
        let json = serde_json::to_vec(&body).unwrap_or_default();
        URL_SAFE_NO_PAD.encode(json)
    }

    /// The offset a cursor points at; `0` without a cursor (or with a blank one).
    ///
    /// # Errors
    /// `invalid_arguments` when the cursor is malformed or was issued for another query.
    pub(crate) fn offset(&self, cursor: Option<&str>) -> Result<usize, Failure> {
        let Some(cursor) = cursor.map(str::trim).filter(|c| !c.is_empty()) else {
            return Ok(0);
        };
        let malformed = || {
            Failure::invalid(
                "cursor is malformed: pass next_cursor from the previous page unchanged, or leave cursor out \
                 to start from the first page",
            )
            .with("cursor", cursor)
        };
        let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| malformed())?;
        let body: CursorBody = serde_json::from_slice(&bytes).map_err(|_| malformed())?;
        if body.q != self.0 {
            return Err(Failure::invalid(
                "cursor does not belong to this query: it was issued for a call with other arguments; repeat \
                 that call's arguments with it, or leave cursor out to start from the first page",
            )
            .with("cursor", cursor));
        }
        Ok(body.o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kun_ports::ErrorCode;
    use serde_json::json;

    #[test]
    fn cursors_round_trip() {
        let id = QueryId::of(&json!({"tool": "grep", "pattern": "fn"}));
        let cursor = id.cursor(42);
        assert!(
            cursor
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{cursor}"
        );
        assert_eq!(id.offset(Some(&cursor)), Ok(42));
        assert_eq!(id.offset(None), Ok(0));
        assert_eq!(id.offset(Some("  ")), Ok(0));
    }

    #[test]
    fn ids_ignore_key_order_but_not_values() {
        let a = QueryId::of(&json!({"pattern": "fn", "tool": "grep"}));
        let b = QueryId::of(&json!({"tool": "grep", "pattern": "fn"}));
        let c = QueryId::of(&json!({"tool": "grep", "pattern": "fn2"}));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn foreign_and_malformed_cursors_are_refused() {
        let mine = QueryId::of(&json!({"pattern": "a"}));
        let other = QueryId::of(&json!({"pattern": "b"}));
        let err = mine.offset(Some(&other.cursor(3))).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArguments);
        assert!(
            err.message
                .starts_with("cursor does not belong to this query"),
            "{}",
            err.message
        );
        for bad in [
            "%%%",
            "bm90IGpzb24",
            &URL_SAFE_NO_PAD.encode(br#"{"q":"x","o":-1}"#),
        ] {
            let err = mine.offset(Some(bad)).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArguments);
            assert!(err.message.contains("malformed"), "{}", err.message);
        }
    }
}
