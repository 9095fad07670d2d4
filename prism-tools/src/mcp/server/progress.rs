//! A tool's progress as MCP `notifications/progress`.
//!
//! The dispatcher hands each redacted update to the call context's progress listener, which
//! queues it here without waiting (a full queue drops the update, as the dispatcher's own queue
//! does); the call's future sends them to the client while the tool runs, and sends what is left
//! before the result. MCP wants `progress` to increase with every notification, whatever the tool
//! reports:
//!
//! - a number, or an object with a number `progress` (and optional `total` and `message`), is used
//!   as it is when it is larger than the last one sent, and skipped otherwise;
//! - anything else counts: the n-th such update is sent as `progress: n` (one past the last value
//!   sent, if larger), with the update's JSON as `message`.
//!
//! The queue lives in the request's shared state, made only for a request that carries a
//! `progressToken`; it allocates nothing until a tool reports.

use std::collections::VecDeque;
use std::sync::Mutex;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use serde_json::Value;
use tokio::sync::Notify;

use crate::context::ProgressUpdate;

/// Updates waiting to be sent, at most.
const QUEUED: usize = 64;

/// One call's updates on their way to the client.
pub(crate) struct ProgressQueue {
    token: ProgressToken,
    updates: Mutex<VecDeque<ProgressUpdate>>,
    arrived: Notify,
}

impl ProgressQueue {
    pub(crate) fn new(token: ProgressToken) -> Self {
        Self {
            token,
            updates: Mutex::new(VecDeque::new()),
            arrived: Notify::new(),
        }
    }

    /// Queues `update`; never waits. A client that reads slowly loses updates, not the tool's
    /// time.
    pub(crate) fn push(&self, update: &ProgressUpdate) {
        let mut updates = self.lock();
        if updates.len() >= QUEUED {
            tracing::debug!(target: "prism_tools", "a progress update was dropped: the queue to the client is full");
            return;
        }
        updates.push_back(update.clone());
        drop(updates);
        self.arrived.notify_one();
    }

    /// Completes when an update may be waiting.
    pub(crate) async fn arrived(&self) {
        self.arrived.notified().await;
    }

    /// The next queued update as a notification, skipping those whose value does not increase
    /// past `last`.
    pub(crate) fn next(&self, last: &mut Option<f64>) -> Option<ProgressNotificationParam> {
        loop {
            let update = self.lock().pop_front()?;
            match notification(&self.token, &update.progress, last) {
                Some(notification) => return Some(notification),
                None => {
                    tracing::debug!(target: "prism_tools", "a progress update that did not increase was not sent");
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<ProgressUpdate>> {
        self.updates
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// The notification for `progress`, or `None` when its value does not increase past `last`.
fn notification(
    token: &ProgressToken,
    progress: &Value,
    last: &mut Option<f64>,
) -> Option<ProgressNotificationParam> {
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
        Some(value) if last.is_none_or(|last| value > last) => value,
        Some(_) => return None,
        None => last.map_or(1.0, |last| last.floor() + 1.0),
    };
    *last = Some(value);
    let mut notification = ProgressNotificationParam::new(token.clone(), value);
    notification.total = total;
    notification.message = message;
    Some(notification)
}
