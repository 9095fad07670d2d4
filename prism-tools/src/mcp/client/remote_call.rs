//! One `tools/call` to the server: timed out (a wait reset by progress, inside a hard maximum),
//! cancelled on the server when the caller gives up for any reason, with progress routed to the
//! call's context. Whatever the server does (answers, errs, hangs, dies), the call ends with an
//! outcome or an error, never a hang.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CancelledNotificationParam, ClientRequest, CustomResult, InputResponses,
    Request, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::{Map, Value};

use crate::context::ToolExecutionContext;
use crate::error::ToolError;
use crate::redact::SecretRedactor;

use super::error::codes;
use super::notifications::ProgressRoutes;
use super::outcome::{self, InputRequired, RemoteOutcome};
use super::server::RemoteServer;

/// How long past the hard maximum the bridge still waits for the SDK to give up by itself
/// before it gives up on its own (the SDK's timers should always fire first).
const BACKSTOP: Duration = Duration::from_secs(5);

/// What a call needs of its connection.
pub(crate) struct CallSite<'a> {
    pub(crate) server: &'a RemoteServer,
    /// The endpoint's credentials, taken out of the server's text.
    pub(crate) scrubber: &'a SecretRedactor,
    /// The calling dispatcher's redactor, whose secrets are taken out in the same pass.
    pub(crate) host: &'a SecretRedactor,
    pub(crate) peer: &'a Peer<RoleClient>,
    pub(crate) progress: &'a ProgressRoutes,
}

impl CallSite<'_> {
    /// A redactor of the endpoint's credentials and the host's secrets as one: one redactor
    /// after the other would leave the rest of a host secret that holds a credential (a query
    /// value such as `2`) once the credential inside it was replaced.
    pub(crate) fn scrubber(&self) -> SecretRedactor {
        self.scrubber.union(self.host)
    }
}

/// Answers to a server's earlier `input_required`, sent with the call again.
pub(crate) struct Resume {
    pub(crate) responses: InputResponses,
    pub(crate) request_state: Option<String>,
}

/// Calls the remote tool `tool` with `arguments`.
pub(crate) async fn call(
    site: CallSite<'_>,
    tool: &str,
    arguments: Map<String, Value>,
    resume: Option<Resume>,
    ctx: &ToolExecutionContext,
) -> Result<RemoteOutcome, ToolError> {
    if ctx.is_cancelled() {
        return Err(ToolError::cancelled());
    }
    let bounds = &site.server.bounds;
    let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    if let Some(resume) = resume {
        params = params.with_input_responses(resume.responses);
        if let Some(state) = resume.request_state {
            params = params.with_request_state(state);
        }
    }
    let options = PeerRequestOptions::with_timeout(site.server.effective_call_timeout())
        .reset_timeout_on_progress()
        .with_max_total_timeout(bounds.max_call_timeout);
    let request = ClientRequest::CallToolRequest(Request::new(params));
    let sending = site.peer.send_cancellable_request(request, options);
    let handle = match tokio::time::timeout(bounds.max_call_timeout, sending).await {
        Ok(Ok(handle)) => handle,
        Ok(Err(error)) => return Err(service_error(&site, tool, error)),
        Err(_) => return Err(timed_out(site.server, tool, bounds.max_call_timeout)),
    };
    let _route = site
        .progress
        .register(handle.progress_token.clone(), ctx.clone());
    let mut cancel = CancelOnDrop {
        peer: Some(site.peer.clone()),
        id: handle.id.clone(),
        reason: "the caller gave up on the call",
    };
    let response = tokio::select! {
        biased;
        () = ctx.cancellation().cancelled() => {
            cancel.reason = "the call was cancelled";
            return Err(ToolError::cancelled());
        }
        response = handle.await_response() => response,
        () = tokio::time::sleep(bounds.max_call_timeout.saturating_add(BACKSTOP)) => {
            cancel.reason = "request timeout";
            return Err(timed_out(site.server, tool, bounds.max_call_timeout));
        }
    };
    // The SDK answered: it already told the server about its own timeout.
    cancel.peer = None;
    match response {
        Ok(ServerResult::CallToolResult(result)) => {
            // A result may echo the endpoint's credentials, so it is scrubbed whenever there
            // are some; an error's text is also quoted in messages, so it always is.
            let scrubber = if result.is_error == Some(true) || !site.scrubber.is_empty() {
                site.scrubber()
            } else {
                SecretRedactor::default()
            };
            outcome::complete(result, bounds.max_result_bytes, &scrubber)
        }
        Ok(ServerResult::EmptyResult(_)) => Ok(RemoteOutcome::Complete(Value::Null.into())),
        Ok(ServerResult::InputRequiredResult(result)) => Ok(RemoteOutcome::InputRequired(
            InputRequired::from_wire(&site.server.name, tool, result),
        )),
        // A tool result the SDK could not read (a block of a newer kind): read leniently.
        Ok(ServerResult::CustomResult(CustomResult(value))) => {
            outcome::lenient(value, bounds.max_result_bytes, site.scrubber)
                .unwrap_or_else(|| Err(not_a_tool_result(site.server, tool)))
        }
        Ok(ServerResult::CreateTaskResult(_)) => Err(ToolError::with_code(
            codes::PROTOCOL_ERROR,
            format!(
                "MCP server `{}` answered `{tool}` with a task, which this client does not follow",
                site.server.name
            ),
        )),
        Ok(_) => Err(not_a_tool_result(site.server, tool)),
        Err(error) => Err(service_error(&site, tool, error)),
    }
}

fn not_a_tool_result(server: &RemoteServer, tool: &str) -> ToolError {
    ToolError::with_code(
        codes::PROTOCOL_ERROR,
        format!(
            "MCP server `{}` answered `{tool}` with something that is not a tool result",
            server.name
        ),
    )
}

fn timed_out(server: &RemoteServer, tool: &str, waited: Duration) -> ToolError {
    ToolError::with_code(
        codes::TIMEOUT,
        format!(
            "MCP server `{}` did not finish `{tool}` within {} ms; the call was cancelled",
            server.name,
            waited.as_millis()
        ),
    )
}

/// The error a failed request ends the call with. The server's text is passed on whole (the
/// endpoint's credentials taken out): the dispatcher redacts it, then cuts it to its bound, so a
/// secret is never cut before it is found.
fn service_error(site: &CallSite<'_>, tool: &str, error: ServiceError) -> ToolError {
    let server = site.server;
    match error {
        ServiceError::Timeout { timeout } => timed_out(server, tool, timeout),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => ToolError::with_code(
            codes::CONNECTION_LOST,
            format!(
                "the connection to MCP server `{}` is gone; `{tool}` did not finish",
                server.name
            ),
        ),
        ServiceError::McpError(data) => ToolError::with_code(
            codes::PROTOCOL_ERROR,
            format!(
                "MCP server `{}` refused `{tool}` (JSON-RPC {}): {}",
                server.name,
                data.code.0,
                site.scrubber().redact_str(&data.message)
            ),
        ),
        other => ToolError::with_code(
            codes::PROTOCOL_ERROR,
            format!(
                "MCP server `{}`: `{tool}` failed: {}",
                server.name,
                site.scrubber().redact_str(&other.to_string())
            ),
        ),
    }
}

/// Tells the server a request is abandoned when the call ends without its answer: cancelled
/// through the context, timed out by the backstop, or dropped by the dispatcher (or, for a
/// listing, by its timeout).
pub(super) struct CancelOnDrop {
    /// Taken once the answer arrived: nothing to cancel.
    pub(super) peer: Option<Peer<RoleClient>>,
    pub(super) id: RequestId,
    pub(super) reason: &'static str,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let params =
            CancelledNotificationParam::new(Some(self.id.clone()), Some(self.reason.to_owned()));
        // Sending waits for the session's queue; a gone session answers at once with an error.
        runtime.spawn(async move {
            let _ =
                tokio::time::timeout(Duration::from_secs(5), peer.notify_cancelled(params)).await;
        });
    }
}
