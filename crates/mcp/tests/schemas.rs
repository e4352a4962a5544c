//! MCP input schemas go through the same sanitiser as the built-in tools' (passed in by the
//! assembly root). A corpus of awkward real-world schemas, and every corpus server's tools,
//! come out as plain, self-contained object schemas.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test helpers outside #[test] fns

mod common;

use common::corpus::{corpus_records, fixtures, real_sanitizer};
use kun_mcp::naming::NameLimit;
use kun_mcp::{RemoteTool, identity_sanitizer, records_for_server};
use serde_json::{Value, json};

const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uuid",
    "regex",
];

/// Every rule a sanitised schema must follow, checked recursively; returns what broke.
fn problems(schema: &Value, path: &str, out: &mut Vec<String>) {
    let Value::Object(map) = schema else {
        out.push(format!("{path}: not an object schema"));
        return;
    };
    for key in ["$ref", "$defs", "definitions", "$schema", "$id", "$comment"] {
        if map.contains_key(key) {
            out.push(format!("{path}: still has `{key}`"));
        }
    }
    if let Some(t) = map.get("type") {
        let has_null = match t {
            Value::String(s) => s == "null" && path != "root",
            Value::Array(items) => items.iter().any(|i| i == "null"),
            _ => true,
        };
        if has_null {
            out.push(format!("{path}: nullable type {t}"));
        }
    }
    if let Some(Value::String(format)) = map.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        out.push(format!("{path}: non-standard format `{format}`"));
    }
    if map.get("default").is_some_and(Value::is_null) {
        out.push(format!("{path}: default null"));
    }
    if let Some(Value::Array(required)) = map.get("required") {
        let props = map.get("properties").and_then(Value::as_object);
        for name in required.iter().filter_map(Value::as_str) {
            if !props.is_some_and(|p| p.contains_key(name)) {
                out.push(format!(
                    "{path}: requires `{name}`, which is not a property"
                ));
            }
        }
    }
    if let Some(Value::Object(props)) = map.get("properties") {
        for (name, prop) in props {
            problems(prop, &format!("{path}.{name}"), out);
        }
    }
    if let Some(items) = map.get("items") {
        problems(items, &format!("{path}[]"), out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(options)) = map.get(key) {
            for (i, option) in options.iter().enumerate() {
                problems(option, &format!("{path}.{key}[{i}]"), out);
            }
        }
    }
    if let Some(additional @ Value::Object(_)) = map.get("additionalProperties") {
        problems(additional, &format!("{path}{{*}}"), out);
    }
}

fn check_root(name: &str, schema: &Value) {
    assert_eq!(schema["type"], "object", "{name}: root type");
    assert!(schema["properties"].is_object(), "{name}: root properties");
    let mut found = Vec::new();
    problems(schema, "root", &mut found);
    assert!(found.is_empty(), "{name}:\n{}", found.join("\n"));
}

#[test]
fn awkward_schemas_come_out_clean() {
    let corpus: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("awkward_schemas.json")).unwrap(),
    )
    .unwrap();
    let tools: Vec<RemoteTool> = corpus
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            RemoteTool::from_json(json!({
                "name": case["name"],
                "description": case["why"],
                "inputSchema": case["inputSchema"],
            }))
            .unwrap()
        })
        .collect();
    let count = tools.len();
    assert!(
        count >= 12,
        "the awkward-schema corpus has only {count} cases"
    );
    let records = records_for_server(
        "awkward",
        "awkward",
        tools,
        &real_sanitizer(),
        NameLimit::default(),
    );
    assert_eq!(records.len(), count, "every awkward tool is named and kept");
    for record in &records {
        check_root(&record.name, &record.input_schema);
    }
    let by_tool = |tool: &str| {
        records
            .iter()
            .find(|r| r.address.tool == tool)
            .unwrap()
            .input_schema
            .clone()
    };
    // Spot checks that the content survived, not just the shape.
    let pydantic = by_tool("pydantic_defs_optional");
    assert_eq!(
        pydantic["properties"]["priority"]["enum"],
        json!(["low", "high"])
    );
    assert_eq!(
        pydantic["properties"]["owner"]["description"],
        "Who owns it"
    );
    assert_eq!(
        pydantic["properties"]["owner"]["properties"]["login"]["type"],
        "string"
    );
    let draft07 = by_tool("draft07_definitions");
    assert_eq!(
        draft07["properties"]["edits"]["items"]["required"],
        json!(["oldText", "newText"])
    );
    let consts = by_tool("one_of_consts");
    assert_eq!(
        consts["properties"]["mode"]["enum"],
        json!(["fast", "thorough"])
    );
    let no_root = by_tool("no_root_type");
    assert_eq!(no_root["required"], json!(["query"]));
}

#[test]
fn every_corpus_schema_comes_out_clean() {
    let records = corpus_records();
    assert!(
        records.len() >= 100,
        "the corpus has only {} tools",
        records.len()
    );
    for record in records {
        check_root(&record.name, &record.input_schema);
    }
}

#[test]
fn the_identity_sanitiser_keeps_schemas_as_sent() {
    let raw = json!({"type": "object", "$defs": {"x": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/x"}}});
    let tool = RemoteTool::from_json(json!({"name": "t", "inputSchema": raw})).unwrap();
    let records = records_for_server(
        "s",
        "s",
        vec![tool],
        &identity_sanitizer(),
        NameLimit::default(),
    );
    assert_eq!(records[0].input_schema, raw);
}
