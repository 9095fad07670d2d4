//! [`ServedRequest`]: the MCP request a tool call is serving, shared by the call's future and the
//! tools it runs (which talk back to the client: sampling, elicitation, logging).

use std::sync::Arc;

use rmcp::model::RequestMetaObject;
use rmcp::service::{Peer, RequestContext, RoleServer};
use tokio::task::futures::TaskLocalFuture;

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
    /// Made once per call and shared rather than copied.
    context: Arc<RequestContext<RoleServer>>,
}

impl ServedRequest {
    /// The request being served on this task, if any.
    pub fn current() -> Option<ServedRequest> {
        SERVED.try_with(Clone::clone).ok()
    }

    /// The client, for requests and notifications back to it.
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.context.peer
    }

    /// The request's `_meta` (progress token, protocol version, client capabilities).
    pub fn meta(&self) -> &RequestMetaObject {
        &self.context.meta
    }

    pub(crate) fn new(context: RequestContext<RoleServer>) -> Self {
        Self {
            context: Arc::new(context),
        }
    }

    /// The whole request as rmcp handed it over.
    pub(crate) fn context(&self) -> &RequestContext<RoleServer> {
        &self.context
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
            .field("id", &self.context.id)
            .field("meta", self.meta())
            .finish_non_exhaustive()
    }
}
