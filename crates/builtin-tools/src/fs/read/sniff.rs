//! What kind of content a file holds, judged by its first bytes.

use memchr::memchr;

/// How many leading bytes are inspected.
pub(crate) const SNIFF_BYTES: usize = 8 * 1024;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ContentKind {
    /// An image the model can see, with its MIME type.
    Image(&'static str),
    /// Bytes that are not text (a NUL among the first [`SNIFF_BYTES`]).
    Binary,
    /// Text (possibly not valid UTF-8; it is decoded lossily).
    Text,
}

/// Classifies a file by its first bytes (up to [`SNIFF_BYTES`]).
pub(crate) fn sniff(head: &[u8]) -> ContentKind {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        ContentKind::Image("image/png")
    } else if head.starts_with(&[0xff, 0xd8, 0xff]) {
        ContentKind::Image("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        ContentKind::Image("image/gif")
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        ContentKind::Image("image/webp")
    } else if memchr(0, &head[..head.len().min(SNIFF_BYTES)]).is_some() {
        ContentKind::Binary
    } else {
        ContentKind::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_magic_and_nul() {
        assert_eq!(
            sniff(b"\x89PNG\r\n\x1a\n\0\0"),
            ContentKind::Image("image/png")
        );
        assert_eq!(
            sniff(&[0xff, 0xd8, 0xff, 0xe0]),
            ContentKind::Image("image/jpeg")
        );
        assert_eq!(sniff(b"GIF89a"), ContentKind::Image("image/gif"));
        assert_eq!(
            sniff(b"RIFF\0\0\0\0WEBPVP8 "),
            ContentKind::Image("image/webp")
        );
        assert_eq!(sniff(b"ELF\0\x01"), ContentKind::Binary);
        assert_eq!(sniff("plain text, caf\u{e9}".as_bytes()), ContentKind::Text);
        assert_eq!(sniff(b""), ContentKind::Text);
    }
}
