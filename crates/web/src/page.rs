//! What a fetched body is, how its bytes become text, and the text the model reads.
//!
//! | content type                                              | kind   | `markdown` (default) | `text`      | `raw`   |
//! |-----------------------------------------------------------|--------|----------------------|-------------|---------|
//! | `text/html`, `application/xhtml+xml`                      | html   | Markdown of the main content | its text | the HTML |
//! | `application/json`, `*/*+json`                            | json   | pretty-printed       | pretty-printed | as sent |
//! | `text/*`, `*/*+xml`, `application/xml`, JavaScript, YAML, TOML | text | as sent        | as sent     | as sent |
//! | anything else (images, PDF, archives, `octet-stream`)     | binary | refused, naming the content type |||
//!
//! Without a content type the first bytes decide (`<!doctype html` or `<html` → html; NUL
//! bytes or invalid UTF-8 → binary; otherwise text).
//!
//! Charsets, in order: a byte-order mark, the `charset` of the content type, a
//! `<meta charset>` (or `http-equiv`) in the first 1,024 bytes of HTML, else UTF-8; decoded
//! with `encoding_rs` (so Shift_JIS, GBK, windows-1251 … all work), malformed bytes replaced.

use encoding_rs::{Encoding, UTF_8};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentKind {
    /// An HTML page.
    Html,
    /// JSON.
    Json,
    /// Other text.
    Text,
    /// Not text.
    Binary,
}

impl ContentKind {
    /// The kind a `Content-Type` declares; `None` when it is empty.
    #[must_use]
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let mime = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if mime.is_empty() {
            return None;
        }
        Some(match mime.as_str() {
            "text/html" | "application/xhtml+xml" => Self::Html,
            "application/json" => Self::Json,
            m if m.ends_with("+json") => Self::Json,
            m if m.starts_with("text/") || m.ends_with("+xml") => Self::Text,
            "application/xml"
            | "application/javascript"
            | "application/ecmascript"
            | "application/x-javascript"
            | "application/yaml"
            | "application/x-yaml"
            | "application/toml"
            | "application/x-sh"
            | "application/sql"
            | "application/graphql" => Self::Text,
            _ => Self::Binary,
        })
    }

    /// The kind the first bytes suggest.
    #[must_use]
    pub fn sniff(body: &[u8]) -> Self {
        let head = &body[..body.len().min(1024)];
        let lower = String::from_utf8_lossy(head)
            .trim_start()
            .to_ascii_lowercase();
        if lower.starts_with("<!doctype html") || lower.starts_with("<html") {
            Self::Html
        } else if head.contains(&0)
            || std::str::from_utf8(head).is_err_and(|e| e.error_len().is_some())
        {
            Self::Binary
        } else {
            Self::Text
        }
    }
}

/// How the model wants the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Markdown for HTML (headings, links, lists, code blocks kept); JSON pretty-printed;
    /// other text as sent.
    #[default]
    Markdown,
    /// Plain text: no markup at all.
    Text,
    /// The body as sent (decoded to text).
    Raw,
}

/// The charset label in a `Content-Type`, if any.
fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (key, value) = param.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').trim_matches('\''))
    })
}

/// A `<meta charset=…>` or `<meta http-equiv content="…; charset=…">` in the first 1,024
/// bytes.
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let mut rest = head.as_str();
    while let Some(at) = rest.find("charset") {
        rest = &rest[at + "charset".len()..];
        let value = rest.trim_start().strip_prefix('=')?.trim_start();
        let value = value.trim_start_matches(['"', '\'']);
        let end = value
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')))
            .unwrap_or(value.len());
        if let Some(encoding) = Encoding::for_label(&value.as_bytes()[..end]) {
            return Some(encoding);
        }
    }
    None
}

/// The encoding of a body (see the module docs for the order).
#[must_use]
pub fn encoding_of(
    body: &[u8],
    content_type: Option<&str>,
    kind: ContentKind,
) -> &'static Encoding {
    if let Some((encoding, _)) = Encoding::for_bom(body) {
        return encoding;
    }
    if let Some(encoding) = content_type
        .and_then(charset_param)
        .and_then(|label| Encoding::for_label(label.as_bytes()))
    {
        return encoding;
    }
    if kind == ContentKind::Html
        && let Some(encoding) = meta_charset(body)
    {
        // A page that declares UTF-16 in ASCII is not UTF-16 (the HTML standard's rule).
        return if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
            UTF_8
        } else {
            encoding
        };
    }
    UTF_8
}

/// The body as text. A body cut at the cap may end inside a character: a trailing
/// replacement character from that cut is dropped.
#[must_use]
pub fn decode(body: &[u8], encoding: &'static Encoding, truncated: bool) -> String {
    let (text, _, _) = encoding.decode(body);
    let mut text = text.into_owned();
    if truncated && text.ends_with('\u{FFFD}') {
        text.pop();
    }
    text
}

/// The text the model reads, and the page title when there is one.
#[must_use]
pub fn render(text: &str, kind: ContentKind, format: Format) -> (String, Option<String>) {
    match (kind, format) {
        (_, Format::Raw) => (text.to_owned(), None),
        (ContentKind::Html, Format::Markdown) => {
            let page = crate::html::to_markdown(text);
            (page.content, page.title)
        }
        (ContentKind::Html, Format::Text) => {
            let page = crate::html::to_text(text);
            (page.content, page.title)
        }
        (ContentKind::Json, _) => (pretty_json(text), None),
        _ => (text.to_owned(), None),
    }
}

/// JSON pretty-printed; text that does not parse (a cut body) stays as it is.
fn pretty_json(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|value| serde_json::to_string_pretty(&value).ok())
        .unwrap_or_else(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types() {
        let cases = [
            ("text/html; charset=utf-8", Some(ContentKind::Html)),
            ("application/xhtml+xml", Some(ContentKind::Html)),
            ("application/json", Some(ContentKind::Json)),
            ("application/problem+json", Some(ContentKind::Json)),
            ("text/plain", Some(ContentKind::Text)),
            ("text/markdown", Some(ContentKind::Text)),
            ("application/atom+xml", Some(ContentKind::Text)),
            ("application/javascript", Some(ContentKind::Text)),
            ("image/png", Some(ContentKind::Binary)),
            ("application/pdf", Some(ContentKind::Binary)),
            ("application/octet-stream", Some(ContentKind::Binary)),
            ("", None),
        ];
        for (content_type, expected) in cases {
            assert_eq!(
                ContentKind::from_content_type(content_type),
                expected,
                "{content_type}"
            );
        }
    }

    #[test]
    fn sniffing() {
        assert_eq!(
            ContentKind::sniff(b"  <!DOCTYPE html><p>x"),
            ContentKind::Html
        );
        assert_eq!(ContentKind::sniff(b"<html>"), ContentKind::Html);
        assert_eq!(ContentKind::sniff(b"plain words"), ContentKind::Text);
        assert_eq!(
            ContentKind::sniff(b"\x89PNG\r\n\x1a\n\0\0"),
            ContentKind::Binary
        );
        assert_eq!(
            ContentKind::sniff(&[0xff, 0xfe, 0xfd, 0x41]),
            ContentKind::Binary
        );
    }

    #[test]
    fn charsets_in_order() {
        let html = ContentKind::Html;
        assert_eq!(
            encoding_of(b"\xEF\xBB\xBFx", Some("text/html; charset=latin1"), html),
            UTF_8,
            "BOM first"
        );
        assert_eq!(
            encoding_of(
                b"<meta charset=utf-8>",
                Some("text/html; charset=\"Shift_JIS\""),
                html
            )
            .name(),
            "Shift_JIS",
            "header before meta"
        );
        assert_eq!(
            encoding_of(b"<meta charset=\"gbk\">", Some("text/html"), html).name(),
            "GBK"
        );
        assert_eq!(
            encoding_of(
                b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\">",
                None,
                html
            )
            .name(),
            "windows-1251"
        );
        assert_eq!(encoding_of(b"<meta charset=utf-16>", None, html), UTF_8);
        assert_eq!(
            encoding_of(b"charset=gbk", None, ContentKind::Text),
            UTF_8,
            "meta only for HTML"
        );
    }

    #[test]
    fn a_cut_multibyte_character_is_dropped() {
        let bytes = "日本".as_bytes();
        assert_eq!(decode(&bytes[..4], UTF_8, true), "日");
        assert_eq!(decode(&bytes[..4], UTF_8, false), "日\u{FFFD}");
    }
}
