//! [`ServedRequest`]: the MCP request a tool call is serving, shared by the call's future, the
//! tools it runs (which talk back to the client: sampling, elicitation, logging) and its progress.

use std::sync::Arc;

use rmcp::model::RequestMetaObject;
use rmcp::service::{Peer, RequestContext, RoleServer};
use tokio::task::futures::TaskLocalFuture;

use super::progress::ProgressQueue;

tokio::task_local! {
    static SERVED: ServedRequest;
}

/// The MCP request a tool call is serving: the client's peer handle and the request's `_meta`.
///
/// Set for the body of every tool the [`McpServer`](super::McpServer) dispatches, on the task
/// that runs it: read it with [`ServedRequest::current`] from inside the tool. A task the tool
/// spawns does not inherit it (clone it into the task instead; cloning is one reference count).
///
/// ```
/// use prism::mcp::ServedRequest;
///
/// // Outside an MCP request there is none.
/// assert!(ServedRequest::current().is_none());
/// ```
#[derive(Clone)]
pub struct ServedRequest {
    request: Arc<Request>,
}

/// One request, made once per call and shared rather than copied.
struct Request {
    context: RequestContext<RoleServer>,
    /// Present when the client asked for progress (a `progressToken` in `_meta`).
    progress: Option<ProgressQueue>,
}

impl ServedRequest {
    /// The request being served on this task, if any.
    pub fn current() -> Option<ServedRequest> {
        SERVED.try_with(Clone::clone).ok()
    }

    /// The client, for requests and notifications back to it.
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.request.context.peer
    }

    /// The request's `_meta` (progress token, protocol version, client capabilities).
    pub fn meta(&self) -> &RequestMetaObject {
        &self.request.context.meta
    }

    /// The request in `context`, with a queue for its progress when `reports` (the tool can
    /// report progress) and the client asked for it.
    pub(crate) fn new(context: RequestContext<RoleServer>, reports: bool) -> Self {
        let progress = reports
            .then(|| context.meta.get_progress_token())
            .flatten()
            .map(ProgressQueue::new);
        Self {
            request: Arc::new(Request { context, progress }),
        }
    }

    /// The whole request as rmcp handed it over.
    pub(crate) fn context(&self) -> &RequestContext<RoleServer> {
        &self.request.context
    }

    /// Where the call's progress waits to be sent, when the client asked for it.
    pub(crate) fn progress(&self) -> Option<&ProgressQueue> {
        self.request.progress.as_ref()
    }

    /// `future`, run with `self` as the current request. Not an `async fn`: that would keep a
    /// second copy of `future` in its own.
    pub(crate) fn scope<F: Future>(self, future: F) -> TaskLocalFuture<ServedRequest, F> {
        SERVED.scope(self, future)
    }
}

impl std::fmt::Debug for ServedRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServedRequest")
            .field("id", &self.request.context.id)
            .field("meta", self.meta())
            .finish_non_exhaustive()
    }
}
