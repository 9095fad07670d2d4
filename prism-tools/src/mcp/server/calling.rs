//! `tools/call`: one MCP request as one dispatcher call, with the client's progress token,
//! cancellation and approval answers carried across.

use std::future::{Future, ready};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures_util::FutureExt;
use futures_util::future::{Either, Fuse, FusedFuture};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitationCapability, ProgressNotificationParam,
    ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use super::McpServer;
use super::approval::{Gate, Held, Interrupted, approves, question};
use super::http::StreamClosed;
use super::progress::ProgressRelay;
use super::result::to_call_tool_result;
use super::served::ServedRequest;
use crate::call::{BlockReason, ErrorCode, ErrorInfo, ToolCall, ToolOutcome, ToolResult};
use crate::context::{CancellationToken, ToolExecutionContext};
use crate::definition::ToolDefinition;
use crate::dispatch::PlannedCall;
use crate::redact::cut_marked;

impl McpServer {
    /// Answers one `tools/call`.
    ///
    /// Everything made from the request is made before the future is, and the pipeline's own
    /// future is boxed apart (in [`run`](Self::run)): rmcp moves the returned future several
    /// times and allocates it once per call, so it stays small (a few hundred bytes, within the
    /// allocator's per-thread cache) whatever the pipeline holds.
    ///
    /// `arguments`, when given, are the call's arguments in place of the request's own: those of
    /// a call whose arguments are no object (see [`unread_call`]).
    pub(super) fn call(
        &self,
        request: CallToolRequestParams,
        arguments: Option<Value>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, McpError>> + Send + '_ {
        let running = match self.begin(request, arguments, context) {
            Ok(running) => running,
            Err(error) => return Either::Left(ready(Err(error))),
        };
        let served = running.served.clone();
        // `then` rather than an `async` block: a block would keep a second copy of the running
        // call beside the one `run`'s future holds.
        Either::Right(self.run(running).then(move |outcome| match outcome {
            Ok(result) => Either::Left(ready(answer(result))),
            Err(Interrupted::Tripwire(tripwire)) => {
                Either::Left(ready(answer(tripwire.into_result())))
            }
            // Boxed: the approval path (an elicitation, a second dispatch) is rare and large.
            Err(Interrupted::Held(held)) => {
                Either::Right(Box::pin(
                    async move { self.ask_approval(*held, &served).await },
                ))
            }
        }))
    }

    /// The call a request asks for, planned and ready to run.
    fn begin(
        &self,
        request: CallToolRequestParams,
        arguments: Option<Value>,
        context: RequestContext<RoleServer>,
    ) -> Result<Running, McpError> {
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
        let arguments =
            arguments.unwrap_or_else(|| Value::Object(request.arguments.unwrap_or_default()));
        let call = ToolCall::new(id, request.name.into_owned(), arguments);
        let planned = shared.dispatcher.plan(call);
        Ok(self.prepare(planned, gate, ServedRequest::new(context)))
    }

    /// `planned` with what runs around it: its own cancellation token under the server's, the
    /// request's scope, and a progress relay when the client asked for progress from a tool
    /// that can report it.
    fn prepare(&self, planned: PlannedCall, gate: Gate, served: ServedRequest) -> Running {
        let shared = &self.shared;
        let (reports_progress, effectful) = {
            let snapshot = shared.dispatcher.registry().borrow_snapshot();
            let tool = snapshot.get(&planned.call.name);
            (
                // Only a tool that reads its context can report progress.
                tool.is_some_and(ToolDefinition::reads_context),
                tool.is_some_and(|tool| tool.effect().is_some()),
            )
        };
        let context = served.context();
        let mut ctx = shared.context.with_child_cancellation();
        if let Some(scope) = self.scope_for(context) {
            ctx = ctx.with_scope(scope);
        }
        let mut relay = None;
        if reports_progress && let Some(progress_token) = context.meta.get_progress_token() {
            let (sender, receiver) = ProgressRelay::new(progress_token, shared.dispatcher.limits());
            ctx = ctx.with_progress_listener(move |update| {
                // Never waits: a client that reads slowly loses updates, not the tool's time.
                let _ = sender.try_send(update.clone());
            });
            relay = Some(receiver);
        }
        Running {
            planned,
            gate,
            served,
            ctx,
            relay,
            effectful,
        }
    }

    /// Runs a prepared call through the pipeline, relaying progress and cancellation.
    ///
    /// Not an `async fn`, which would keep a second copy of `running` in its future.
    #[expect(
        clippy::manual_async_fn,
        reason = "an async fn would copy the running call once more"
    )]
    fn run(
        &self,
        running: Running,
    ) -> impl Future<Output = Result<ToolResult, Interrupted>> + Send + '_ {
        async move {
            if running.effectful {
                // Boxed: it spawns a task anyway, and its state would double this future's size.
                return Box::pin(self.run_detached(running)).await;
            }
            // The fields are used in place, for the same reason.
            let pipeline = Box::pin(self.shared.dispatcher.dispatch_planned(
                running.planned,
                &running.ctx,
                Some(&running.gate),
            ));
            let served = &running.served;
            let work = served.clone().scope(pipeline);
            drive(
                work,
                running.relay,
                served,
                Watched::of(served.context()),
                running.ctx.cancellation(),
            )
            .await
        }
    }

    /// A call with an effect runs to its end on its own task: a dropped stream must not leave
    /// its effect unknown. Only an explicit `notifications/cancelled` stops it.
    async fn run_detached(&self, running: Running) -> Result<ToolResult, Interrupted> {
        let served = &running.served;
        let request_id = &served.context().id;
        let token = running.ctx.cancellation().clone();
        self.session.register(request_id, &token);
        let dispatcher = self.shared.dispatcher.clone();
        let in_scope = served.clone();
        let (planned, ctx, gate) = (running.planned, running.ctx, running.gate);
        // Counted until the task ends, outcome recorded: the server's shutdown waits for it.
        let counted = self.shared.detached.start();
        let task = tokio::spawn(async move {
            let _counted = counted;
            in_scope
                .scope(dispatcher.dispatch_planned(planned, &ctx, Some(&gate)))
                .await
        });
        let joined = drive(task, running.relay, served, Watched::NOTHING, &token).await;
        self.session.finish(request_id, &token);
        joined.unwrap_or_else(|error| {
            // Not the join error's text: a panic's message could quote anything, a secret
            // included, and the pipeline that redacts was what failed.
            let how = if error.is_panic() {
                "panicked"
            } else {
                "was cancelled"
            };
            let error = ErrorInfo::new(
                ErrorCode::ToolError,
                format!("The call's task {how} before it gave a result"),
            );
            Ok(ToolResult::error("mcp".into(), "unknown", error))
        })
    }

    /// A call that waits for approval: ask the person the way this client allows.
    async fn ask_approval(
        &self,
        held: Held,
        served: &ServedRequest,
    ) -> Result<CallToolResponse, McpError> {
        let Held {
            call: held,
            tool_version,
        } = held;
        let shared = &self.shared;
        let context = served.context();
        let redactor = shared.dispatcher.redactor();
        let current = speaks_2026_07_28(context);
        let mut unasked = "this client cannot be asked (it does not support elicitation forms)";
        if current {
            let can_elicit = context.client_capabilities().is_some_and(|capabilities| {
                capabilities.elicitation.as_ref().is_some_and(shows_forms)
            });
            if can_elicit {
                match shared.approvals.ask(&held, &tool_version, redactor) {
                    Some(asked) => return Ok(CallToolResponse::InputRequired(asked)),
                    None => unasked = "this server has no key to seal the question with",
                }
            }
        } else if context.peer.peer_info().is_some_and(|info| {
            info.capabilities
                .elicitation
                .as_ref()
                .is_some_and(shows_forms)
        }) {
            let ttl = shared.approvals.ttl();
            // The person has as long as a sealed question lives; a client that cancels the call
            // meanwhile (or goes away, or closes the call's HTTP stream) stops it from running.
            let ended = Watched::of(context);
            let asked = tokio::select! {
                biased;
                () = ended.fired() => None,
                asked = tokio::time::timeout(
                    ttl,
                    context.peer.create_elicitation(question(&held, redactor)),
                ) => Some(asked),
            };
            let refusal = match asked.filter(|_| !ended.is_cancelled()) {
                None => format!(
                    "The call of {} was cancelled while a person was asked to approve it",
                    held.name
                ),
                Some(Err(_)) => format!(
                    "No answer to the approval of {} came within {ttl:?}",
                    held.name
                ),
                Some(Ok(Ok(elicited)))
                    if serde_json::to_value(&elicited).is_ok_and(|a| approves(&a)) =>
                {
                    let gate = Gate::approved(&held, tool_version);
                    let planned = PlannedCall {
                        call: held,
                        middleware_failure: None,
                    };
                    let running = self.prepare(planned, gate, served.clone());
                    return match self.run(running).await {
                        Ok(result) => answer(result),
                        Err(Interrupted::Tripwire(tripwire)) => answer(tripwire.into_result()),
                        // The gate lets an approved call through; it never holds one.
                        Err(Interrupted::Held(again)) => answer(shared.dispatcher.settle_refused(
                            &again.call,
                            "The approved call was held again".into(),
                            &shared.context,
                        )),
                    };
                }
                Some(Ok(Ok(_))) => format!(
                    "A person refused to let {} run with these arguments",
                    held.name
                ),
                Some(Ok(Err(error))) => {
                    // The client's text, of any length: redacted, then cut.
                    let mut why = redactor.redact_str(&error.to_string()).into_owned();
                    cut_marked(&mut why, QUOTED_ERROR_BYTES);
                    format!("The approval for {} could not be asked: {why}", held.name)
                }
            };
            return answer(
                shared
                    .dispatcher
                    .settle_refused(&held, refusal, &shared.context),
            );
        }
        let pending = format!(
            "Approval pending: {} needs a person's approval before it runs, and {unasked}",
            held.name
        );
        answer(
            shared
                .dispatcher
                .settle_refused(&held, pending, &shared.context),
        )
    }
}

/// Whether the client of `context` speaks the 2026-07-28 revision (or later), rather than the
/// handshake era.
pub(super) fn speaks_2026_07_28(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// A `tools/call` whose parameters rmcp could not read as a call's, which it hands over as a
/// request of an unknown method: its parameters but `arguments`, and those arguments. The
/// arguments may be anything (a model that wrote an object as a JSON string, say): the dispatch
/// refuses what is no object, with the reason, as it refuses any invalid call.
///
/// # Errors
///
/// A JSON-RPC `-32602` when the parameters are no object or do not name a tool. The message
/// never quotes them: they are the client's text, and may carry anything.
pub(super) fn unread_call(
    params: Option<Value>,
) -> Result<(CallToolRequestParams, Value), McpError> {
    let Some(Value::Object(mut params)) = params else {
        return Err(McpError::invalid_params(
            "The parameters of tools/call must be an object",
            None,
        ));
    };
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(arguments) => arguments,
    };
    match serde_json::from_value(Value::Object(params)) {
        Ok(request) => Ok((request, arguments)),
        Err(_) => Err(McpError::invalid_params(
            "The parameters of tools/call must name the tool, as a string",
            None,
        )),
    }
}

/// How much of a client's error the refusal of an approval it could not be asked quotes.
const QUOTED_ERROR_BYTES: usize = 200;

/// Whether a client with this elicitation capability can show a form: it says `form`, or, as
/// clients did before URL elicitation, names no mode at all.
fn shows_forms(elicitation: &ElicitationCapability) -> bool {
    elicitation.form.is_some() || elicitation.url.is_none()
}

/// One call, made from its request and ready to run.
struct Running {
    planned: PlannedCall,
    gate: Gate,
    served: ServedRequest,
    /// The server's context with the call's own cancellation token (fired when the client
    /// cancels), the request's scope and progress relay.
    ctx: ToolExecutionContext,
    relay: Option<ProgressRelay>,
    /// A tool with an effect runs on its own task (see `run_detached`).
    effectful: bool,
}

/// A result as the client gets it: an unknown tool is a JSON-RPC `-32602` error, anything else a
/// `CallToolResult`.
fn answer(result: ToolResult) -> Result<CallToolResponse, McpError> {
    match result.outcome {
        ToolOutcome::Blocked(error) if error.reason == Some(BlockReason::UnknownTool) => {
            Err(McpError::invalid_params(error.message, None))
        }
        _ => Ok(CallToolResponse::Complete(to_call_tool_result(result))),
    }
}

/// What stops a call early: the client's cancellation of the request, and the closing of the
/// HTTP stream its answer was to come on (see `http.rs`). Either may be missing: a call of a
/// tool with an effect watches neither, and only [`serve_http`](super::serve_http) closes
/// streams.
#[derive(Clone, Copy)]
struct Watched<'a>([Option<&'a tokio_util::sync::CancellationToken>; 2]);

impl<'a> Watched<'a> {
    /// Watches nothing: the call runs to its end.
    const NOTHING: Self = Watched([None, None]);

    /// The request's cancellation and its stream's closing.
    fn of(context: &'a RequestContext<RoleServer>) -> Self {
        let closed = context
            .extensions
            .get::<::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<StreamClosed>())
            .map(|closed| &closed.0);
        Watched([Some(&context.ct), closed])
    }

    fn is_nothing(self) -> bool {
        self.0.iter().all(Option::is_none)
    }

    fn is_cancelled(self) -> bool {
        self.0.iter().flatten().any(|token| token.is_cancelled())
    }

    /// Returns once either fires; never when nothing is watched.
    async fn fired(self) {
        let [first, second] = self.0;
        tokio::select! {
            () = token_fired(first) => {}
            () = token_fired(second) => {}
        }
    }
}

/// Awaits `work`, sending its progress as it comes, and firing `token` when any of `cancelled`
/// does.
async fn drive<F: Future>(
    work: F,
    relay: Option<ProgressRelay>,
    served: &ServedRequest,
    cancelled: Watched<'_>,
    token: &CancellationToken,
) -> F::Output {
    let work = pin!(work);
    match relay {
        None => until_cancelled(work, cancelled, token).await,
        // Boxed: relaying is rare (a tool that reports, a client that asked) and its state large.
        Some(relay) => {
            Box::pin(until_cancelled(
                relaying(work, relay, served),
                cancelled,
                token,
            ))
            .await
        }
    }
}

/// Awaits `work`, firing `token` if one of `cancelled` fires first (the work then ends as
/// cancelled).
async fn until_cancelled<F: Future>(
    work: F,
    cancelled: Watched<'_>,
    token: &CancellationToken,
) -> F::Output {
    let mut work = pin!(work);
    if cancelled.is_nothing() {
        return work.await;
    }
    // A request cancelled before its call was first polled: the work's first poll could run
    // a synchronous tool to its end, for a client that gets no answer once it cancelled.
    if cancelled.is_cancelled() {
        token.cancel();
        return work.await;
    }
    tokio::select! {
        biased;
        output = &mut work => return output,
        () = cancelled.fired() => token.cancel(),
    }
    work.await
}

/// Returns once `token` fires; never without one.
async fn token_fired(token: Option<&tokio_util::sync::CancellationToken>) {
    match token {
        Some(token) => token.cancelled().await,
        None => std::future::pending().await,
    }
}

/// Awaits `work`, sending each progress notification as it comes and what is left at the end.
///
/// One notification is in flight at a time, and `work` is polled while it is: a client that
/// reads slowly delays its notifications (and, once the queue is full, loses some), never the
/// tool.
async fn relaying<F: Future>(
    mut work: Pin<&mut F>,
    mut relay: ProgressRelay,
    served: &ServedRequest,
) -> F::Output {
    let mut sending = pin!(Fuse::terminated());
    loop {
        tokio::select! {
            biased;
            output = &mut work => {
                if !sending.is_terminated() {
                    sending.as_mut().await;
                }
                for notification in relay.finish() {
                    send(served, notification).await;
                }
                return output;
            }
            () = &mut sending, if !sending.is_terminated() => {}
            notification = relay.next(), if sending.is_terminated() => {
                sending.set(send(served, notification).fuse());
            }
        }
    }
}

async fn send(served: &ServedRequest, notification: ProgressNotificationParam) {
    if let Err(error) = served.peer().notify_progress(notification).await {
        tracing::debug!(target: "prism_tools", %error, "a progress notification could not be sent");
    }
}
