//! [`ServedRequest`]: the MCP request a tool is serving, for tools that talk back to the client
//! (sampling, elicitation, logging) while they run.

use rmcp::model::RequestMetaObject;
use rmcp::service::{Peer, RoleServer};

tokio::task_local! {
    static SERVED: ServedRequest;
}

/// The MCP request a tool call is serving: the client's peer handle and the request's `_meta`.
///
/// Set for the body of every tool the [`McpServer`](super::McpServer) dispatches, on the task
/// that runs it: read it with [`ServedRequest::current`] from inside the tool. A task the tool
/// spawns does not inherit it (clone it into the task instead).
///
/// ```
/// use prism::mcp::ServedRequest;
///
/// // Outside an MCP request there is none.
/// assert!(ServedRequest::current().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct ServedRequest {
    /// The client, for requests and notifications back to it.
    pub peer: Peer<RoleServer>,
    /// The request's `_meta` (progress token, protocol version, client capabilities).
    pub meta: RequestMetaObject,
}

impl ServedRequest {
    /// The request being served on this task, if any.
    pub fn current() -> Option<ServedRequest> {
        SERVED.try_with(Clone::clone).ok()
    }

    /// Runs `future` with `self` as the current request.
    pub(crate) async fn scope<F: Future>(self, future: F) -> F::Output {
        SERVED.scope(self, future).await
    }
}
