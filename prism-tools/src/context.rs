//! [`ToolExecutionContext`]: what a tool knows about the call it serves.
//!
//! The host builds one context per run (ids, metadata, cancellation, scope) and hands it to
//! [`Dispatcher::dispatch`](crate::Dispatcher::dispatch); the dispatcher derives the per-call
//! context from it (adding the call id and, when someone listens, a progress channel). Cloning is
//! two reference-count increments, so async tool bodies take the context by value. A tool that
//! declares it never reads its context gets an empty one instead, which costs nothing to make.

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, LazyLock, OnceLock};

use serde_json::Value;

use crate::call::{CallId, JsonObject};
use crate::progress::ProgressSender;
pub use crate::progress::ProgressUpdate;
use crate::redact::SecretRedactor;

/// A cancellation signal shared by a run and every call it makes.
///
/// Cancellation is cooperative: a long tool checks [`is_cancelled`](Self::is_cancelled) or awaits
/// [`cancelled`](Self::cancelled); the dispatcher also stops waiting for a body once the token
/// fires and answers the call with code `cancelled`.
///
/// The calls of one context share its token: a tool that fires
/// `ctx.cancellation().cancel()` cancels its whole run (or, under the MCP server, its request).
/// A tool that wants to stop only work of its own makes a [`child_token`](Self::child_token).
/// The common path costs no lock: cloning is one reference count,
/// [`is_cancelled`](Self::is_cancelled) reads a chain of atomic flags, and the `tokio_util`
/// token that wakes waiters is made only when someone first awaits
/// [`cancelled`](Self::cancelled) (a tool that finishes on its first poll never does).
#[derive(Clone, Default)]
pub struct CancellationToken {
    node: Arc<Node>,
    /// Set only on the token of an empty context ([`ToolExecutionContext`] of a tool that reads
    /// none), which is shared by all of them: it never fires, so firing it is ignored.
    inert: bool,
}

#[derive(Default)]
struct Node {
    fired: AtomicBool,
    parent: Option<Arc<Node>>,
    /// Wakes the waiters of [`CancellationToken::cancelled`]; a child of the parent's.
    waker: OnceLock<tokio_util::sync::CancellationToken>,
}

impl Node {
    /// Whether this node or an ancestor fired.
    fn fired(&self) -> bool {
        let mut node = self;
        loop {
            if node.fired.load(Ordering::SeqCst) {
                return true;
            }
            match &node.parent {
                Some(parent) => node = parent,
                None => return false,
            }
        }
    }

    fn waker(&self) -> &tokio_util::sync::CancellationToken {
        self.waker.get_or_init(|| match &self.parent {
            Some(parent) => parent.waker().child_token(),
            None => tokio_util::sync::CancellationToken::new(),
        })
    }
}

impl CancellationToken {
    /// A token that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// True when `other` is a clone of this token (not merely a child of the same parent).
    #[cfg(feature = "mcp")]
    pub(crate) fn same_as(&self, other: &CancellationToken) -> bool {
        Arc::ptr_eq(&self.node, &other.node)
    }

    /// Fires the token, and every child's.
    pub fn cancel(&self) {
        if self.inert {
            return;
        }
        self.node.fired.store(true, Ordering::SeqCst);
        // Pairs with the fence in `cancelled`: either a waiter made its waker before this reads
        // it (and is woken here), or it sees the flag set and does not wait.
        fence(Ordering::SeqCst);
        if let Some(waker) = self.node.waker.get() {
            waker.cancel();
        }
    }

    /// True once fired.
    pub fn is_cancelled(&self) -> bool {
        self.node.fired()
    }

    /// Completes when the token fires.
    pub async fn cancelled(&self) {
        let waker = self.node.waker();
        fence(Ordering::SeqCst);
        if self.node.fired() {
            return;
        }
        waker.cancelled().await;
    }

    /// A token that fires with this one, and can also be fired alone.
    pub fn child_token(&self) -> Self {
        Self {
            node: Arc::new(Node {
                fired: AtomicBool::new(false),
                parent: Some(Arc::clone(&self.node)),
                waker: OnceLock::new(),
            }),
            inert: false,
        }
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

#[derive(Clone, Default)]
struct RunInfo {
    session_id: Option<Arc<str>>,
    run_id: Option<Arc<str>>,
    metadata: JsonObject,
    /// The run's [`ToolScope`](crate::scope::ToolScope). The scope belongs to the selection
    /// layer above this one, which reads and sets it (`scope.rs`), so the context holds it
    /// without naming its type.
    scope: Option<Arc<dyn ScopeSlot>>,
    /// Told of every progress update of the calls made with this context, redacted.
    progress_listener: Option<ProgressListener>,
}

/// A callback told of each progress update a call reports, after redaction (see
/// [`ToolExecutionContext::with_progress_listener`]).
pub(crate) type ProgressListener = Arc<dyn Fn(&ProgressUpdate) + Send + Sync>;

/// What the context can hold as a run's scope: implemented by
/// [`ToolScope`](crate::scope::ToolScope) only.
pub(crate) trait ScopeSlot: Any + fmt::Debug + Send + Sync {}

/// What a tool receives about its call: ids, metadata, cancellation, progress and the run's scope.
///
/// ```
/// use prism::ToolExecutionContext;
/// use prism::registry::{ToolGrant, ToolScope};
///
/// let ctx = ToolExecutionContext::new()
///     .with_session_id("s1")
///     .with_run_id("r1")
///     .with_scope(ToolScope::new(ToolGrant::only(["add"])));
/// assert_eq!(ctx.run_id(), Some("r1"));
/// assert!(ctx.tool_call_id().is_none()); // set by the dispatcher for each call
/// ```
#[derive(Clone)]
pub struct ToolExecutionContext {
    /// `None` only in the empty context a tool gets when it declared that it never reads one
    /// ([`Tool::reads_context`](crate::Tool::reads_context)): making it costs nothing.
    run: Option<Arc<RunInfo>>,
    /// Beside the run's details rather than among them: a server gives each call its own token,
    /// which then costs no copy of the details. `None` in the empty context: it never fires.
    cancellation: Option<CancellationToken>,
    tool_call_id: Option<CallId>,
    progress: Option<ProgressSender>,
    /// The dispatcher's redactor, in the context of a call it runs.
    redactor: Option<Arc<SecretRedactor>>,
}

impl Default for ToolExecutionContext {
    fn default() -> Self {
        Self {
            run: Some(Arc::default()),
            cancellation: Some(CancellationToken::default()),
            tool_call_id: None,
            progress: None,
            redactor: None,
        }
    }
}

/// The redactor of a context outside any dispatched call: it knows no secret.
static NO_SECRETS: LazyLock<SecretRedactor> = LazyLock::new(SecretRedactor::default);

/// What a context without a run reports as its metadata.
static NO_METADATA: LazyLock<JsonObject> = LazyLock::new(JsonObject::new);

/// The token of every context without a run: it never fires.
static NEVER_FIRES: LazyLock<CancellationToken> = LazyLock::new(|| CancellationToken {
    inert: true,
    ..CancellationToken::default()
});

impl ToolExecutionContext {
    /// An empty context: no ids, no metadata, a fresh token, no scope.
    pub fn new() -> Self {
        Self::default()
    }

    /// The run's details, made shareable and writable for the `with_*` methods.
    fn run_mut(&mut self) -> &mut RunInfo {
        Arc::make_mut(self.run.get_or_insert_with(Arc::default))
    }

    /// Sets the session id.
    pub fn with_session_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.run_mut().session_id = Some(id.into());
        self
    }

    /// Sets the run id.
    pub fn with_run_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.run_mut().run_id = Some(id.into());
        self
    }

    /// Adds a metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        self.run_mut().metadata.insert(key.into(), value);
        self
    }

    /// Uses this cancellation token.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Tells `listener` of every progress update that calls made with this context report, after
    /// the dispatcher's redactor, in order, while the call runs: how an MCP server relays a
    /// tool's progress to the client that made the call. The listener must not block (queue the
    /// update and return); a panic in it is caught and logged.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
    /// use serde_json::{json, Value};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let slow = ToolDefinition::builder("slow").run(|_args: Value, ctx: ToolExecutionContext| async move {
    ///     ctx.progress(json!(1));
    ///     tokio::task::yield_now().await;
    ///     ctx.progress(json!(2));
    ///     Ok(Value::Null)
    /// });
    /// let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([slow])).build();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let sink = Arc::clone(&seen);
    /// let ctx = ToolExecutionContext::new()
    ///     .with_progress_listener(move |update| sink.lock().unwrap().push(update.progress.clone()));
    /// dispatcher.dispatch(ToolCall::new("c1", "slow", json!({})), &ctx).await.unwrap();
    /// assert_eq!(*seen.lock().unwrap(), [json!(1), json!(2)]);
    /// # });
    /// ```
    pub fn with_progress_listener(
        mut self,
        listener: impl Fn(&ProgressUpdate) + Send + Sync + 'static,
    ) -> Self {
        self.run_mut().progress_listener = Some(Arc::new(listener));
        self
    }

    /// The listener given to [`with_progress_listener`](Self::with_progress_listener).
    pub(crate) fn progress_listener(&self) -> Option<&ProgressListener> {
        self.run.as_ref()?.progress_listener.as_ref()
    }

    /// The scope slot, for `scope.rs` to read and replace.
    pub(crate) fn scope_slot(&self) -> Option<&Arc<dyn ScopeSlot>> {
        self.run.as_ref()?.scope.as_ref()
    }

    pub(crate) fn set_scope_slot(&mut self, scope: Arc<dyn ScopeSlot>) {
        self.run_mut().scope = Some(scope);
    }

    /// The session id.
    pub fn session_id(&self) -> Option<&str> {
        self.run.as_ref()?.session_id.as_deref()
    }

    /// The run id.
    pub fn run_id(&self) -> Option<&str> {
        self.run.as_ref()?.run_id.as_deref()
    }

    /// The id of the call being served; set by the dispatcher.
    pub fn tool_call_id(&self) -> Option<&CallId> {
        self.tool_call_id.as_ref()
    }

    /// The redactor of the dispatcher running this call (one that knows no secret outside a
    /// dispatched call). The dispatcher redacts whatever a tool returns; a tool that cuts text
    /// it returns (a page, a quoted error body) redacts it with this first, so that no cut
    /// leaves part of a secret behind.
    ///
    /// ```
    /// use prism::ToolExecutionContext;
    ///
    /// let ctx = ToolExecutionContext::new();
    /// assert!(ctx.redactor().is_empty());
    /// ```
    pub fn redactor(&self) -> &SecretRedactor {
        self.redactor.as_deref().unwrap_or(&NO_SECRETS)
    }

    /// Host metadata.
    pub fn metadata(&self) -> &JsonObject {
        match &self.run {
            Some(run) => &run.metadata,
            None => &NO_METADATA,
        }
    }

    /// This context's cancellation token: the run's, or a call's own child of it when a server
    /// gave the call one. In the empty context of a tool that reads none, a token that never fires
    /// (firing it does nothing).
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancellation.as_ref().unwrap_or(&NEVER_FIRES)
    }

    /// True once this context's token fired (the run's, or the call's own).
    pub fn is_cancelled(&self) -> bool {
        self.cancellation().is_cancelled()
    }

    /// Reports progress. Returns `false` when nobody listens, when the update is dropped because
    /// the queue is full ([`Limits::progress_capacity`](crate::Limits::progress_capacity); a
    /// tool is never slowed down) or the value or its metadata nests deeper than
    /// [`Limits::max_output_depth`](crate::Limits::max_output_depth), or when the call already
    /// finished. Updates dropped while the call runs are counted on its terminal event and row
    /// (`progress_dropped`).
    pub fn progress(&self, progress: Value) -> bool {
        self.progress_with_metadata(progress, None)
    }

    /// Reports progress with extra detail. See [`progress`](Self::progress).
    pub fn progress_with_metadata(&self, progress: Value, metadata: Option<Value>) -> bool {
        match &self.progress {
            Some(sender) => sender.try_send(ProgressUpdate { progress, metadata }),
            None => false,
        }
    }

    pub(crate) fn for_call(
        &self,
        id: CallId,
        progress: Option<ProgressSender>,
        redactor: &Arc<SecretRedactor>,
    ) -> Self {
        Self {
            run: self.run.clone(),
            cancellation: self.cancellation.clone(),
            tool_call_id: Some(id),
            progress,
            redactor: Some(Arc::clone(redactor)),
        }
    }

    /// This context with a token of its own, a child of this one's: firing it stops only what
    /// was made with the copy, firing this one's stops both. Built field by field, so the parent
    /// token is not cloned only to be replaced. The MCP server gives each request one.
    #[cfg(feature = "mcp")]
    pub(crate) fn with_child_cancellation(&self) -> Self {
        Self {
            run: self.run.clone(),
            cancellation: Some(self.cancellation().child_token()),
            tool_call_id: self.tool_call_id.clone(),
            progress: self.progress.clone(),
            redactor: self.redactor.clone(),
        }
    }

    /// The context of a call whose tool never reads it: no run, no ids, no progress. Free to
    /// make, which is the point: such a tool pays nothing for the context it ignores.
    pub(crate) fn unread() -> Self {
        Self {
            run: None,
            cancellation: None,
            tool_call_id: None,
            progress: None,
            redactor: None,
        }
    }

    pub(crate) fn session_and_run(&self) -> (Option<Arc<str>>, Option<Arc<str>>) {
        match &self.run {
            Some(run) => (run.session_id.clone(), run.run_id.clone()),
            None => (None, None),
        }
    }
}

impl fmt::Debug for ToolExecutionContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolExecutionContext")
            .field("session_id", &self.session_id())
            .field("run_id", &self.run_id())
            .field("tool_call_id", &self.tool_call_id)
            .field("cancelled", &self.is_cancelled())
            .field("scope", &self.scope_slot())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::CancellationToken;

    #[cfg(feature = "mcp")]
    #[test]
    fn a_child_cancellation_context_keeps_the_run_and_fires_with_its_parent() {
        let parent = super::ToolExecutionContext::new()
            .with_session_id("s1")
            .with_run_id("r1");
        let first = parent.with_child_cancellation();
        let second = parent.with_child_cancellation();
        assert_eq!(
            (first.session_id(), first.run_id()),
            (Some("s1"), Some("r1"))
        );

        first.cancellation().cancel();
        assert!(first.is_cancelled());
        assert!(!parent.is_cancelled() && !second.is_cancelled());

        parent.cancellation().cancel();
        assert!(second.is_cancelled());
    }

    #[tokio::test]
    async fn tokens_see_their_ancestors_fire_but_not_their_descendants() {
        let root = CancellationToken::new();
        let child = root.child_token();
        let grandchild = child.child_token();
        let sibling = root.child_token();

        grandchild.cancel();
        assert!(grandchild.is_cancelled());
        assert!(!child.is_cancelled() && !root.is_cancelled());

        root.cancel();
        assert!(child.is_cancelled() && sibling.is_cancelled());
        // The flags and the waiters agree.
        sibling.cancelled().await;
        assert!(root.child_token().is_cancelled());
    }

    #[tokio::test]
    async fn a_waiter_wakes_whether_it_started_waiting_before_or_after_an_ancestor_fired() {
        // Before: the grandchild's waker exists when the root fires.
        let root = CancellationToken::new();
        let grandchild = root.child_token().child_token();
        let waiting = tokio::spawn({
            let grandchild = grandchild.clone();
            async move { grandchild.cancelled().await }
        });
        tokio::task::yield_now().await;
        root.cancel();
        waiting.await.unwrap();

        // After: no waker existed anywhere when the root fired.
        let root = CancellationToken::new();
        let child = root.child_token();
        root.cancel();
        child.cancelled().await;

        // A clone fires the token it was cloned from.
        let token = CancellationToken::new();
        token.clone().cancel();
        token.cancelled().await;
    }

    #[test]
    fn firing_and_waiting_on_two_threads_never_loses_the_wake_up() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            for _ in 0..2_000 {
                let root = CancellationToken::new();
                let child = root.child_token();
                let waiting = tokio::spawn(async move { child.cancelled().await });
                let firing = tokio::spawn(async move { root.cancel() });
                firing.await.unwrap();
                // A lost wake-up would wait forever; a minute is far beyond any scheduling delay.
                tokio::time::timeout(std::time::Duration::from_secs(60), waiting)
                    .await
                    .expect("the waiter woke")
                    .unwrap();
            }
        });
    }
}
