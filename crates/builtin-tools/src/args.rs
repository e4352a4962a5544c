//! Argument parsing and the tool boundary: every tool turns bad input and internal failures
//! into an error result the model can read, never a panic or an `Err` that ends the turn.

use kun_ports::{ErrorCode, PathError, ToolResult};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::fmt;

/// A failure inside a built-in tool, turned into an error result by [`Failure::into_result`].
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// A host-level code, when one applies (`invalid_arguments`, `sandbox_write_blocked`, …).
    pub code: Option<ErrorCode>,
    /// What went wrong and what to do next.
    pub message: String,
    /// Extra fields for the output object.
    pub details: Map<String, Value>,
}

impl Failure {
    /// A failure without a code: `{"error": message}`.
    #[must_use]
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            code: None,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// A failure with a code: `{"code": code, "error": message}`.
    #[must_use]
    pub fn coded(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code: Some(code),
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Bad arguments.
    #[must_use]
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::coded(ErrorCode::InvalidArguments, message)
    }

    /// Adds a detail field.
    #[must_use]
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// The error result the model sees.
    #[must_use]
    pub fn into_result(self) -> ToolResult {
        match self.code {
            Some(code) => ToolResult::failure_with(code, self.message, self.details),
            None => {
                let mut map = self.details;
                map.insert("error".to_owned(), Value::String(self.message));
                ToolResult {
                    output: Value::Object(map),
                    is_error: true,
                }
            }
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<PathError> for Failure {
    fn from(err: PathError) -> Self {
        Self::coded(err.code, err.message)
    }
}

impl From<std::io::Error> for Failure {
    fn from(err: std::io::Error) -> Self {
        Self::new(err.to_string())
    }
}

/// The outcome of a tool body: a JSON output, or a failure.
pub type Outcome = Result<Value, Failure>;

/// Turns a tool body's outcome into the result the model sees.
#[must_use]
pub fn finish(outcome: Outcome) -> ToolResult {
    match outcome {
        Ok(output) => ToolResult::ok(output),
        Err(failure) => failure.into_result(),
    }
}

/// How many characters of a raw payload to mention; beyond that the count says it all.
const RAW_ENVELOPE_KEY: &str = "__raw";

/// Parses arguments into `T`.
///
/// An unparseable `{"__raw": "..."}` envelope (the host could not repair it) means the model's
/// output limit cut the JSON: the error says so and how to retry with smaller payloads.
///
/// # Errors
/// `invalid_arguments` naming the problem (missing field, wrong type, unknown field).
pub fn parse_args<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, Failure> {
    if let Some(raw) = arguments.get(RAW_ENVELOPE_KEY).and_then(Value::as_str) {
        return Err(Failure::invalid(format!(
            "the arguments for {tool} were not valid JSON ({} characters arrived), most likely cut off by \
             your output limit; retry with a much smaller payload: write a short first version, then \
             extend it with several small edit calls",
            raw.chars().count()
        ))
        .with("received_chars", raw.chars().count()));
    }
    let arguments = if arguments.is_null() {
        Value::Object(Map::new())
    } else {
        arguments
    };
    serde_json::from_value(arguments)
        .map_err(|err| Failure::invalid(format!("invalid arguments for {tool}: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        path: String,
    }

    #[test]
    fn missing_field_is_invalid_arguments() {
        let err = parse_args::<Args>("read", json!({})).unwrap_err();
        assert_eq!(err.code, Some(ErrorCode::InvalidArguments));
        assert!(err.message.contains("path"), "{}", err.message);
    }

    #[test]
    fn raw_envelope_explains_truncation() {
        let err = parse_args::<Args>("write", json!({"__raw": "{\"path\": \"a"})).unwrap_err();
        assert!(err.message.contains("cut off"), "{}", err.message);
        assert_eq!(err.details["received_chars"], 11);
    }

    #[test]
    fn failures_become_error_results() {
        let result = Failure::new("boom").with("path", "a.txt").into_result();
        assert!(result.is_error);
        assert_eq!(result.output, json!({"error": "boom", "path": "a.txt"}));
        let coded = Failure::invalid("bad").into_result();
        assert_eq!(coded.error_code(), Some("invalid_arguments"));
    }
}
