//! The raw-argument envelope (pipeline step 6, before the PreToolUse hooks).

use serde_json::Value;

/// The largest `__raw` string that is parsed.
pub const MAX_RAW_ENVELOPE_BYTES: usize = 512 * 1024;

/// How many nested envelopes are unwrapped at most.
const MAX_NESTING: usize = 4;

/// The key of the raw text.
pub const RAW_KEY: &str = "__raw";

/// Keys that may sit beside `__raw` without making the object a real argument object.
const TRANSPORT_KEYS: [&str; 10] = [
    "toolName",
    "tool_name",
    "callId",
    "call_id",
    "providerId",
    "provider_id",
    "providerKind",
    "provider_kind",
    "toolKind",
    "tool_kind",
];

/// Replaces an envelope whose text parses as a JSON object by that object; leaves
/// everything else unchanged.
///
/// ```
/// use kun_registry::normalize_raw_envelope;
/// let mut args = serde_json::json!({"__raw": "{\"path\": \"a.txt\"}", "call_id": "c1"});
/// normalize_raw_envelope(&mut args);
/// assert_eq!(args, serde_json::json!({"path": "a.txt"}));
///
/// let mut truncated = serde_json::json!({"__raw": "{\"path\": \"a.t"});
/// normalize_raw_envelope(&mut truncated);
/// assert_eq!(truncated["__raw"], "{\"path\": \"a.t");
/// ```
///
/// Some model APIs hand over arguments they could not parse as `{"__raw": "<text>"}`,
/// sometimes with transport metadata beside it (`toolName`, `call_id`, …). When the text
/// parses as a JSON object, that object becomes the arguments. Anything else — an array, a
/// scalar, invalid or truncated JSON, an oversized string, or an envelope that carries other
/// keys — stays as it is, so a tool like `write` can tell the model its payload arrived
/// truncated.
pub fn normalize_raw_envelope(arguments: &mut Value) {
    for _ in 0..MAX_NESTING {
        let Some(inner) = unwrap_once(arguments) else {
            return;
        };
        *arguments = inner;
    }
}

fn unwrap_once(arguments: &Value) -> Option<Value> {
    let object = arguments.as_object()?;
    let raw = object.get(RAW_KEY)?.as_str()?;
    let only_transport = object
        .keys()
        .all(|k| k == RAW_KEY || TRANSPORT_KEYS.contains(&k.as_str()));
    if !only_transport || raw.len() > MAX_RAW_ENVELOPE_BYTES {
        return None;
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(parsed @ Value::Object(_)) => Some(parsed),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn envelope_table() {
        let big = format!("{{\"a\":\"{}\"}}", "x".repeat(MAX_RAW_ENVELOPE_BYTES));
        let cases = [
            (json!({"__raw": "{\"a\":1}"}), json!({"a": 1})),
            (
                json!({"__raw": "{\"a\":1}", "toolName": "write"}),
                json!({"a": 1}),
            ),
            (
                json!({"__raw": "{\"__raw\": \"{\\\"b\\\":2}\"}"}),
                json!({"b": 2}),
            ),
            (json!({"__raw": "[1,2]"}), json!({"__raw": "[1,2]"})),
            (json!({"__raw": "42"}), json!({"__raw": "42"})),
            (json!({"__raw": "{\"a\":"}), json!({"__raw": "{\"a\":"})),
            (
                json!({"__raw": "{\"a\":1}", "path": "x"}),
                json!({"__raw": "{\"a\":1}", "path": "x"}),
            ),
            (json!({"__raw": 7}), json!({"__raw": 7})),
            (json!({"path": "x"}), json!({"path": "x"})),
            (json!("text"), json!("text")),
            (json!({"__raw": big.clone()}), json!({"__raw": big})),
        ];
        for (input, expected) in cases {
            let mut args = input.clone();
            normalize_raw_envelope(&mut args);
            assert_eq!(args, expected, "input {input}");
        }
    }
}
