//! A tool's progress as MCP `notifications/progress`.
//!
//! The dispatcher hands each redacted update to the call context's progress listener, which
//! queues it here without waiting (a full queue drops the update, as the dispatcher's own queue
//! does); the call's task sends them to the client while the tool runs. MCP wants `progress` to
//! increase with every notification, whatever the tool reports:
//!
//! - a number, or an object with a number `progress` (and optional `total` and `message`), is used
//!   as it is when it is larger than the last one sent, and skipped otherwise;
//! - anything else counts: the n-th such update is sent as `progress: n` (one past the last value
//!   sent, if larger), with the update's JSON as `message`.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::context::ProgressUpdate;

/// Updates waiting to be sent, at most.
const QUEUED: usize = 64;

/// The listener's end: queues updates, never waits.
pub(crate) type ProgressQueue = mpsc::Sender<ProgressUpdate>;

/// Sends one call's progress to its client.
pub(crate) struct ProgressRelay {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    last: Option<f64>,
}

impl ProgressRelay {
    /// A relay to `peer` under `token`, the queue that feeds it and the queue's far end.
    pub(crate) fn new(
        peer: Peer<RoleServer>,
        token: ProgressToken,
    ) -> (ProgressQueue, mpsc::Receiver<ProgressUpdate>, Self) {
        let (queue, updates) = mpsc::channel(QUEUED);
        let relay = Self {
            peer,
            token,
            last: None,
        };
        (queue, updates, relay)
    }

    /// Sends `update` unless its value does not increase.
    pub(crate) async fn send(&mut self, update: ProgressUpdate) {
        let Some(notification) = self.notification(&update.progress) else {
            tracing::debug!(target: "prism_tools", "a progress update that did not increase was not sent");
            return;
        };
        if let Err(error) = self.peer.notify_progress(notification).await {
            tracing::debug!(target: "prism_tools", %error, "a progress notification could not be sent");
        }
    }

    /// Sends whatever is still queued in `updates` (what the tool reported just before it
    /// returned).
    pub(crate) async fn flush(&mut self, updates: &mut mpsc::Receiver<ProgressUpdate>) {
        while let Ok(update) = updates.try_recv() {
            self.send(update).await;
        }
    }

    fn notification(&mut self, progress: &Value) -> Option<ProgressNotificationParam> {
        let number = |value: Option<&Value>| value.and_then(Value::as_f64);
        let (value, total, message) = match progress {
            Value::Number(_) => (number(Some(progress)), None, None),
            Value::Object(fields) if number(fields.get("progress")).is_some() => (
                number(fields.get("progress")),
                number(fields.get("total")),
                fields
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            ),
            other => (None, None, Some(other.to_string())),
        };
        let value = match value {
            Some(value) if self.last.is_none_or(|last| value > last) => value,
            Some(_) => return None,
            None => self.last.map_or(1.0, |last| last.floor() + 1.0),
        };
        self.last = Some(value);
        let mut notification = ProgressNotificationParam::new(self.token.clone(), value);
        notification.total = total;
        notification.message = message;
        Some(notification)
    }
}
