//! The approver seam: who answers, as opposed to what the gate does around the answer.

use async_trait::async_trait;
use kun_ports::{ApprovalDecision, ApprovalRequest};
use std::fmt;
use std::time::Duration;

/// Someone (or something) that answers one approval question.
///
/// An approver only answers. Session grants, the event log, the timeout and failing closed
/// live in [`Gate`](crate::Gate), once, for every approver.
///
/// Invariant: `ask` returns `Err` when no one answered; it never invents a decision for a
/// missing answer. The gate turns every [`NoAnswer`] into a `Deny` with a reason.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Asks about one request.
    async fn ask(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, NoAnswer>;
}

/// Why no decision came back. Every case is a denial (the gate fails closed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoAnswer {
    /// Nobody is listening for approval requests (the receiving side is gone).
    NoApprover,
    /// The approver took the request and dropped it without answering.
    Dropped,
    /// The terminal's input closed before an answer was typed.
    InputClosed,
    /// Nobody answered within the gate's timeout.
    TimedOut(Duration),
    /// The approver failed while deciding (an I/O error, a panic).
    Failed(String),
}

impl NoAnswer {
    /// The denial reason the model sees.
    #[must_use]
    pub fn denial_reason(&self) -> String {
        let why = match self {
            Self::NoApprover => "no approver is connected".to_owned(),
            Self::Dropped => "the approver closed the request without answering".to_owned(),
            Self::InputClosed => "the terminal input closed before an answer".to_owned(),
            Self::TimedOut(limit) => format!("nobody answered within {}", human(*limit)),
            Self::Failed(detail) => format!("the approver failed ({detail})"),
        };
        format!(
            "{why}, so the call was denied; do not retry it until the user can approve it \
             (or pre-approve the tool in the configuration)"
        )
    }
}

impl fmt::Display for NoAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.denial_reason())
    }
}

/// `300 ms`, `45 s`, `5 min`: whole units when they fit, for a readable reason.
fn human(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 1_000 || !millis.is_multiple_of(1_000) {
        format!("{millis} ms")
    } else if millis.is_multiple_of(60_000) {
        format!("{} min", millis / 60_000)
    } else {
        format!("{} s", millis / 1_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_whole_units() {
        assert_eq!(human(Duration::from_millis(300)), "300 ms");
        assert_eq!(human(Duration::from_millis(1_500)), "1500 ms");
        assert_eq!(human(Duration::from_secs(45)), "45 s");
        assert_eq!(human(Duration::from_secs(300)), "5 min");
    }

    #[test]
    fn every_reason_says_denied_and_what_next() {
        let cases = [
            NoAnswer::NoApprover,
            NoAnswer::Dropped,
            NoAnswer::InputClosed,
            NoAnswer::TimedOut(Duration::from_secs(1)),
            NoAnswer::Failed("broken pipe".to_owned()),
        ];
        for case in cases {
            let reason = case.denial_reason();
            assert!(reason.contains("was denied"), "{reason}");
            assert!(reason.contains("do not retry"), "{reason}");
        }
        assert!(
            NoAnswer::TimedOut(Duration::from_secs(300))
                .denial_reason()
                .starts_with("nobody answered within 5 min")
        );
    }
}
