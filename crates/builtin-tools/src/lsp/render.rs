//! Turns LSP answers into compact, model-friendly JSON (1-based lines and columns, paths
//! relative to the workspace).

use super::client::uri_to_path;
use serde_json::{Value, json};
use std::path::Path;

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

fn location(uri: &str, range: &Value, root: &Path) -> Option<Value> {
    let path = uri_to_path(uri)?;
    let (line, column) = position(range.get("start")?);
    let shown = path.strip_prefix(root).map_or_else(
        |_| path.to_string_lossy().into_owned(),
        |rel| rel.to_string_lossy().replace('\\', "/"),
    );
    Some(json!({"path": shown, "line": line, "column": column, "text": line_text(&path, line)}))
}

/// `Location | Location[] | LocationLink[] | null` → a sorted list.
pub fn locations(found: &Value, root: &Path) -> Vec<Value> {
    let items: Vec<&Value> = match found {
        Value::Array(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        single => vec![single],
    };
    let mut out: Vec<Value> = items
        .into_iter()
        .filter_map(|item| match item.get("targetUri") {
            Some(uri) => location(uri.as_str()?, item.get("targetSelectionRange")?, root),
            None => location(item.get("uri")?.as_str()?, item.get("range")?, root),
        })
        .collect();
    out.sort_by_key(|l| {
        (
            l["path"].as_str().map(str::to_owned),
            l["line"].as_u64(),
            l["column"].as_u64(),
        )
    });
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
pub fn symbols(found: &Value) -> Vec<Value> {
    fn walk(items: &[Value], depth: usize, out: &mut Vec<Value>) {
        for item in items {
            let range = item
                .get("selectionRange")
                .or_else(|| item.get("location").and_then(|l| l.get("range")));
            let (line, column) = range.and_then(|r| r.get("start")).map_or((0, 0), position);
            out.push(json!({
                "name": item.get("name").and_then(Value::as_str).unwrap_or_default(),
                "kind": symbol_kind(item),
                "line": line,
                "column": column,
                "depth": depth,
            }));
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
pub fn diagnostics(found: Option<&Value>) -> Vec<Value> {
    let Some(Value::Array(items)) = found else {
        return Vec::new();
    };
    let mut out: Vec<Value> = items
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
            json!({
                "line": line,
                "column": column,
                "severity": severity,
                "message": d.get("message").and_then(Value::as_str).unwrap_or_default(),
                "source": d.get("source").and_then(Value::as_str),
            })
        })
        .collect();
    out.sort_by_key(|d| (d["line"].as_u64(), d["column"].as_u64()));
    out
}
