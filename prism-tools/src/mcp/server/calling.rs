//! `tools/call`: one MCP request as one dispatcher call, with the client's progress token,
//! cancellation and approval answers carried across.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ProtocolVersion};
use rmcp::service::{ElicitationMode, RequestContext, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;

use super::McpServer;
use super::approval::{Gate, Interrupted, approves, question};
use super::progress::ProgressRelay;
use super::result::to_call_tool_result;
use super::served::ServedRequest;
use crate::call::{BlockReason, ErrorCode, ErrorInfo, ToolCall, ToolResult};
use crate::context::{CancellationToken, ProgressUpdate};
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
        let id = format!("mcp-{}-{n}", shared.call_prefix);
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = ToolCall::new(id, request.name.into_owned(), arguments);
        let planned = shared.dispatcher.plan(call);
        match self.dispatch(planned, gate, &context).await {
            Ok(result) => answer(&result),
            Err(Interrupted::Tripwire(tripwire)) => answer(tripwire.result()),
            Err(Interrupted::Held(held)) => self.ask_approval(*held, &context).await,
        }
    }

    /// Runs `planned` through the pipeline, relaying progress and cancellation.
    async fn dispatch(
        &self,
        planned: PlannedCall,
        gate: Gate,
        context: &RequestContext<RoleServer>,
    ) -> Result<ToolResult, Interrupted> {
        let shared = &self.shared;
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
        if let Some(progress_token) = context.meta.get_progress_token() {
            let (queue, updates, sender) = ProgressRelay::new(context.peer.clone(), progress_token);
            ctx = ctx.with_progress_listener(move |update| {
                // Never waits: a client that reads slowly loses updates, not the tool's time.
                let _ = queue.try_send(update.clone());
            });
            relay = Some((updates, sender));
        }
        let served = ServedRequest {
            peer: context.peer.clone(),
            meta: context.meta.clone(),
        };
        let dispatcher = shared.dispatcher.clone();
        let effectful = dispatcher
            .registry()
            .get(&planned.call.name)
            .is_some_and(|tool| tool.effect().is_some());
        let work = async move {
            served
                .scope(dispatcher.dispatch_planned(planned, &ctx, Some(&gate)))
                .await
        };
        if !effectful {
            return drive(work, relay, Some(&context.ct), &token).await;
        }
        // A call with an effect runs to its end on its own task: a dropped stream must not leave
        // its effect unknown. Only an explicit `notifications/cancelled` stops it.
        let running = &self.session.running;
        lock(running).insert(context.id.clone(), token.clone());
        let task = tokio::spawn(work);
        let joined = drive(task, relay, None, &token).await;
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
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let shared = &self.shared;
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
                    return match self.dispatch(planned, gate, context).await {
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
async fn drive<F: Future>(
    work: F,
    relay: Option<(mpsc::Receiver<ProgressUpdate>, ProgressRelay)>,
    cancelled: Option<&tokio_util::sync::CancellationToken>,
    token: &CancellationToken,
) -> F::Output {
    let mut work = pin!(work);
    let (mut updates, mut relay) = relay.unzip();
    let mut fired = cancelled.is_none();
    loop {
        tokio::select! {
            biased;
            output = &mut work => {
                if let (Some(updates), Some(relay)) = (updates.as_mut(), relay.as_mut()) {
                    relay.flush(updates).await;
                }
                return output;
            }
            Some(update) = next(updates.as_mut()) => {
                if let Some(relay) = relay.as_mut() {
                    relay.send(update).await;
                }
            }
            () = fired_when(cancelled), if !fired => {
                token.cancel();
                fired = true;
            }
        }
    }
}

async fn next(updates: Option<&mut mpsc::Receiver<ProgressUpdate>>) -> Option<ProgressUpdate> {
    match updates {
        Some(updates) => updates.recv().await,
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
