//! `tools/call`: one MCP request as one dispatcher call, with the client's progress token,
//! cancellation and approval answers carried across.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{ElicitationMode, RequestContext, RoleServer};
use serde_json::Value;

use super::McpServer;
use super::approval::{Gate, Interrupted, approves, question};
use super::progress::ProgressRelay;
use super::result::to_call_tool_result;
use super::served::ServedRequest;
use crate::call::{BlockReason, ErrorCode, ErrorInfo, ToolCall, ToolResult};
use crate::context::CancellationToken;
use crate::definition::ToolDefinition;
use crate::dispatch::PlannedCall;

impl McpServer {
    /// Answers one `tools/call`.
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let shared = &self.shared;
        let gate = match &request.request_state {
            None => Gate::Ask,
            Some(state) => {
                let answered = shared
                    .approvals
                    .answer(state, request.input_responses.as_ref())
                    .map_err(|message| McpError::invalid_params(message, None))?;
                Gate::Sealed {
                    approvals: Arc::clone(&shared.approvals),
                    answered,
                }
            }
        };
        let n = shared.calls.fetch_add(1, Ordering::Relaxed);
        let id = [shared.call_prefix.as_str(), itoa::Buffer::new().format(n)].concat();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = ToolCall::new(id, request.name.into_owned(), arguments);
        let planned = shared.dispatcher.plan(call);
        let traits = self.traits(&planned.call.name);
        let served = ServedRequest::new(context);
        match self.dispatch(planned, gate, &served, traits).await {
            Ok(result) => answer(&result),
            Err(Interrupted::Tripwire(tripwire)) => answer(tripwire.result()),
            // Boxed: the approval path's futures (an elicitation, a second dispatch) would
            // otherwise make every call's future, which rmcp moves several times, that much larger.
            Err(Interrupted::Held(held)) => Box::pin(self.ask_approval(*held, &served)).await,
        }
    }

    /// What the call of the tool called `name` needs around it, looked up once.
    fn traits(&self, name: &str) -> ToolTraits {
        let snapshot = self.shared.dispatcher.registry().borrow_snapshot();
        let tool = snapshot.get(name);
        ToolTraits {
            // Only a tool that reads its context can report progress.
            reports_progress: tool.is_some_and(ToolDefinition::reads_context),
            effectful: tool.is_some_and(|tool| tool.effect().is_some()),
        }
    }

    /// Runs `planned` through the pipeline, relaying progress and cancellation.
    async fn dispatch(
        &self,
        planned: PlannedCall,
        gate: Gate,
        served: &ServedRequest,
        traits: ToolTraits,
    ) -> Result<ToolResult, Interrupted> {
        let shared = &self.shared;
        let context = served.context();
        let token = shared.context.cancellation().child_token();
        let mut ctx = shared.context.clone().with_cancellation(token.clone());
        if let Some(scope) = self.scope_for(context) {
            let scope = match shared.context.scope() {
                Some(parent) => scope.within(parent),
                None => scope,
            };
            ctx = ctx.with_scope(scope);
        }
        let mut relay = None;
        if traits.reports_progress
            && let Some(progress_token) = context.meta.get_progress_token()
        {
            let (sender, receiver) = ProgressRelay::new(progress_token, shared.dispatcher.limits());
            ctx = ctx.with_progress_listener(move |update| {
                // Never waits: a client that reads slowly loses updates, not the tool's time.
                let _ = sender.try_send(update.clone());
            });
            relay = Some(receiver);
        }
        let dispatcher = shared.dispatcher.clone();
        let in_scope = served.clone();
        let work = async move {
            in_scope
                .scope(dispatcher.dispatch_planned(planned, &ctx, Some(&gate)))
                .await
        };
        if !traits.effectful {
            return drive(pin!(work), relay, served, Some(&context.ct), &token).await;
        }
        // A call with an effect runs to its end on its own task: a dropped stream must not leave
        // its effect unknown. Only an explicit `notifications/cancelled` stops it.
        let running = &self.session.running;
        lock(running).insert(context.id.clone(), token.clone());
        let task = tokio::spawn(work);
        let joined = drive(pin!(task), relay, served, None, &token).await;
        lock(running).remove(&context.id);
        joined.unwrap_or_else(|error| {
            let error = ErrorInfo::new(
                ErrorCode::ToolError,
                format!("The call's task ended without a result: {error}"),
            );
            Ok(ToolResult::error("mcp".into(), "unknown", error))
        })
    }

    /// A call that waits for approval: ask the person the way this client allows.
    async fn ask_approval(
        &self,
        held: ToolCall,
        served: &ServedRequest,
    ) -> Result<CallToolResponse, McpError> {
        let shared = &self.shared;
        let context = served.context();
        let redactor = shared.dispatcher.redactor();
        let current = context
            .protocol_version()
            .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if current {
            let can_elicit = context
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.elicitation.is_some());
            if can_elicit {
                return Ok(CallToolResponse::InputRequired(
                    shared.approvals.ask(&held, redactor),
                ));
            }
        } else if context
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            let asked = context
                .peer
                .create_elicitation(question(&held, redactor))
                .await;
            let refusal = match asked {
                Ok(elicited) if serde_json::to_value(&elicited).is_ok_and(|a| approves(&a)) => {
                    let gate = Gate::approved(&held);
                    let planned = PlannedCall {
                        call: held,
                        middleware_failure: None,
                    };
                    let traits = self.traits(&planned.call.name);
                    return match self.dispatch(planned, gate, served, traits).await {
                        Ok(result) => answer(&result),
                        Err(Interrupted::Tripwire(tripwire)) => answer(tripwire.result()),
                        // The gate lets an approved call through; it never holds one.
                        Err(Interrupted::Held(call)) => answer(&shared.dispatcher.settle_refused(
                            &call,
                            "The approved call was held again".into(),
                            &shared.context,
                        )),
                    };
                }
                Ok(_) => format!(
                    "A person refused to let {} run with these arguments",
                    held.name
                ),
                Err(error) => format!("The approval for {} could not be asked: {error}", held.name),
            };
            return answer(
                &shared
                    .dispatcher
                    .settle_refused(&held, refusal, &shared.context),
            );
        }
        let pending = format!(
            "Approval pending: {} needs a person's approval before it runs, and this client cannot \
             be asked (it does not support elicitation)",
            held.name
        );
        answer(
            &shared
                .dispatcher
                .settle_refused(&held, pending, &shared.context),
        )
    }
}

/// What a call of one tool needs around it.
struct ToolTraits {
    /// The client's progress is relayed only for a tool that can report it.
    reports_progress: bool,
    /// A tool with an effect runs on its own task (see `dispatch`).
    effectful: bool,
}

/// A result as the client gets it: an unknown tool is a JSON-RPC `-32602` error, anything else a
/// `CallToolResult`.
fn answer(result: &ToolResult) -> Result<CallToolResponse, McpError> {
    if result.block_reason() == Some(BlockReason::UnknownTool) {
        let message = result
            .error_info()
            .map_or_else(|| "Unknown tool".to_owned(), |error| error.message.clone());
        return Err(McpError::invalid_params(message, None));
    }
    Ok(CallToolResponse::Complete(to_call_tool_result(result)))
}

/// Awaits `work`, sending its progress as it comes, and firing `token` when `cancelled` does.
///
/// `work` is pinned by the caller, where it was made, so this future holds a reference to it
/// rather than a copy.
async fn drive<F: Future>(
    mut work: Pin<&mut F>,
    mut relay: Option<ProgressRelay>,
    served: &ServedRequest,
    cancelled: Option<&tokio_util::sync::CancellationToken>,
    token: &CancellationToken,
) -> F::Output {
    let mut fired = cancelled.is_none();
    loop {
        tokio::select! {
            biased;
            output = &mut work => {
                for notification in relay.map(ProgressRelay::finish).unwrap_or_default() {
                    send(served, notification).await;
                }
                return output;
            }
            notification = next(relay.as_mut()) => send(served, notification).await,
            () = fired_when(cancelled), if !fired => {
                token.cancel();
                fired = true;
            }
        }
    }
}

/// Boxed: sending is a large future, and most calls send nothing.
async fn send(served: &ServedRequest, notification: ProgressNotificationParam) {
    if let Err(error) = Box::pin(served.peer().notify_progress(notification)).await {
        tracing::debug!(target: "prism_tools", %error, "a progress notification could not be sent");
    }
}

async fn next(relay: Option<&mut ProgressRelay>) -> ProgressNotificationParam {
    match relay {
        Some(relay) => relay.next().await,
        None => std::future::pending().await,
    }
}

async fn fired_when(cancelled: Option<&tokio_util::sync::CancellationToken>) {
    match cancelled {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}
