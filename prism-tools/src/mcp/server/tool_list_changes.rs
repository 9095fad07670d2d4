//! [`ToolListWatch`]: telling one session's client that the tools it could list changed.
//!
//! The registry counts its changes ([`RegistryChanges`]); a session remembers the count when it
//! opened, before it answered any `tools/list`, so a change made at any moment after is
//! announced, at worst once more than needed, never missed. Changes in quick succession may go
//! out as one notification. The notification only says the list changed, so every client gets
//! it, whatever its authorisation lets it see.
//!
//! - A handshake-era session (stdio, stateful streamable HTTP) gets
//!   `notifications/tools/list_changed` from a task started when the client says it is
//!   initialized, which ends with the session (rmcp cancels the `initialize` request's token once
//!   the session is over) or when the client can no longer be reached.
//! - A 2026-07-28 client gets it on the stream of its `subscriptions/listen` when it asked for
//!   tool-list notifications; the wait ends when the client cancels it or goes away.
//!
//! Nothing here is on the way of a `tools/call`.

use std::sync::{Arc, Mutex};

use rmcp::ErrorData as McpError;
use rmcp::model::SubscriptionFilter;
use rmcp::service::{Peer, RoleServer, SubscriptionContext};
use tokio_util::sync::CancellationToken;

use crate::registry::RegistryChanges;

/// One session's announcements of tool-list changes.
#[derive(Debug, Default)]
pub(super) struct ToolListWatch {
    /// The registry's generation when the session opened.
    seen: u64,
    /// Fires when the session ends; set by `initialize`, taken by `notifications/initialized`.
    ended: Mutex<Option<CancellationToken>>,
}

impl ToolListWatch {
    /// A session opening now, when the registry's generation is `seen`.
    pub(super) fn new(seen: u64) -> Self {
        Self {
            seen,
            ended: Mutex::default(),
        }
    }

    /// The notifications a `subscriptions/listen` may ask this server for.
    pub(super) fn offered(&self) -> SubscriptionFilter {
        SubscriptionFilter::builder().tools_list_changed().build()
    }

    /// The handshake is under way; `ended` fires once the session is over.
    pub(super) fn opened(&self, ended: CancellationToken) {
        *self.lock() = Some(ended);
    }

    /// The client is initialized: from now on each change is announced to `peer`, on a task of
    /// its own until the session ends. Does nothing without a handshake before it, or when the
    /// client says it is initialized a second time.
    pub(super) fn start(&self, changes: &Arc<RegistryChanges>, peer: Peer<RoleServer>) {
        let Some(ended) = self.lock().take() else {
            return;
        };
        let changes = Arc::clone(changes);
        let seen = self.seen;
        tokio::spawn(async move {
            tokio::select! {
                () = ended.cancelled() => {}
                () = announce(&changes, seen, || peer.notify_tool_list_changed()) => {}
            }
        });
    }

    /// Runs one `subscriptions/listen` until the client cancels it or goes away.
    pub(super) async fn listen(
        &self,
        changes: &RegistryChanges,
        subscription: SubscriptionContext,
    ) -> Result<(), McpError> {
        if subscription.accepted().tools_list_changed == Some(true) {
            let sink = subscription.sink();
            tokio::select! {
                () = subscription.cancelled() => {}
                () = announce(changes, self.seen, || sink.notify_tool_list_changed()) => {}
            }
        } else {
            subscription.cancelled().await;
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<CancellationToken>> {
        self.ended
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// Sends once per change after generation `seen` (changes made while one is being sent go out
/// as one more), until a send fails: the client can no longer be reached.
async fn announce<F, E>(changes: &RegistryChanges, mut seen: u64, send: impl Fn() -> F)
where
    F: Future<Output = Result<(), E>>,
{
    loop {
        seen = changes.after(seen).await;
        if send().await.is_err() {
            return;
        }
    }
}
