//! A tool's progress as MCP `notifications/progress`.
//!
//! The dispatcher hands each redacted update to the call context's progress listener, which
//! queues it on the dispatcher's own kind of progress queue (never waiting; a full queue drops the
//! update); the call's future sends them to the client while the tool runs, and sends what is
//! left before the result. MCP wants `progress` to increase with every notification, whatever the
//! tool reports:
//!
//! - a number, or an object with a number `progress` (and optional `total` and `message`), is used
//!   as it is when it is larger than the last one sent, and skipped otherwise;
//! - anything else counts: the n-th such update is sent as `progress: n` (one past the last value
//!   sent, if larger), with the update's JSON as `message`.
//!
//! A `message` is cut to [`MAX_MESSAGE_BYTES`]; the update was redacted before it got here, so
//! the cut cannot split a secret the redactor would have found.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use serde_json::Value;

use crate::limits::Limits;
use crate::progress::{ProgressReceiver, ProgressSender, progress_queue};
use crate::redact::cut_marked;

/// The longest `message` a progress notification carries.
const MAX_MESSAGE_BYTES: usize = 4096;

/// The client's end of one call's progress: the queue's receiver, and what was last sent.
pub(crate) struct ProgressRelay {
    updates: ProgressReceiver,
    token: ProgressToken,
    last: Option<f64>,
}

impl ProgressRelay {
    /// A relay under the client's `token`, and the sender the call's listener queues on.
    pub(crate) fn new(token: ProgressToken, limits: &Limits) -> (ProgressSender, Self) {
        let (sender, updates) = progress_queue(limits);
        let relay = Self {
            updates,
            token,
            last: None,
        };
        (sender, relay)
    }

    /// The next notification to send, waiting for an update that increases.
    pub(crate) async fn next(&mut self) -> ProgressNotificationParam {
        loop {
            let update = self.updates.recv().await;
            if let Some(sent) = notification(&self.token, &mut self.last, &update.progress) {
                return sent;
            }
        }
    }

    /// The notifications still owed once the call ended, in order; later updates are refused.
    pub(crate) fn finish(self) -> Vec<ProgressNotificationParam> {
        let Self {
            updates,
            token,
            mut last,
        } = self;
        updates
            .close()
            .queued
            .into_iter()
            .filter_map(|update| notification(&token, &mut last, &update.progress))
            .collect()
    }
}

/// The notification for `progress`, or `None` when its value does not increase past `last`.
fn notification(
    token: &ProgressToken,
    last: &mut Option<f64>,
    progress: &Value,
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
        Some(value) => value,
        // One past the last value; past 2^53 adding one changes nothing, so the next larger one.
        None => last.map_or(1.0, |last| (last.floor() + 1.0).max(last.next_up())),
    };
    // JSON has no infinity: past the largest number nothing more is sent.
    if !value.is_finite() || last.is_some_and(|last| value <= last) {
        tracing::debug!(target: "prism_tools", "a progress update that did not increase was not sent");
        return None;
    }
    *last = Some(value);
    let mut notification = ProgressNotificationParam::new(token.clone(), value);
    notification.total = total;
    notification.message = message.map(|mut message| {
        cut_marked(&mut message, MAX_MESSAGE_BYTES);
        message
    });
    Some(notification)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;
    use serde_json::json;

    fn values(updates: &[Value]) -> Vec<f64> {
        let token = ProgressToken(NumberOrString::Number(1));
        let mut last = None;
        updates
            .iter()
            .filter_map(|update| notification(&token, &mut last, update))
            .map(|sent| sent.progress)
            .collect()
    }

    #[test]
    fn values_only_ever_increase() {
        let sent = values(&[json!(2.5), json!("text"), json!(1), json!({"progress": 10})]);
        assert_eq!(sent, [2.5, 3.0, 10.0], "the 1 that went back is skipped");
    }

    #[test]
    fn a_text_update_after_a_huge_value_still_increases() {
        // Past 2^53, adding one to a float changes nothing.
        let sent = values(&[json!(1.0e20), json!("next"), json!("and next")]);
        assert_eq!(sent.len(), 3);
        assert!(sent[0] < sent[1] && sent[1] < sent[2], "{sent:?}");
    }

    #[test]
    fn a_long_message_is_cut() {
        let token = ProgressToken(NumberOrString::Number(1));
        let long = "é".repeat(MAX_MESSAGE_BYTES);
        for update in [json!({"progress": 1, "message": long}), json!([long])] {
            let sent = notification(&token, &mut None, &update).unwrap();
            let message = sent.message.unwrap();
            let bound = MAX_MESSAGE_BYTES + crate::redact::CUT_MARKER.len();
            assert!(message.len() <= bound, "{}", message.len());
            assert!(message.ends_with("[cut]"), "{message}");
        }
    }

    #[test]
    fn nothing_follows_the_largest_value() {
        let sent = values(&[json!(f64::MAX), json!("next")]);
        assert_eq!(sent, [f64::MAX], "no larger finite value exists to send");
    }
}
