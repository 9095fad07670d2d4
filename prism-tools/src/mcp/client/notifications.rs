//! What the server tells the client unasked: progress of a call, routed to that call's context,
//! and "the tool list changed", which makes the next listing ask again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};
use serde_json::{Map, Value};

use crate::context::ToolExecutionContext;
use crate::redact::SecretRedactor;

/// The calls in flight that listen for progress, by the progress token their request carries.
#[derive(Clone)]
pub(crate) struct ProgressRoutes {
    routes: Arc<Mutex<HashMap<ProgressToken, ToolExecutionContext>>>,
    /// The endpoint's credentials, taken out of progress messages.
    scrubber: SecretRedactor,
}

impl ProgressRoutes {
    /// The redactor of the endpoint's credentials: these routes apply it to progress messages,
    /// and the connection to everything else of the server's it passes on.
    pub(crate) fn scrubber(&self) -> &SecretRedactor {
        &self.scrubber
    }

    /// Sends progress with `token` to `ctx` until the returned guard is dropped.
    pub(crate) fn register(&self, token: ProgressToken, ctx: ToolExecutionContext) -> RouteGuard {
        self.lock().insert(token.clone(), ctx);
        RouteGuard {
            routes: self.clone(),
            token,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, ToolExecutionContext>> {
        // The map holds no invariant a panic could break half-way.
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn deliver(&self, params: ProgressNotificationParam) {
        let Some(ctx) = self.lock().get(&params.progress_token).cloned() else {
            return;
        };
        let mut update = Map::new();
        update.insert("progress".to_owned(), number(params.progress));
        if let Some(total) = params.total {
            update.insert("total".to_owned(), number(total));
        }
        if let Some(message) = params.message {
            // The server's text, into every event and ledger row of the update: bounded, and
            // left out whole rather than cut (the dispatcher's redactor must see a secret whole).
            let message = if message.len() <= PROGRESS_MESSAGE_BYTES {
                self.scrubber.redact_str(&message).into_owned()
            } else {
                format!(
                    "[a progress message of {} bytes was left out]",
                    message.len()
                )
            };
            update.insert("message".to_owned(), Value::String(message));
        }
        // A full queue drops the update (and counts it): progress never slows the call down.
        ctx.progress(Value::Object(update));
    }
}

/// The most of a progress message the bridge passes on.
const PROGRESS_MESSAGE_BYTES: usize = 4096;

fn number(value: f64) -> Value {
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}

/// Removes a call's progress route when the call ends, however it ends.
pub(crate) struct RouteGuard {
    routes: ProgressRoutes,
    token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.token);
    }
}

/// The client side of the session: answers nothing beyond the protocol's defaults (it offers no
/// sampling, roots or elicitation, so a server must ask for input through `input_required`,
/// which reaches the host) and routes notifications.
pub(crate) struct BridgeHandler {
    progress: ProgressRoutes,
    tools_changed: Arc<AtomicBool>,
    /// The version an `initialize` request asks for (the handshake era's newest); the
    /// 2026-07-28 revision is asked for by `server/discover` instead.
    handshake_version: ProtocolVersion,
}

impl BridgeHandler {
    /// A handler, and the two things it shares with the client: the progress routes and the
    /// "tools changed" flag.
    /// `scrubber` takes the endpoint's credentials out of progress messages.
    pub(crate) fn new(scrubber: SecretRedactor) -> (Self, ProgressRoutes, Arc<AtomicBool>) {
        let progress = ProgressRoutes {
            routes: Arc::default(),
            scrubber,
        };
        let tools_changed = Arc::new(AtomicBool::new(false));
        let handler = Self {
            progress: progress.clone(),
            tools_changed: Arc::clone(&tools_changed),
            handshake_version: ProtocolVersion::V_2025_11_25,
        };
        (handler, progress, tools_changed)
    }
}

impl ClientHandler for BridgeHandler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::Release);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("prism", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(self.handshake_version.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;
    use crate::progress::progress_queue;
    use rmcp::model::NumberOrString;

    /// The message of each of `messages`, as the call's context receives it.
    async fn delivered(messages: [String; 2]) -> Vec<String> {
        let (_, routes, _) = BridgeHandler::new(SecretRedactor::new(["sk-endpoint-1"]));
        let (sender, receiver) = progress_queue(&Limits::default());
        let ctx =
            ToolExecutionContext::new().for_call("c1".into(), Some(sender), &Default::default());
        let token = ProgressToken(NumberOrString::Number(1));
        let _route = routes.register(token.clone(), ctx);
        let mut received = Vec::new();
        for (at, message) in messages.into_iter().enumerate() {
            let mut params = ProgressNotificationParam::new(token.clone(), at as f64);
            params.message = Some(message);
            routes.deliver(params);
            let update = receiver.recv().await;
            received.push(update.progress["message"].as_str().unwrap().to_owned());
        }
        received
    }

    #[tokio::test]
    async fn a_progress_message_is_scrubbed_and_an_overlong_one_left_out_whole() {
        let received = delivered(["sent with sk-endpoint-1".to_owned(), "x".repeat(1 << 20)]).await;
        assert_eq!(received[0], "sent with [REDACTED]");
        // Not cut: a cut could end inside a secret only the dispatcher's redactor knows.
        assert_eq!(
            received[1],
            "[a progress message of 1048576 bytes was left out]"
        );
    }
}
