//! Rate-limit normalisation (pipeline step 17): turns a network-backed tool's "slow down"
//! answer into one error result the model can act on.
//!
//! The host applies [`normalise_rate_limit`] only to network-backed tools (MCP, web, media);
//! which tools those are is the host's decision. The function itself is conservative, so a
//! tool that merely talks about rate limits is left alone:
//!
//! | the result                                                          | converted? |
//! |---------------------------------------------------------------------|------------|
//! | error (`is_error`, or an MCP-style `isError: true` output) with a status/code 429 anywhere | yes |
//! | error whose text says "rate limit(ed)", "too many requests", "quota exceeded", "HTTP/status 429" | yes |
//! | success whose top-level `status` / `status_code` / `http_status` is 429 | yes |
//! | success that mentions rate limits in its text (an article, a file)  | **no**     |
//! | anything already `{code: "rate_limited"}`                          | no (idempotent) |
//!
//! A converted result is `{code: "rate_limited", error, retry_after_seconds?, original}`; the
//! delay comes from a `retry-after`-like field (seconds, or milliseconds for `…_ms`) or from
//! text such as "retry after 20s" or "try again in 2 minutes". Only strings and fields up to
//! four levels deep are examined, and at most 64 KiB of text.

use kun_ports::{ErrorCode, ToolResult};
use serde_json::{Map, Value};

/// How deep into the output the search goes.
const MAX_DEPTH: usize = 4;
/// How much text is scanned at most.
const MAX_SCANNED_BYTES: usize = 64 * 1024;

/// What gave the rate limit away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateLimitEvidence {
    /// An HTTP status (or error code) 429.
    Status429,
    /// An error message saying so.
    Message,
}

/// A recognised rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimitSignal {
    /// What gave it away.
    pub evidence: RateLimitEvidence,
    /// How long the service asked to wait, rounded up to whole seconds.
    pub retry_after_seconds: Option<u64>,
}

/// Recognises a rate limit in `result` (see the [module docs](self) for the rules).
#[must_use]
pub fn detect_rate_limit(result: &ToolResult) -> Option<RateLimitSignal> {
    let output = &result.output;
    if output.get("code").and_then(Value::as_str) == Some(ErrorCode::RateLimited.as_str()) {
        return None;
    }
    let is_error = result.is_error || flags_error(output);
    let evidence = if is_error {
        if has_status_429(output, 0) {
            RateLimitEvidence::Status429
        } else if texts(output).iter().any(|t| says_rate_limited(t)) {
            RateLimitEvidence::Message
        } else {
            return None;
        }
    } else if output
        .as_object()
        .is_some_and(|o| o.iter().any(|(k, v)| is_status_key(k) && is_429(v)))
    {
        RateLimitEvidence::Status429
    } else {
        return None;
    };
    let retry_after_seconds = retry_after_field(output, 0)
        .or_else(|| texts(output).iter().find_map(|t| retry_after_in_text(t)));
    Some(RateLimitSignal {
        evidence,
        retry_after_seconds,
    })
}

/// Replaces a rate-limited result with a `rate_limited` error result that keeps the original
/// output under `original`; returns anything else unchanged.
///
/// ```
/// use kun_ports::ToolResult;
/// use kun_registry::rate_limit::normalise_rate_limit;
/// use serde_json::json;
///
/// let limited = normalise_rate_limit(ToolResult {
///     output: json!({"error": "Too Many Requests", "retry_after": 30}),
///     is_error: true,
///     content: Vec::new(),
/// });
/// assert_eq!(limited.error_code(), Some("rate_limited"));
/// assert_eq!(limited.output["retry_after_seconds"], 30);
///
/// let prose = ToolResult::ok(json!("Our API has a rate limit of 10 requests per second."));
/// assert_eq!(normalise_rate_limit(prose.clone()), prose);
/// ```
#[must_use]
pub fn normalise_rate_limit(result: ToolResult) -> ToolResult {
    let Some(signal) = detect_rate_limit(&result) else {
        return result;
    };
    let wait = signal.retry_after_seconds.map_or_else(
        || "Wait a while before calling it again".to_owned(),
        |s| {
            format!(
                "Wait {s} second{} before calling it again",
                if s == 1 { "" } else { "s" }
            )
        },
    );
    let cause = match signal.evidence {
        RateLimitEvidence::Status429 => " (HTTP 429)",
        RateLimitEvidence::Message => "",
    };
    let message = format!(
        "The service behind this tool is rate limiting requests{cause}. {wait}, and do other \
         work meanwhile; the service's own answer is under `original`."
    );
    let mut details = Map::new();
    if let Some(seconds) = signal.retry_after_seconds {
        details.insert("retry_after_seconds".to_owned(), Value::from(seconds));
    }
    details.insert("original".to_owned(), result.output);
    ToolResult::failure_with(ErrorCode::RateLimited, message, details)
}

/// An MCP `CallToolResult` (or similar) passed through as output, flagged as an error.
fn flags_error(output: &Value) -> bool {
    ["isError", "is_error"]
        .iter()
        .any(|k| output.get(k).and_then(Value::as_bool) == Some(true))
}

/// Lower-cased with `-` and `_` removed: `Retry-After`, `retry_after` → `retryafter`.
fn squash(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

fn is_status_key(key: &str) -> bool {
    matches!(
        squash(key).as_str(),
        "status" | "statuscode" | "httpstatus" | "httpstatuscode"
    )
}

fn is_429(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64() == Some(429.0),
        Value::String(s) => {
            let s = s.trim_start();
            s.starts_with("429") && !s[3..].starts_with(|c: char| c.is_ascii_digit())
        }
        _ => false,
    }
}

/// A status-like field or an error `code` equal to 429, at most [`MAX_DEPTH`] levels deep.
fn has_status_429(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value {
        Value::Object(map) => map.iter().any(|(key, v)| {
            ((is_status_key(key) || squash(key) == "code") && is_429(v))
                || has_status_429(v, depth + 1)
        }),
        Value::Array(items) => items.iter().any(|v| has_status_429(v, depth + 1)),
        _ => false,
    }
}

/// A `retry-after`-like field, in seconds.
fn retry_after_field(value: &Value, depth: usize) -> Option<u64> {
    if depth > MAX_DEPTH {
        return None;
    }
    match value {
        Value::Object(map) => map.iter().find_map(|(key, v)| {
            let scale = match squash(key).as_str() {
                "retryafter" | "retryafterseconds" | "retryaftersecs" => 1.0,
                "retryafterms" | "retryaftermillis" | "retryaftermilliseconds" => 0.001,
                _ => return retry_after_field(v, depth + 1),
            };
            let amount = match v {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse::<f64>().ok(),
                _ => None,
            };
            amount.and_then(|a| whole_seconds(a * scale))
        }),
        Value::Array(items) => items.iter().find_map(|v| retry_after_field(v, depth + 1)),
        _ => None,
    }
}

fn whole_seconds(seconds: f64) -> Option<u64> {
    // `as` saturates; NaN and negatives are rejected first.
    (seconds.is_finite() && seconds >= 0.0).then(|| seconds.ceil() as u64)
}

/// The output's strings, lower-cased, at most [`MAX_DEPTH`] levels deep and
/// [`MAX_SCANNED_BYTES`] in total.
fn texts(output: &Value) -> Vec<String> {
    fn walk(value: &Value, depth: usize, budget: &mut usize, out: &mut Vec<String>) {
        if depth > MAX_DEPTH || *budget == 0 {
            return;
        }
        match value {
            Value::String(s) => {
                let mut end = s.len().min(*budget);
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                *budget -= end;
                out.push(s[..end].to_lowercase());
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, depth + 1, budget, out)),
            Value::Object(map) => map.values().for_each(|v| walk(v, depth + 1, budget, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    let mut budget = MAX_SCANNED_BYTES;
    walk(output, 0, &mut budget, &mut out);
    out
}

/// Positions where `needle` starts a word in `text` (the byte before is not alphanumeric).
fn word_starts<'a>(text: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(needle)
        .map(|(at, _)| at)
        .filter(|&at| !text[..at].ends_with(|c: char| c.is_alphanumeric()))
}

/// `text` (lower-cased) says the request was rate limited.
fn says_rate_limited(text: &str) -> bool {
    let phrase = |first: &str, second: &str| {
        word_starts(text, first).any(|at| {
            let rest = &text[at + first.len()..];
            let rest = rest.strip_prefix([' ', '-', '_']).unwrap_or(rest);
            rest.starts_with(second)
        })
    };
    phrase("rate", "limit")
        || phrase("too many", "requests")
        || phrase("too_many", "requests")
        || phrase("quota", "exceeded")
        || says_status_429(text)
}

/// "http 429", "status: 429", "status code 429", "error 429", `"code":429`.
fn says_status_429(text: &str) -> bool {
    text.match_indices("429").any(|(at, _)| {
        let after = &text[at + 3..];
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            return false;
        }
        let before = text[..at].trim_end_matches([' ', ':', '=', '"', '(']);
        ["http", "status", "status code", "error", "code"]
            .iter()
            .any(|word| before.ends_with(word))
    })
}

/// "retry after 20s", "retry-after: 3", "try again in 2 minutes", "wait 500 ms" → seconds.
fn retry_after_in_text(text: &str) -> Option<u64> {
    [
        "retry after",
        "retry-after",
        "retry_after",
        "retryafter",
        "try again in",
        "try again after",
        "wait",
    ]
    .iter()
    .flat_map(|phrase| word_starts(text, phrase).map(move |at| at + phrase.len()))
    .find_map(|end| duration_at(&text[end..]))
}

/// A number and optional unit at the start of `text` (after separators), in seconds.
fn duration_at(text: &str) -> Option<u64> {
    let text = text.trim_start_matches([' ', ':', '=', '"']);
    let digits = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let amount: f64 = text[..digits].trim_end_matches('.').parse().ok()?;
    let rest = text[digits..].trim_start();
    let unit_len = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let scale = match &rest[..unit_len] {
        "ms" | "msec" | "millisecond" | "milliseconds" => 0.001,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
        _ => 1.0,
    };
    whole_seconds(amount * scale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(output: Value) -> ToolResult {
        ToolResult {
            output,
            is_error: true,
            content: Vec::new(),
        }
    }

    /// (case, result, expected retry_after_seconds when converted, or None when untouched)
    #[allow(clippy::type_complexity)]
    fn table() -> Vec<(&'static str, ToolResult, Option<Option<u64>>)> {
        vec![
            (
                "error status 429",
                err(json!({"status": 429, "body": "slow down"})),
                Some(None),
            ),
            (
                "error nested HTTP status as string",
                err(json!({"error": {"statusCode": "429 Too Many Requests"}})),
                Some(None),
            ),
            (
                "JSON-RPC style error code 429",
                err(json!({"error": {"code": 429, "message": "x"}})),
                Some(None),
            ),
            (
                "retry-after header",
                err(json!({"status": 429, "headers": {"Retry-After": "12"}})),
                Some(Some(12)),
            ),
            (
                "retry_after_ms field",
                err(json!({"error": "rate limited", "retry_after_ms": 1500})),
                Some(Some(2)),
            ),
            (
                "too many requests message",
                err(json!({"error": "Too Many Requests"})),
                Some(None),
            ),
            (
                "rate-limit message with text delay",
                err(json!("Rate-limit exceeded. Try again in 2 minutes.")),
                Some(Some(120)),
            ),
            (
                "openai style code",
                err(
                    json!({"error": {"type": "requests", "code": "rate_limit_exceeded", "message": "Please retry after 20s"}}),
                ),
                Some(Some(20)),
            ),
            (
                "quota exceeded",
                err(json!({"error": "Daily quota exceeded"})),
                Some(None),
            ),
            (
                "http 429 in prose of an error",
                err(json!({"error": "upstream returned HTTP 429"})),
                Some(None),
            ),
            (
                "MCP isError shape, not flagged by the adapter",
                ToolResult::ok(
                    json!({"content": [{"type": "text", "text": "429 Too Many Requests; retry after 7 seconds"}], "isError": true}),
                ),
                Some(Some(7)),
            ),
            (
                "MCP text holding a JSON error",
                err(json!({"content": [{"type": "text", "text": "{\"code\":429}"}]})),
                Some(None),
            ),
            (
                "success with explicit status 429",
                ToolResult::ok(json!({"status": 429, "body": ""})),
                Some(None),
            ),
            (
                "success mentioning rate limits in prose",
                ToolResult::ok(
                    json!({"text": "The API has a rate limit; too many requests get HTTP 429."}),
                ),
                None,
            ),
            (
                "success with a nested 429 in data",
                ToolResult::ok(json!({"items": [{"status": 429}]})),
                None,
            ),
            (
                "error about something else",
                err(json!({"error": "file not found"})),
                None,
            ),
            (
                "error with words that only contain 'rate'",
                err(json!({"error": "accurate limits, moderate limitations"})),
                None,
            ),
            (
                "error with a bare 429",
                err(json!({"error": "expected 429 items"})),
                None,
            ),
            (
                "error with status 4290",
                err(json!({"error": "status 4290"})),
                None,
            ),
            (
                "already normalised",
                err(json!({"code": "rate_limited", "error": "x", "status": 429})),
                None,
            ),
        ]
    }

    #[test]
    fn recognises_rate_limits_conservatively() {
        for (case, result, expected) in table() {
            let normalised = normalise_rate_limit(result.clone());
            match expected {
                None => assert_eq!(normalised, result, "{case}: must be left untouched"),
                Some(retry) => {
                    assert!(normalised.is_error, "{case}");
                    assert_eq!(normalised.error_code(), Some("rate_limited"), "{case}");
                    assert_eq!(normalised.output["original"], result.output, "{case}");
                    assert_eq!(
                        normalised
                            .output
                            .get("retry_after_seconds")
                            .and_then(Value::as_u64),
                        retry,
                        "{case}"
                    );
                    assert!(
                        normalised
                            .error_message()
                            .is_some_and(|m| m.contains("rate limiting")),
                        "{case}"
                    );
                }
            }
        }
    }

    #[test]
    fn reads_delays_in_text() {
        let cases = [
            ("retry after 20s", Some(20)),
            ("retry-after: 3", Some(3)),
            ("please wait 500 ms", Some(1)),
            ("try again in 1.5 hours", Some(5400)),
            ("retry after 2 minutes", Some(120)),
            ("please wait a moment", None),
            ("await 5", None),
        ];
        for (text, expected) in cases {
            assert_eq!(retry_after_in_text(text), expected, "{text}");
        }
    }

    #[test]
    fn message_states_the_wait() {
        let r = normalise_rate_limit(err(json!({"status": 429, "retry_after": 1})));
        assert!(
            r.error_message()
                .is_some_and(|m| m.contains("Wait 1 second ") && m.contains("HTTP 429"))
        );
    }

    #[test]
    fn ignores_deeply_nested_and_non_finite_values() {
        let deep = err(json!({"a": {"b": {"c": {"d": {"e": {"status": 429}}}}}}));
        assert_eq!(detect_rate_limit(&deep), None);
        assert_eq!(whole_seconds(f64::NAN), None);
        assert_eq!(whole_seconds(-1.0), None);
    }
}
