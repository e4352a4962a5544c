//! The one schema sanitiser: every input schema (ours from `schemars`, and third-party MCP
//! schemas) passes through [`sanitize_schema`] so model APIs get a plain, self-contained JSON
//! Schema object.
//!
//! What it does, recursively:
//! * the top level is always `{"type": "object", "properties": {…}}`;
//! * `$schema`, `$id`, `$comment` and the top-level `title` are dropped;
//! * local `$ref`s (`#/$defs/…`, `#/definitions/…`) are inlined (a recursive reference becomes
//!   an open object at the recursion point) and the definition tables dropped;
//! * `type: [T, "null"]` becomes `type: T`, and `anyOf`/`oneOf` with a `{"type": "null"}` arm
//!   collapse to the other arm (optional fields are expressed by `required`, not nulls);
//! * a `oneOf`/`anyOf` of string constants becomes a string `enum`;
//! * non-standard `format`s (`uint32`, `int64`, `double`, …) and `default: null` are dropped;
//! * `required` keeps only names that are properties.
//!
//! ```
//! use serde_json::json;
//! let clean = kun_ports::sanitize_schema(json!({
//!     "$schema": "https://json-schema.org/draft/2020-12/schema",
//!     "title": "Args",
//!     "type": "object",
//!     "properties": {"limit": {"type": ["integer", "null"], "format": "uint32", "default": null}},
//! }));
//! assert_eq!(clean, json!({"type": "object", "properties": {"limit": {"type": "integer"}}}));
//! ```

use schemars::JsonSchema;
use serde_json::{Map, Value};

/// How deep `$ref`s are inlined before the sanitiser stops (guards recursive schemas).
const MAX_REF_DEPTH: usize = 8;

/// Formats model APIs understand; others are dropped.
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

/// The sanitised input schema of an argument type (how it is deserialised).
#[must_use]
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    sanitize_schema(generator.into_root_schema_for::<T>().to_value())
}

/// The sanitised output schema of a result type (how it is serialised): what `serve`
/// declares as a tool's `outputSchema`. Optional fields of an output must be left out when
/// empty (`skip_serializing_if`), never sent as `null`: the sanitiser drops `null` from
/// types, as model APIs want.
///
/// ```
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Out {
///     lines: u32,
///     #[serde(skip_serializing_if = "Option::is_none")]
///     notice: Option<String>,
/// }
/// let schema = kun_ports::output_schema_for::<Out>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["lines"]));
/// ```
#[must_use]
pub fn output_schema_for<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    sanitize_schema(generator.into_root_schema_for::<T>().to_value())
}

/// Sanitises any JSON Schema for model APIs; see the module docs.
#[must_use]
pub fn sanitize_schema(schema: Value) -> Value {
    let definitions = collect_definitions(&schema);
    let mut root = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    for key in ["$schema", "$id", "$defs", "definitions", "title"] {
        root.remove(key);
    }
    let mut root = clean(Value::Object(root), &definitions, &mut Vec::new());
    if let Value::Object(map) = &mut root {
        map.insert("type".to_owned(), Value::String("object".to_owned()));
        if !map.get("properties").is_some_and(Value::is_object) {
            map.insert("properties".to_owned(), Value::Object(Map::new()));
        }
    }
    root
}

fn collect_definitions(schema: &Value) -> Map<String, Value> {
    let mut defs = Map::new();
    for (table, prefix) in [("$defs", "#/$defs/"), ("definitions", "#/definitions/")] {
        if let Some(Value::Object(entries)) = schema.get(table) {
            for (name, def) in entries {
                defs.insert(format!("{prefix}{name}"), def.clone());
            }
        }
    }
    defs
}

fn clean(schema: Value, defs: &Map<String, Value>, stack: &mut Vec<String>) -> Value {
    let Value::Object(mut map) = schema else {
        // `true`/`false` schemas and garbage become an open schema.
        return Value::Object(Map::new());
    };
    if let Some(Value::String(reference)) = map.remove("$ref") {
        let resolved = inline_ref(&reference, defs, stack);
        // Sibling keywords (description, …) override the referenced schema's.
        let mut merged = match resolved {
            Value::Object(target) => target,
            _ => Map::new(),
        };
        for (key, value) in map {
            merged.insert(key, value);
        }
        map = merged;
    }
    for key in ["$schema", "$id", "$comment", "$defs", "definitions"] {
        map.remove(key);
    }
    if map.get("default").is_some_and(Value::is_null) {
        map.remove("default");
    }
    if let Some(Value::String(format)) = map.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        map.remove("format");
    }
    collapse_nullable_type(&mut map);
    for key in ["anyOf", "oneOf"] {
        collapse_union(&mut map, key, defs, stack);
    }
    if let Some(Value::Array(all)) = map.remove("allOf") {
        let cleaned: Vec<Value> = all.into_iter().map(|s| clean(s, defs, stack)).collect();
        map.insert("allOf".to_owned(), Value::Array(cleaned));
    }
    if let Some(Value::Object(props)) = map.remove("properties") {
        let cleaned: Map<String, Value> = props
            .into_iter()
            .map(|(name, prop)| (name, clean(prop, defs, stack)))
            .collect();
        map.insert("properties".to_owned(), Value::Object(cleaned));
    }
    if let Some(items) = map.remove("items") {
        map.insert("items".to_owned(), clean(items, defs, stack));
    }
    if let Some(Value::Array(prefix)) = map.remove("prefixItems") {
        let cleaned: Vec<Value> = prefix.into_iter().map(|s| clean(s, defs, stack)).collect();
        map.insert("prefixItems".to_owned(), Value::Array(cleaned));
    }
    if let Some(additional) = map.remove("additionalProperties") {
        let cleaned = if additional.is_object() {
            clean(additional, defs, stack)
        } else {
            additional
        };
        map.insert("additionalProperties".to_owned(), cleaned);
    }
    prune_required(&mut map);
    Value::Object(map)
}

fn inline_ref(reference: &str, defs: &Map<String, Value>, stack: &mut Vec<String>) -> Value {
    let Some(target) = defs.get(reference) else {
        return Value::Object(Map::new());
    };
    if stack.len() >= MAX_REF_DEPTH || stack.iter().any(|seen| seen == reference) {
        let mut open = Map::new();
        open.insert("type".to_owned(), Value::String("object".to_owned()));
        return Value::Object(open);
    }
    stack.push(reference.to_owned());
    let cleaned = clean(target.clone(), defs, stack);
    stack.pop();
    cleaned
}

fn collapse_nullable_type(map: &mut Map<String, Value>) {
    let Some(Value::Array(types)) = map.get("type") else {
        return;
    };
    let non_null: Vec<Value> = types
        .iter()
        .filter(|t| t.as_str() != Some("null"))
        .cloned()
        .collect();
    match non_null.len() {
        0 => {}
        1 => {
            map.insert(
                "type".to_owned(),
                non_null.into_iter().next().unwrap_or(Value::Null),
            );
        }
        _ => {
            map.insert("type".to_owned(), Value::Array(non_null));
        }
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

fn string_const(schema: &Value) -> Option<Value> {
    let value = schema.get("const").or_else(|| {
        schema
            .get("enum")
            .and_then(Value::as_array)
            .filter(|e| e.len() == 1)
            .and_then(|e| e.first())
    })?;
    value.is_string().then(|| value.clone())
}

fn collapse_union(
    map: &mut Map<String, Value>,
    key: &str,
    defs: &Map<String, Value>,
    stack: &mut Vec<String>,
) {
    let Some(Value::Array(arms)) = map.remove(key) else {
        return;
    };
    let arms: Vec<Value> = arms
        .into_iter()
        .map(|arm| clean(arm, defs, stack))
        .collect();
    let non_null: Vec<Value> = arms
        .iter()
        .filter(|arm| !is_null_schema(arm))
        .cloned()
        .collect();
    let consts: Option<Vec<Value>> = non_null.iter().map(string_const).collect();
    match consts {
        Some(values) if !values.is_empty() => {
            map.insert("type".to_owned(), Value::String("string".to_owned()));
            map.insert("enum".to_owned(), Value::Array(values));
        }
        _ if non_null.len() == 1 && non_null.len() < arms.len() => {
            if let Some(Value::Object(only)) = non_null.into_iter().next() {
                for (k, v) in only {
                    map.entry(k).or_insert(v);
                }
            }
        }
        _ => {
            map.insert(key.to_owned(), Value::Array(non_null));
        }
    }
}

fn prune_required(map: &mut Map<String, Value>) {
    let Some(Value::Array(required)) = map.get("required") else {
        return;
    };
    let kept: Vec<Value> = match map.get("properties") {
        Some(Value::Object(props)) => required
            .iter()
            .filter(|name| name.as_str().is_some_and(|n| props.contains_key(n)))
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    if kept.is_empty() {
        map.remove("required");
    } else {
        map.insert("required".to_owned(), Value::Array(kept));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    /// Arguments with the awkward shapes schemars produces.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Sample {
        /// The path.
        path: String,
        /// How many.
        limit: Option<u32>,
        /// The mode.
        mode: Option<Mode>,
        /// Nested.
        nested: Option<Inner>,
    }

    /// A mode.
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Mode {
        /// Fast.
        Fast,
        /// Slow.
        Slow,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        flag: bool,
    }

    #[test]
    fn schemars_output_is_self_contained() {
        let schema = schema_for::<Sample>();
        let text = schema.to_string();
        assert!(!text.contains("$ref"), "{text}");
        assert!(!text.contains("$defs"), "{text}");
        assert!(!text.contains("$schema"), "{text}");
        assert!(!text.contains("uint32"), "{text}");
        assert!(!text.contains("null"), "{text}");
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["path"]));
        assert_eq!(
            schema["properties"]["mode"]["enum"],
            json!(["fast", "slow"])
        );
        assert_eq!(
            schema["properties"]["nested"]["properties"]["flag"]["type"],
            "boolean"
        );
        assert_eq!(schema["properties"]["path"]["description"], "The path.");
    }

    #[test]
    fn non_object_schemas_become_empty_object_schemas() {
        assert_eq!(
            sanitize_schema(json!(true)),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            sanitize_schema(json!({})),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn recursive_refs_terminate() {
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}}
        });
        let clean = sanitize_schema(schema);
        assert_eq!(
            clean["properties"]["tree"]["properties"]["child"],
            json!({"type": "object"})
        );
    }

    #[test]
    fn dangling_refs_and_stray_required_are_dropped() {
        let clean = sanitize_schema(json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/Missing", "description": "kept"}},
            "required": ["a", "ghost"]
        }));
        assert_eq!(clean["properties"]["a"], json!({"description": "kept"}));
        assert_eq!(clean["required"], json!(["a"]));
    }

    #[test]
    fn nullable_any_of_collapses() {
        let clean = sanitize_schema(json!({
            "type": "object",
            "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "d"}}
        }));
        assert_eq!(
            clean["properties"]["x"],
            json!({"type": "string", "description": "d"})
        );
    }
}
