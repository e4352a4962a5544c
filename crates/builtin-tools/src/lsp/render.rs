//! Turns LSP answers into compact typed values (1-based lines and columns, paths relative to
//! the workspace), and those into the lines the model reads:
//!
//! | action | one line per item |
//! |---|---|
//! | definition, references | `path:line:col: text` |
//! | hover | the hover text |
//! | document_symbols | `line:col kind name`, indented two spaces per nesting level |
//! | diagnostics | `line:col severity: message (source)` |

use super::client::uri_to_path;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

/// A place in a file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct Location {
    /// The file, relative to the workspace root (absolute when outside it).
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
    /// The line's text, trimmed, when the file could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// A symbol defined in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// `function`, `class`, `method`, … (`symbol` when unknown).
    pub kind: String,
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
    /// Nesting level (0 at the top).
    pub depth: usize,
}

/// An error or warning the server reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnostic {
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
    /// `error`, `warning`, `information`, `hint` or `unknown`.
    pub severity: String,
    /// What is wrong.
    pub message: String,
    /// The tool that reported it (`pyflakes`, `rustc`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// `path:line:col: text` per location.
pub(crate) fn render_locations(locations: &[Location]) -> String {
    if locations.is_empty() {
        return "no locations found".to_owned();
    }
    let mut text = String::new();
    for l in locations {
        if !text.is_empty() {
            text.push('\n');
        }
        let _ = write!(text, "{}:{}:{}", l.path, l.line, l.column);
        if let Some(line) = l.text.as_deref().filter(|t| !t.is_empty()) {
            let _ = write!(text, ": {line}");
        }
    }
    text
}

/// `line:col kind name`, indented by depth.
pub(crate) fn render_symbols(symbols: &[Symbol]) -> String {
    if symbols.is_empty() {
        return "no symbols found".to_owned();
    }
    let mut text = String::new();
    for s in symbols {
        if !text.is_empty() {
            text.push('\n');
        }
        let _ = write!(
            text,
            "{:indent$}{}:{} {} {}",
            "",
            s.line,
            s.column,
            s.kind,
            s.name,
            indent = s.depth * 2
        );
    }
    text
}

/// `line:col severity: message (source)`.
pub(crate) fn render_diagnostics(diagnostics: &[Diagnostic], published: bool) -> String {
    if diagnostics.is_empty() {
        return if published {
            "no diagnostics".to_owned()
        } else {
            "no diagnostics: the server published none in time (it may still be starting)"
                .to_owned()
        };
    }
    let mut text = String::new();
    for d in diagnostics {
        if !text.is_empty() {
            text.push('\n');
        }
        let _ = write!(
            text,
            "{}:{} {}: {}",
            d.line, d.column, d.severity, d.message
        );
        if let Some(source) = &d.source {
            let _ = write!(text, " ({source})");
        }
    }
    text
}

fn position(value: &Value) -> (u64, u64) {
    let line = value.get("line").and_then(Value::as_u64).unwrap_or(0);
    let character = value.get("character").and_then(Value::as_u64).unwrap_or(0);
    (line + 1, character + 1)
}

fn line_text(path: &Path, line: u64) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let index = usize::try_from(line.checked_sub(1)?).ok()?;
    text.lines().nth(index).map(|l| l.trim().to_owned())
}

fn location(uri: &str, range: &Value, root: &Path) -> Option<Location> {
    let path = uri_to_path(uri)?;
    let (line, column) = position(range.get("start")?);
    let shown = path.strip_prefix(root).map_or_else(
        |_| path.to_string_lossy().into_owned(),
        |rel| rel.to_string_lossy().replace('\\', "/"),
    );
    Some(Location {
        text: line_text(&path, line),
        path: shown,
        line,
        column,
    })
}

/// `Location | Location[] | LocationLink[] | null` → a sorted list.
pub fn locations(found: &Value, root: &Path) -> Vec<Location> {
    let items: Vec<&Value> = match found {
        Value::Array(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        single => vec![single],
    };
    let mut out: Vec<Location> = items
        .into_iter()
        .filter_map(|item| match item.get("targetUri") {
            Some(uri) => location(uri.as_str()?, item.get("targetSelectionRange")?, root),
            None => location(item.get("uri")?.as_str()?, item.get("range")?, root),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Hover contents as plain text.
pub fn hover(found: &Value) -> String {
    fn text(contents: &Value) -> String {
        match contents {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .map(text)
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("\n\n"),
            Value::Object(map) => map
                .get("value")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            _ => String::new(),
        }
    }
    found
        .get("contents")
        .map(text)
        .unwrap_or_default()
        .trim()
        .to_owned()
}

const SYMBOL_KINDS: [&str; 26] = [
    "file",
    "module",
    "namespace",
    "package",
    "class",
    "method",
    "property",
    "field",
    "constructor",
    "enum",
    "interface",
    "function",
    "variable",
    "constant",
    "string",
    "number",
    "boolean",
    "array",
    "object",
    "key",
    "null",
    "enum_member",
    "struct",
    "event",
    "operator",
    "type_parameter",
];

fn symbol_kind(value: &Value) -> &'static str {
    value
        .get("kind")
        .and_then(Value::as_u64)
        .and_then(|k| usize::try_from(k).ok())
        .and_then(|k| SYMBOL_KINDS.get(k.wrapping_sub(1)))
        .copied()
        .unwrap_or("symbol")
}

/// `DocumentSymbol[]` (flattened with depth) or `SymbolInformation[]`.
pub fn symbols(found: &Value) -> Vec<Symbol> {
    fn walk(items: &[Value], depth: usize, out: &mut Vec<Symbol>) {
        for item in items {
            let range = item
                .get("selectionRange")
                .or_else(|| item.get("location").and_then(|l| l.get("range")));
            let (line, column) = range.and_then(|r| r.get("start")).map_or((0, 0), position);
            out.push(Symbol {
                name: item
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                kind: symbol_kind(item).to_owned(),
                line,
                column,
                depth,
            });
            if let Some(Value::Array(children)) = item.get("children") {
                walk(children, depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    if let Value::Array(items) = found {
        walk(items, 0, &mut out);
    }
    out
}

/// Published diagnostics, sorted by position.
pub fn diagnostics(found: Option<&Value>) -> Vec<Diagnostic> {
    let Some(Value::Array(items)) = found else {
        return Vec::new();
    };
    let mut out: Vec<Diagnostic> = items
        .iter()
        .map(|d| {
            let (line, column) = d
                .get("range")
                .and_then(|r| r.get("start"))
                .map_or((0, 0), position);
            let severity = match d.get("severity").and_then(Value::as_u64) {
                Some(1) => "error",
                Some(2) => "warning",
                Some(3) => "information",
                Some(4) => "hint",
                _ => "unknown",
            };
            Diagnostic {
                line,
                column,
                severity: severity.to_owned(),
                message: d
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                source: d.get("source").and_then(Value::as_str).map(str::to_owned),
            }
        })
        .collect();
    out.sort_by_key(|d| (d.line, d.column));
    out
}
