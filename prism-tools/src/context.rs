//! [`ToolExecutionContext`]: what a tool knows about the call it serves.
//!
//! The host builds one context per run (ids, metadata, cancellation, scope) and hands it to
//! [`Dispatcher::dispatch`](crate::Dispatcher::dispatch); the dispatcher derives the per-call
//! context from it (adding the call id and, when someone listens, a progress channel). Cloning is
//! two reference-count increments, so async tool bodies take the context by value.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use crate::call::{CallId, JsonObject};
use crate::dispatch::ProgressSender;
use crate::scope::ToolScope;

/// A cancellation signal shared by a run and every call it makes.
///
/// Cancellation is cooperative: a long tool checks [`is_cancelled`](Self::is_cancelled) or awaits
/// [`cancelled`](Self::cancelled); the dispatcher also stops waiting for a body once the token
/// fires and answers the call with code `cancelled`.
#[derive(Clone, Default)]
pub struct CancellationToken {
    token: tokio_util::sync::CancellationToken,
    fired: Arc<Fired>,
}

/// Whether a token, or one of its ancestors, fired: read on every dispatch, so it is a chain of
/// atomic flags rather than the mutex `tokio_util` takes to answer the same question.
#[derive(Default)]
struct Fired {
    flag: AtomicBool,
    parent: Option<Arc<Fired>>,
}

impl Fired {
    fn get(&self) -> bool {
        let mut fired = self;
        loop {
            if fired.flag.load(Ordering::Acquire) {
                return true;
            }
            match &fired.parent {
                Some(parent) => fired = parent,
                None => return false,
            }
        }
    }
}

impl CancellationToken {
    /// A token that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the token, and every child's.
    pub fn cancel(&self) {
        self.fired.flag.store(true, Ordering::Release);
        self.token.cancel();
    }

    /// True once fired.
    pub fn is_cancelled(&self) -> bool {
        self.fired.get()
    }

    /// Completes when the token fires.
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }

    /// A token that fires with this one, and can also be fired alone.
    pub fn child_token(&self) -> Self {
        Self {
            token: self.token.child_token(),
            fired: Arc::new(Fired {
                flag: AtomicBool::new(false),
                parent: Some(Arc::clone(&self.fired)),
            }),
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

/// One progress report from a running tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressUpdate {
    /// What the tool reported, e.g. `{"done": 3, "of": 10}`.
    pub progress: Value,
    /// Optional extra detail.
    pub metadata: Option<Value>,
}

#[derive(Default)]
struct RunInfo {
    session_id: Option<Arc<str>>,
    run_id: Option<Arc<str>>,
    metadata: JsonObject,
    cancellation: CancellationToken,
    scope: Option<ToolScope>,
}

impl Clone for RunInfo {
    fn clone(&self) -> Self {
        Self {
            session_id: self.session_id.clone(),
            run_id: self.run_id.clone(),
            metadata: self.metadata.clone(),
            cancellation: self.cancellation.clone(),
            scope: self.scope.clone(),
        }
    }
}

/// What a tool receives about its call: ids, metadata, cancellation, progress and the run's scope.
///
/// ```
/// use prism_tools::{ToolExecutionContext, ToolGrant, ToolScope};
///
/// let ctx = ToolExecutionContext::new()
///     .with_session_id("s1")
///     .with_run_id("r1")
///     .with_scope(ToolScope::new(ToolGrant::only(["add"])));
/// assert_eq!(ctx.run_id(), Some("r1"));
/// assert!(ctx.tool_call_id().is_none()); // set by the dispatcher for each call
/// ```
#[derive(Clone, Default)]
pub struct ToolExecutionContext {
    run: Arc<RunInfo>,
    tool_call_id: Option<CallId>,
    progress: Option<ProgressSender>,
}

impl ToolExecutionContext {
    /// An empty context: no ids, no metadata, a fresh token, no scope.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the session id.
    pub fn with_session_id(mut self, id: impl Into<Arc<str>>) -> Self {
        Arc::make_mut(&mut self.run).session_id = Some(id.into());
        self
    }

    /// Sets the run id.
    pub fn with_run_id(mut self, id: impl Into<Arc<str>>) -> Self {
        Arc::make_mut(&mut self.run).run_id = Some(id.into());
        self
    }

    /// Adds a metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: Value) -> Self {
        Arc::make_mut(&mut self.run)
            .metadata
            .insert(key.into(), value);
        self
    }

    /// Uses this cancellation token.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        Arc::make_mut(&mut self.run).cancellation = token;
        self
    }

    /// Narrows every call made with this context to `scope`. A context that already has a scope
    /// keeps only what both allow, so a nested caller cannot widen its parent's grant.
    pub fn with_scope(mut self, scope: ToolScope) -> Self {
        let run = Arc::make_mut(&mut self.run);
        run.scope = Some(match run.scope.take() {
            Some(parent) => scope.within(&parent),
            None => scope,
        });
        self
    }

    /// The session id.
    pub fn session_id(&self) -> Option<&str> {
        self.run.session_id.as_deref()
    }

    /// The run id.
    pub fn run_id(&self) -> Option<&str> {
        self.run.run_id.as_deref()
    }

    /// The id of the call being served; set by the dispatcher.
    pub fn tool_call_id(&self) -> Option<&CallId> {
        self.tool_call_id.as_ref()
    }

    /// Host metadata.
    pub fn metadata(&self) -> &JsonObject {
        &self.run.metadata
    }

    /// The run's cancellation token.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.run.cancellation
    }

    /// True once the run was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.run.cancellation.is_cancelled()
    }

    /// The run's scope, if any.
    pub fn scope(&self) -> Option<&ToolScope> {
        self.run.scope.as_ref()
    }

    /// Reports progress. Returns `false` when nobody listens or the channel is full (the update
    /// is then dropped rather than slowing the tool down), or when the call already finished.
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

    pub(crate) fn for_call(&self, id: CallId, progress: Option<ProgressSender>) -> Self {
        Self {
            run: Arc::clone(&self.run),
            tool_call_id: Some(id),
            progress,
        }
    }

    pub(crate) fn session_and_run(&self) -> (Option<Arc<str>>, Option<Arc<str>>) {
        (self.run.session_id.clone(), self.run.run_id.clone())
    }
}

impl fmt::Debug for ToolExecutionContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolExecutionContext")
            .field("session_id", &self.session_id())
            .field("run_id", &self.run_id())
            .field("tool_call_id", &self.tool_call_id)
            .field("cancelled", &self.is_cancelled())
            .field("scope", &self.run.scope)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::CancellationToken;

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
}
