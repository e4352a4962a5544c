//! `Retry-After`: delay-seconds or an HTTP date, as whole seconds from now.

use std::time::SystemTime;

/// The delay a `Retry-After` value asks for, rounded up to whole seconds; `None` when it is
/// neither a number nor an HTTP date. A date in the past is `0`.
///
/// ```
/// use kun_web::retry_after_seconds;
/// assert_eq!(retry_after_seconds("120"), Some(120));
/// assert_eq!(retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT"), Some(0));
/// assert_eq!(retry_after_seconds("soon"), None);
/// ```
#[must_use]
pub fn retry_after_seconds(value: &str) -> Option<u64> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(seconds);
    }
    let when = httpdate::parse_http_date(value).ok()?;
    let wait = when
        .duration_since(SystemTime::now())
        .map_or(0, |d| d.as_secs() + u64::from(d.subsec_nanos() > 0));
    Some(wait)
}

/// The `Retry-After` of a response, in seconds.
#[must_use]
pub fn of_response(response: &reqwest::Response) -> Option<u64> {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(retry_after_seconds)
}
