//! Progress of a long call (video generation) as MCP `notifications/progress`, sent only when
//! the request carried a `progressToken`.
//!
//! A tool's streaming update counts when it has a numeric `progress` (and optionally `total`
//! and `message`); updates that do not increase `progress` are dropped, so the client sees
//! strictly increasing values. [`McpProgress::finish`] waits until every notification is out,
//! so none follows the call's result.

use kun_ports::ProgressSink;
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use serde_json::Value;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// One call's progress sink.
pub struct McpProgress {
    sender: Mutex<Option<mpsc::UnboundedSender<ProgressNotificationParam>>>,
    token: ProgressToken,
    last: Mutex<f64>,
    forwarder: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for McpProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpProgress").finish_non_exhaustive()
    }
}

impl McpProgress {
    /// A sink sending to `peer` under `token`.
    #[must_use]
    pub fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Arc<Self> {
        let (sender, mut receiver) = mpsc::unbounded_channel::<ProgressNotificationParam>();
        let forwarder = tokio::spawn(async move {
            while let Some(param) = receiver.recv().await {
                if let Err(err) = peer.notify_progress(param).await {
                    tracing::debug!("progress not delivered: {err}");
                    return;
                }
            }
        });
        Arc::new(Self {
            sender: Mutex::new(Some(sender)),
            token,
            last: Mutex::new(f64::NEG_INFINITY),
            forwarder: Mutex::new(Some(forwarder)),
        })
    }

    /// Stops taking updates and waits until the ones taken are sent.
    pub async fn finish(&self) {
        self.sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let forwarder = self
            .forwarder
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(forwarder) = forwarder {
            let _ = forwarder.await;
        }
    }
}

impl ProgressSink for McpProgress {
    fn update(&self, _call_id: &str, partial: &Value) {
        let Some(progress) = partial.get("progress").and_then(Value::as_f64) else {
            return;
        };
        {
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            if progress <= *last {
                return;
            }
            *last = progress;
        }
        let mut param = ProgressNotificationParam::new(self.token.clone(), progress);
        if let Some(total) = partial.get("total").and_then(Value::as_f64) {
            param = param.with_total(total);
        }
        if let Some(message) = partial.get("message").and_then(Value::as_str) {
            param = param.with_message(message);
        }
        if let Some(sender) = self
            .sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            let _ = sender.send(param);
        }
    }
}
