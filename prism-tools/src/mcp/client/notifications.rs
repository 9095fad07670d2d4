//! What the server tells the client unasked: progress of a call, routed to that call's context,
//! and "the tool list changed", which makes the next listing ask again.
//!
//! A call's progress token is known only once its request is sent, and rmcp handles each
//! notification on a task of its own: a fast server's first progress can arrive before the call
//! has registered its route. Such updates are held (a bounded number) and handed over when the
//! route appears, rather than lost.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationCreateRequestMethod, ErrorData, Implementation, ListRootsRequestMethod,
    ProgressNotificationParam, ProgressToken, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::context::ToolExecutionContext;
use crate::redact::SecretRedactor;

/// The calls in flight that listen for progress, by the progress token their request carries.
#[derive(Clone)]
pub(crate) struct ProgressRoutes {
    routes: Arc<Mutex<Routes>>,
    /// The endpoint's credentials, taken out of progress messages.
    scrubber: SecretRedactor,
}

/// How many updates that found no route a connection holds. rmcp never reuses a progress token
/// within a session, so an old entry can only be progress that came after its call ended; the
/// bound keeps a server that reports on finished calls from growing the queue.
const EARLY_UPDATES: usize = 64;

#[derive(Default)]
struct Routes {
    live: HashMap<ProgressToken, Route>,
    /// Updates that arrived before their call registered, oldest first, as the server sent
    /// them: their messages are scrubbed once the call, and so its secrets, are known.
    early: VecDeque<(ProgressToken, ProgressNotificationParam)>,
}

/// A call that listens for progress.
#[derive(Clone)]
struct Route {
    ctx: ToolExecutionContext,
    /// The endpoint's credentials and the call's dispatcher's secrets as one redactor, built
    /// at the call's first progress message: one redactor after the other would leave the rest
    /// of a host secret that holds a credential once the credential inside it was replaced.
    scrubber: Arc<OnceLock<SecretRedactor>>,
    /// When the call last heard progress: the call's own deadline follows it, as the SDK's does.
    heard: Arc<Mutex<Option<Instant>>>,
}

impl ProgressRoutes {
    /// The redactor of the endpoint's credentials: these routes apply it to progress messages,
    /// and the connection to everything else of the server's it passes on.
    pub(crate) fn scrubber(&self) -> &SecretRedactor {
        &self.scrubber
    }

    /// Sends progress with `token` to `ctx` until the returned guard is dropped, starting with
    /// the updates for `token` that arrived before it registered.
    pub(crate) fn register(&self, token: ProgressToken, ctx: ToolExecutionContext) -> RouteGuard {
        let route = Route {
            ctx,
            scrubber: Arc::default(),
            heard: Arc::default(),
        };
        let held: VecDeque<_> = {
            let mut routes = self.lock();
            let (held, kept) = routes
                .early
                .drain(..)
                .partition(|(early, _)| *early == token);
            routes.early = kept;
            routes.live.insert(token.clone(), route.clone());
            held
        };
        for (_, params) in held {
            self.send(&route, params);
        }
        RouteGuard {
            routes: self.clone(),
            token,
            heard: route.heard,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        // The map holds no invariant a panic could break half-way.
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn deliver(&self, mut params: ProgressNotificationParam) {
        // The server's text reaches every event and ledger row of the update, and waits here
        // for a call that may never exist: bounded once, on arrival, and left out whole rather
        // than cut (the dispatcher's redactor must see a secret whole).
        if let Some(message) = params.message.as_mut()
            && message.len() > PROGRESS_MESSAGE_BYTES
        {
            *message = left_out(message.len());
        }
        let token = params.progress_token.clone();
        // Looked up and, when no call listens yet, held under one lock: a route registered in
        // between would otherwise miss the update.
        let route = {
            let mut routes = self.lock();
            match routes.live.get(&token) {
                Some(route) => route.clone(),
                None => {
                    if routes.early.len() == EARLY_UPDATES {
                        routes.early.pop_front();
                    }
                    routes.early.push_back((token, params));
                    return;
                }
            }
        };
        self.send(&route, params);
    }

    /// Hands `route`'s call the update for `params`. A full queue drops the update (and counts
    /// it): progress never slows the call down.
    fn send(&self, route: &Route, params: ProgressNotificationParam) {
        *route.heard.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        let update = self.update(params, route);
        route.ctx.progress(update);
    }

    /// The update `route`'s call receives for `params`.
    fn update(&self, params: ProgressNotificationParam, route: &Route) -> Value {
        let mut update = Map::new();
        update.insert("progress".to_owned(), number(params.progress));
        if let Some(total) = params.total {
            update.insert("total".to_owned(), number(total));
        }
        if let Some(message) = params.message {
            // Bounded already (`deliver`); scrubbed of the endpoint's and the call's secrets.
            let scrubber = route
                .scrubber
                .get_or_init(|| self.scrubber.union(route.ctx.redactor()));
            let message = scrubber.redact_str(&message).into_owned();
            update.insert("message".to_owned(), Value::String(message));
        }
        Value::Object(update)
    }
}

/// The most of a progress message the bridge passes on.
const PROGRESS_MESSAGE_BYTES: usize = 4096;

/// What a call gets in place of a progress message of `bytes` over [`PROGRESS_MESSAGE_BYTES`].
fn left_out(bytes: usize) -> String {
    format!("[a progress message of {bytes} bytes was left out]")
}

fn number(value: f64) -> Value {
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}

/// Removes a call's progress route when the call ends, however it ends.
pub(crate) struct RouteGuard {
    routes: ProgressRoutes,
    token: ProgressToken,
    heard: Arc<Mutex<Option<Instant>>>,
}

impl RouteGuard {
    /// When the call last heard progress, if it did.
    pub(crate) fn last_heard(&self) -> Option<Instant> {
        *self.heard.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().live.remove(&self.token);
    }
}

/// The client side of the session: offers no sampling, roots or elicitation and refuses a server
/// that asks for them anyway (it must ask for input through `input_required`, which reaches the
/// host), and routes notifications.
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

    // Not offered, so refused: the SDK's defaults would answer that the person declined, or
    // that there are no roots, which nobody decided. A server needs input through
    // `input_required`, which reaches the host.
    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Err(ErrorData::method_not_found::<ElicitationCreateRequestMethod>())
    }

    // Roots are deprecated in the SDK, yet a server of the handshake era may still ask.
    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, ErrorData> {
        Err(ErrorData::method_not_found::<ListRootsRequestMethod>())
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
    use super::super::scripted_server::{completed, connected};
    use super::*;
    use crate::limits::Limits;
    use crate::progress::progress_queue;
    use rmcp::model::NumberOrString;
    use std::time::Duration;

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

    fn update(token: &ProgressToken, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(token.clone(), progress)
    }

    #[tokio::test]
    async fn progress_that_arrives_before_its_call_registers_is_handed_over_in_order() {
        let (_, routes, _) = BridgeHandler::new(SecretRedactor::default());
        let (sender, receiver) = progress_queue(&Limits::default());
        let ctx =
            ToolExecutionContext::new().for_call("c1".into(), Some(sender), &Default::default());
        let (ours, other) = (
            ProgressToken(NumberOrString::Number(7)),
            ProgressToken(NumberOrString::Number(8)),
        );
        routes.deliver(update(&ours, 1.0));
        routes.deliver(update(&other, 1.0));
        routes.deliver(update(&ours, 2.0));
        let _route = routes.register(ours.clone(), ctx);
        routes.deliver(update(&ours, 3.0));
        for expected in [1.0, 2.0, 3.0] {
            let received = tokio::time::timeout(Duration::from_secs(10), receiver.recv())
                .await
                .expect("the update reaches the call");
            assert_eq!(received.progress["progress"], expected);
        }
        // The other call's update is still held for it, and ours no longer are.
        let early: Vec<_> = routes.lock().early.iter().map(|(t, _)| t.clone()).collect();
        assert_eq!(early, [other]);
    }

    /// A server that reports progress for calls that do not exist cannot make the connection
    /// hold its messages whole: one over the bound is held as the note the call would get.
    #[tokio::test]
    async fn an_update_held_for_no_call_keeps_no_overlong_message() {
        let (_, routes, _) = BridgeHandler::new(SecretRedactor::default());
        let token = ProgressToken(NumberOrString::Number(3));
        let mut params = update(&token, 1.0);
        params.message = Some("x".repeat(1 << 20));
        routes.deliver(params);
        let held: usize = routes
            .lock()
            .early
            .iter()
            .filter_map(|(_, params)| params.message.as_ref().map(String::len))
            .sum();
        assert!(held <= PROGRESS_MESSAGE_BYTES, "{held} bytes held");
        let (sender, receiver) = progress_queue(&Limits::default());
        let ctx =
            ToolExecutionContext::new().for_call("c1".into(), Some(sender), &Default::default());
        let _route = routes.register(token, ctx);
        let received = tokio::time::timeout(Duration::from_secs(10), receiver.recv())
            .await
            .expect("the held update reaches the call");
        assert_eq!(
            received.progress["message"],
            "[a progress message of 1048576 bytes was left out]"
        );
    }

    /// Answers `tools/call` of `confirm` by asking the client, mid-call, to confirm with the
    /// person (`elicitation/create`), of any other tool by asking for its roots (`roots/list`);
    /// the result says whether the client `answered` the question or `refused` it.
    const ASKING_MID_CALL: &str = r#"    *'"method":"tools/call"'*)
      case "$line" in
        *'"confirm"'*) printf '{"jsonrpc":"2.0","id":"ask-1","method":"elicitation/create","params":{"mode":"form","message":"Delete everything?","requestedSchema":{"type":"object","properties":{}}}}\n' ;;
        *) printf '{"jsonrpc":"2.0","id":"ask-2","method":"roots/list"}\n' ;;
      esac
      IFS= read -r answer
      case "$answer" in *'"error"'*) verdict=refused ;; *'"result"'*) verdict=answered ;; *) verdict=other ;; esac
      printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}\n' "$id" "$verdict" ;;"#;

    /// The client offers no elicitation and no roots: a server that asks anyway is refused,
    /// never told that the person declined or that there are no roots, which nobody decided.
    #[tokio::test]
    async fn a_server_asking_for_what_the_client_does_not_offer_is_refused() {
        use super::super::scripted_server::scripted_server;

        let server = scripted_server("asking", ASKING_MID_CALL);
        let client = connected(server).await;
        for tool in ["confirm", "roots"] {
            let output = completed(&client, tool).await;
            assert_eq!(output.content()[0].as_text(), Some("refused"), "{tool}");
        }
        client.close().await;
    }

    #[test]
    fn updates_for_no_call_are_bounded() {
        let (_, routes, _) = BridgeHandler::new(SecretRedactor::default());
        for n in 0..(EARLY_UPDATES as i64 + 10) {
            routes.deliver(update(&ProgressToken(NumberOrString::Number(n)), 1.0));
        }
        let routes = routes.lock();
        assert_eq!(routes.early.len(), EARLY_UPDATES);
        // The oldest went first.
        assert_eq!(
            routes.early.front().map(|(t, _)| t.clone()),
            Some(ProgressToken(NumberOrString::Number(10)))
        );
    }

    /// The endpoint's credentials and the calling dispatcher's secrets are taken out of a
    /// progress message in one pass: a credential found inside a host secret (a query value such
    /// as `2`) must not split the secret, which the dispatcher's redactor would then miss.
    #[tokio::test]
    async fn a_credential_inside_a_host_secret_leaves_no_part_of_it_in_progress() {
        let (_, routes, _) = BridgeHandler::new(SecretRedactor::new(["2"]));
        let (sender, receiver) = progress_queue(&Limits::default());
        let host = Arc::new(SecretRedactor::new(["host-secret-2-abcdef"]));
        let ctx = ToolExecutionContext::new().for_call("c1".into(), Some(sender), &host);
        let token = ProgressToken(NumberOrString::Number(1));
        let early = ProgressToken(NumberOrString::Number(2));
        let mut params = update(&early, 1.0);
        params.message = Some("early: host-secret-2-abcdef".into());
        routes.deliver(params);
        let _early = routes.register(early, ctx.clone());
        let _route = routes.register(token.clone(), ctx);
        let mut params = update(&token, 1.0);
        params.message = Some("late: host-secret-2-abcdef".into());
        routes.deliver(params);
        for _ in 0..2 {
            let received = receiver.recv().await;
            // What the dispatcher's redactor does to the update before any event or row.
            let message = host.redact_str(received.progress["message"].as_str().unwrap());
            for part in ["host-secret", "abcdef"] {
                assert!(!message.contains(part), "{message}");
            }
        }
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
