//! The approval event log: every question and every answer, in order, replayable.
//!
//! A subscriber gets a cursor into the log. It first reads every event recorded before it
//! subscribed, then waits for new ones. The log keeps the whole history of its gate (one
//! session), so a subscriber never lags and never misses or repeats an event, however late it
//! arrives or however slowly it reads.

use kun_ports::{ApprovalDecision, ApprovalReason, GrantKey};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::watch;

/// One entry of the log. Serialises with an `event` tag:
///
/// ```json
/// {"event":"approval_requested","approval_id":"appr_1","call_id":"c1","tool_name":"bash",
///  "reason":"runtime_policy","grant_key":{"tool_name":"bash","scope":"cargo test"}}
/// {"event":"approval_resolved","approval_id":"appr_1","tool_name":"bash",
///  "source":"approver","decision":"allow_for_session"}
/// ```
///
/// Invariant: every `approval_requested` is followed (not necessarily next) by exactly one
/// `approval_resolved` with the same `approval_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ApprovalEvent {
    /// A request reached the gate.
    ApprovalRequested {
        /// The request's approval id.
        approval_id: String,
        /// The call it is about.
        call_id: String,
        /// The tool.
        tool_name: String,
        /// Why approval is needed.
        reason: ApprovalReason,
        /// What a session grant for this call would cover.
        grant_key: GrantKey,
    },
    /// The gate decided.
    ApprovalResolved {
        /// The request's approval id.
        approval_id: String,
        /// The tool.
        tool_name: String,
        /// Where the decision came from (an approver, a session grant, failing closed).
        source: DecisionSource,
        /// The decision, flattened: `"decision": "deny", "reason": "…"`.
        #[serde(flatten)]
        decision: ApprovalDecision,
    },
}

/// Where a decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    /// The approver answered.
    Approver,
    /// An earlier `allow_for_session` grant answered; nobody was asked.
    SessionGrant,
    /// Nobody answered (no approver, dropped, closed input, timeout, failure): a denial.
    FailClosed,
}

/// The history shared between the log and its subscriptions.
type History = Arc<Mutex<Vec<ApprovalEvent>>>;

fn lock(history: &History) -> MutexGuard<'_, Vec<ApprovalEvent>> {
    // A panic while holding this lock can only happen inside Vec::push; the data stays valid.
    history.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An append-only, replayable log of approval events (one per gate, that is one per session).
#[derive(Debug)]
pub struct EventLog {
    history: History,
    /// Carries the number of recorded events; subscribers wait on it for news.
    recorded: watch::Sender<usize>,
}

impl Default for EventLog {
    fn default() -> Self {
        Self::new()
    }
}

impl EventLog {
    /// An empty log.
    #[must_use]
    pub fn new() -> Self {
        Self {
            history: Arc::default(),
            recorded: watch::Sender::new(0),
        }
    }

    /// Appends an event and wakes subscribers.
    pub fn record(&self, event: ApprovalEvent) {
        let len = {
            let mut history = lock(&self.history);
            history.push(event);
            history.len()
        };
        self.recorded.send_replace(len);
    }

    /// Every event so far, oldest first.
    #[must_use]
    pub fn snapshot(&self) -> Vec<ApprovalEvent> {
        lock(&self.history).clone()
    }

    /// A cursor that replays every past event, then follows new ones.
    #[must_use]
    pub fn subscribe(&self) -> EventSubscription {
        EventSubscription {
            history: Arc::clone(&self.history),
            recorded: self.recorded.subscribe(),
            next: 0,
        }
    }
}

/// A reader of an [`EventLog`]: past events first, then live ones, each exactly once.
///
/// The subscription ends (`next` returns `None`) once every event is read and the log (its
/// gate) has been dropped.
#[derive(Debug)]
pub struct EventSubscription {
    history: History,
    recorded: watch::Receiver<usize>,
    next: usize,
}

impl EventSubscription {
    /// The next event, waiting for one if the subscriber has read everything.
    ///
    /// Cancel safe: if the future is dropped before it completes, no event is lost.
    pub async fn next(&mut self) -> Option<ApprovalEvent> {
        loop {
            // Mark the current count as seen *before* looking, so a record that lands between
            // the look and the wait still wakes us.
            self.recorded.borrow_and_update();
            if let Some(event) = self.try_next() {
                return Some(event);
            }
            if self.recorded.changed().await.is_err() {
                // The log is gone; drain what it left behind.
                return self.try_next();
            }
        }
    }

    /// The next event if one is already recorded; never waits.
    pub fn try_next(&mut self) -> Option<ApprovalEvent> {
        let event = lock(&self.history).get(self.next).cloned()?;
        self.next += 1;
        Some(event)
    }

    /// How many events this subscription has returned so far.
    #[must_use]
    pub const fn position(&self) -> usize {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn requested(id: &str) -> ApprovalEvent {
        ApprovalEvent::ApprovalRequested {
            approval_id: id.to_owned(),
            call_id: format!("call-{id}"),
            tool_name: "bash".to_owned(),
            reason: ApprovalReason::RuntimePolicy,
            grant_key: GrantKey::command("bash", "cargo test"),
        }
    }

    #[test]
    fn events_serialise_with_snake_case_tags_and_a_flat_decision() {
        let resolved = ApprovalEvent::ApprovalResolved {
            approval_id: "appr_1".to_owned(),
            tool_name: "bash".to_owned(),
            source: DecisionSource::FailClosed,
            decision: ApprovalDecision::deny("nobody answered"),
        };
        let value = serde_json::to_value(&resolved).unwrap();
        assert_eq!(
            value,
            json!({
                "event": "approval_resolved",
                "approval_id": "appr_1",
                "tool_name": "bash",
                "source": "fail_closed",
                "decision": "deny",
                "reason": "nobody answered",
            })
        );
        let back: ApprovalEvent = serde_json::from_value(value).unwrap();
        assert_eq!(back, resolved);

        let value = serde_json::to_value(requested("appr_2")).unwrap();
        assert_eq!(value["event"], "approval_requested");
        assert_eq!(value["reason"], "runtime_policy");
        assert_eq!(value["grant_key"]["grant"], "commands");
        assert_eq!(value["grant_key"]["keys"][0]["subcommand"], "test");
        let back: ApprovalEvent = serde_json::from_value(value).unwrap();
        assert_eq!(back, requested("appr_2"));
    }

    #[test]
    fn try_next_reads_each_event_once_in_order() {
        let log = EventLog::new();
        let mut early = log.subscribe();
        assert_eq!(early.try_next(), None);
        log.record(requested("a"));
        log.record(requested("b"));
        assert_eq!(early.try_next(), Some(requested("a")));
        assert_eq!(early.position(), 1);
        let mut late = log.subscribe();
        assert_eq!(late.try_next(), Some(requested("a")));
        assert_eq!(late.try_next(), Some(requested("b")));
        assert_eq!(late.try_next(), None);
        assert_eq!(early.try_next(), Some(requested("b")));
        assert_eq!(log.snapshot(), vec![requested("a"), requested("b")]);
    }

    #[tokio::test]
    async fn next_waits_for_new_events_and_ends_when_the_log_is_gone() {
        let log = EventLog::new();
        log.record(requested("past"));
        let mut subscription = log.subscribe();
        assert_eq!(subscription.next().await, Some(requested("past")));
        let writer = tokio::spawn(async move {
            tokio::task::yield_now().await;
            log.record(requested("live"));
            // `log` drops here: the subscription ends after draining.
        });
        assert_eq!(subscription.next().await, Some(requested("live")));
        writer.await.unwrap();
        assert_eq!(subscription.next().await, None);
    }
}
