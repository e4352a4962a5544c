//! The tool boundary of the built-in tools: [`Failure`] (the ports' [`ToolFailure`]) and
//! [`parse_args`] come from `kun-ports`, so every tool — built-in or not — turns bad input
//! and internal failures into the same error results.

pub use kun_ports::{ToolFailure as Failure, parse_args};

use kun_ports::ToolResult;
use serde_json::Value;

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

#[cfg(test)]
mod tests {
    use super::*;
    use kun_ports::ErrorCode;
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
        assert_eq!(err.code, ErrorCode::InvalidArguments);
        assert!(err.message.contains("path"), "{}", err.message);
    }

    #[test]
    fn raw_envelope_explains_truncation() {
        let err = parse_args::<Args>("write", json!({"__raw": "{\"path\": \"a"})).unwrap_err();
        assert!(err.message.contains("cut off"), "{}", err.message);
        assert_eq!(err.details["received_chars"], 11);
    }

    #[test]
    fn failures_become_error_results_with_a_code() {
        let result = finish(Err(Failure::new("boom").with("path", "a.txt")));
        assert!(result.is_error);
        assert_eq!(
            result.output,
            json!({"code": "tool_execution_failed", "error": "boom", "path": "a.txt"})
        );
        let coded = Failure::invalid("bad").into_result();
        assert_eq!(coded.error_code(), Some("invalid_arguments"));
    }
}
