//! Configuration errors that name the file, the line and the key.

use std::fmt;
use std::path::{Path, PathBuf};

/// A configuration problem: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or `command line`).
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The key, dotted (`tools.allow`, `hooks.PreToolUse[0]`), when known.
    pub key: Option<String>,
    /// What is wrong and what to write instead.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// An error about a whole file.
    #[must_use]
    pub fn file(file: &Path, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            line: None,
            key: None,
            message: message.into(),
        }
    }

    /// Turns a TOML parse error into one naming the line and the key.
    #[must_use]
    pub fn from_toml(file: &Path, text: &str, err: &toml::de::Error) -> Self {
        let message = err.message().trim().to_owned();
        let Some(span) = err.span() else {
            return Self::file(file, message);
        };
        let line = text
            .get(..span.start)
            .map_or(1, |before| before.matches('\n').count() + 1);
        let key = key_at(text, span.start, span.end);
        Self {
            file: file.to_path_buf(),
            line: Some(line),
            key,
            message,
        }
    }
}

/// The dotted key an error span points at: the key itself, or the key of the value it covers,
/// prefixed with the table header above it.
fn key_at(text: &str, start: usize, end: usize) -> Option<String> {
    let line_start = text.get(..start)?.rfind('\n').map_or(0, |i| i + 1);
    let line_end = text
        .get(start..)?
        .find('\n')
        .map_or(text.len(), |i| start + i);
    let line = text.get(line_start..line_end)?.trim();
    let spanned = text
        .get(start..end.min(line_end).max(start))?
        .trim()
        .trim_matches('"');
    let own = if let Some(header) = line.strip_prefix("[[").or_else(|| line.strip_prefix('[')) {
        return Some(header.trim_end_matches(']').trim().to_owned());
    } else if let Some((key, _)) = line.split_once('=') {
        key.trim().trim_matches('"').to_owned()
    } else {
        spanned.to_owned()
    };
    let table = text.get(..line_start)?.lines().rev().find_map(|l| {
        let l = l.trim();
        l.starts_with('[').then(|| {
            l.trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .to_owned()
        })
    });
    Some(match table {
        Some(table) if !own.is_empty() => format!("{table}.{own}"),
        Some(table) => table,
        None => own,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_prefixed_with_their_table() {
        let text = "sandbox = \"x\"\n[tools]\nallow = 3\n";
        assert_eq!(key_at(text, 10, 13).as_deref(), Some("sandbox"));
        let value = text.find('3').unwrap();
        assert_eq!(
            key_at(text, value, value + 1).as_deref(),
            Some("tools.allow")
        );
    }
}
