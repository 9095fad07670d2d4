//! The dispatcher: one tool call through a fixed pipeline of guards, the tool, and the observers.
//!
//! `Dispatcher::run_pipeline` below is the whole pipeline behind [`Dispatcher::dispatch`],
//! written as one function that reads top to bottom in execution order. Every path out of it
//! produces exactly one [`ToolResult`] for the call id, and every refusal happens before the
//! tool's body is awaited.

mod approval_gate;
mod builder;
mod effect_gate;
mod events;
mod execute;
mod ledger;
mod observe;
mod prepare;
mod register;
mod span;
mod tripwire;

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;

use crate::call::{BlockReason, ErrorCode, ErrorInfo, ToolCall, ToolResult, blocks, json_kind};
use crate::clock::{Clock, Millis, now_or_system};
use crate::context::ToolExecutionContext;
use crate::definition::Prepared;
use crate::effects::{EffectKeySecret, EffectStore};
use crate::error::{Refusal, ToolError};
use crate::filter::CompiledFilters;
use crate::guard::{
    ArgumentValidator, BeforeExecute, CallRewrite, Guardrail, GuardrailDecision, PermissionPolicy,
    ResultRewrite, ToolMiddleware, TrustPolicy, Verdict,
};
use crate::limits::{Exceeded, Limits, check_output, check_value, drop_deep};
use crate::panic::{DropGuarded, guarded, guarded_future};
use crate::progress::progress_queue;
use crate::redact::SecretRedactor;
use crate::registry::{MissingParameterSchema, ToolRegistry};
use crate::scope::ToolScope;

pub(crate) use approval_gate::{Approval, ApprovalGate};
pub use builder::{
    BeforeExecuteAllowed, DispatchBuilder, EffectsAllowed, FilterAllowed, GuardrailsAllowed,
    MiddlewareAllowed, PermissionAllowed, PermissionGiven, SecureBuildError, SecureDispatcher,
    TrustAllowed, TrustGiven, ValidateAllowed, ValidatorGiven, stage,
};
pub use events::{CollectingSink, EventSink, ToolEvent, ToolEventKind, event_fn};
pub use ledger::{
    InMemoryLedger, LedgerError, OwnershipScope, RecordStatus, RunLedger, ToolCallRecord,
};
pub use prepare::BuildError;
pub use register::RegisterError;
pub use tripwire::Tripwire;

use effect_gate::{EffectGate, claim_effect, record_effect, release_effect};
use execute::{Executed, execute, guard_body};
use observe::Observe;

/// Bound on guardrail and panic messages, and on the parser message quoted for unparsable
/// arguments, after redaction.
const MESSAGE_LIMIT: usize = 200;

/// Bound on a tool's error message and a guard's refusal, after redaction: a tool (a remote one
/// included) cannot fill results, events and rows with one.
const ERROR_MESSAGE_LIMIT: usize = 16 * 1024;

/// Bound on a custom error code, after redaction.
const ERROR_CODE_LIMIT: usize = 128;

/// Bound on a tool name as a call asked for it (reported when it reaches no tool, and in the
/// call's span), after redaction: twice the longest name MCP and the providers accept.
const NAME_LIMIT: usize = 256;

/// Everything the builder configured; shared by every clone of a [`Dispatcher`].
#[derive(Clone)]
pub(crate) struct Pipeline {
    pub(crate) registry: ToolRegistry,
    pub(crate) middleware: Vec<Arc<dyn ToolMiddleware>>,
    pub(crate) guardrails: Vec<Arc<dyn Guardrail>>,
    pub(crate) filters: CompiledFilters,
    pub(crate) trust: Vec<Arc<dyn TrustPolicy>>,
    pub(crate) permission: Vec<Arc<dyn PermissionPolicy>>,
    pub(crate) validators: Vec<Arc<dyn ArgumentValidator>>,
    pub(crate) before_execute: Vec<Arc<dyn BeforeExecute>>,
    pub(crate) effects: Option<Arc<dyn EffectStore>>,
    pub(crate) effect_key_secret: Option<EffectKeySecret>,
    pub(crate) effect_owner: Arc<str>,
    pub(crate) events: Vec<Arc<dyn EventSink>>,
    pub(crate) ledger: Option<Arc<dyn RunLedger>>,
    /// Shared with the contexts of the calls whose tools read theirs.
    pub(crate) redactor: Arc<SecretRedactor>,
    pub(crate) ownership: Option<Arc<OwnershipScope>>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) limits: Limits,
    pub(crate) require_schema: bool,
}

impl Pipeline {
    /// The configured clock's time (the system clock's if it panics).
    pub(crate) fn now(&self) -> Millis {
        now_or_system(&*self.clock)
    }
}

/// Runs tool calls through the pipeline. Cheap to clone, `Send + Sync`, dispatches through `&self`.
///
/// ```
/// use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
/// use serde_json::{json, Value};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let registry = ToolRegistry::from_iter([ToolDefinition::builder("echo")
///     .run_sync(|args: &Value, _| Ok(args.clone()))]);
/// let dispatcher = Dispatcher::builder(registry).build();
///
/// let call = ToolCall::new("call_1", "echo", json!({"text": "hi"}));
/// let result = dispatcher.dispatch(call, &ToolExecutionContext::new()).await.unwrap();
/// assert_eq!(result.as_value(), Some(&json!({"text": "hi"})));
///
/// let result = dispatcher
///     .dispatch(ToolCall::new("call_2", "nope", json!({})), &ToolExecutionContext::new())
///     .await
///     .unwrap();
/// assert_eq!(result.error_info().unwrap().message, "Unknown tool: nope");
/// # });
/// ```
#[derive(Clone)]
pub struct Dispatcher {
    pipeline: Arc<Pipeline>,
}

impl fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &*self.pipeline;
        f.debug_struct("Dispatcher")
            .field("tools", &p.registry.len())
            .field("middleware", &p.middleware.len())
            .field("guardrails", &p.guardrails.len())
            .field("trust", &p.trust.len())
            .field("permission", &p.permission.len())
            .field("validators", &p.validators.len())
            .field("before_execute", &p.before_execute.len())
            .field("effects", &p.effects.is_some())
            .field("events", &p.events.len())
            .field("ledger", &p.ledger.is_some())
            .field("redactor", &p.redactor)
            .field("limits", &p.limits)
            .field("require_schema", &p.require_schema)
            .finish()
    }
}

impl Dispatcher {
    /// Starts a builder over `registry`.
    pub fn builder(registry: ToolRegistry) -> DispatchBuilder {
        DispatchBuilder::new(registry)
    }

    pub(crate) fn from_pipeline(pipeline: Pipeline) -> Self {
        Self {
            pipeline: Arc::new(pipeline),
        }
    }

    /// The registry this dispatcher looks tools up in.
    pub fn registry(&self) -> &ToolRegistry {
        &self.pipeline.registry
    }

    /// The redactor applied to everything the dispatcher emits.
    pub fn redactor(&self) -> &SecretRedactor {
        &self.pipeline.redactor
    }

    /// The limits every call is held to (the MCP server sizes its progress relay by them).
    #[cfg(feature = "mcp")]
    pub(crate) fn limits(&self) -> &Limits {
        &self.pipeline.limits
    }

    /// The same dispatcher (same registry, guards and observers) whose redactor also knows
    /// `secrets`.
    pub(crate) fn with_secrets(&self, secrets: &[String]) -> Self {
        let mut pipeline = (*self.pipeline).clone();
        pipeline.redactor = Arc::new(pipeline.redactor.with_secrets(secrets));
        Self::from_pipeline(pipeline)
    }

    /// True when the builder's filters let `name` through.
    pub(crate) fn filters_allow(&self, name: &str) -> bool {
        self.pipeline.filters.allows(name)
    }

    /// Runs one call. Always yields exactly one result for `call.id`: `Ok` for values, blocked
    /// calls and tool errors alike; `Err(Tripwire)` only when a guardrail trips, carrying the
    /// blocked result still owed.
    ///
    /// Dropping the returned future while the tool runs drops the tool's body too: its `started`
    /// row then has no terminal row, and an effect claimed for it reads `unknown` once its lease
    /// expires. Use the context's cancellation token to stop a call cleanly instead.
    pub fn dispatch<'a>(
        &'a self,
        call: ToolCall,
        ctx: &'a ToolExecutionContext,
    ) -> impl Future<Output = Result<ToolResult, Tripwire>> + Send + 'a {
        // Not an `async fn` wrapping the pipeline's future: one future, moved once, not two.
        self.run_pipeline(call, Step1::Pending, None, ctx)
    }

    /// Step 1 alone: runs `tool_call` middleware over `call`. The run layer plans a turn's batch
    /// on what middleware produced (a rename into an exclusive tool makes the turn sequential),
    /// then hands each planned call to [`dispatch_planned`](Self::dispatch_planned), which
    /// continues at step 2 without running middleware twice.
    pub(crate) fn plan(&self, mut call: ToolCall) -> PlannedCall {
        let middleware_failure = self.run_call_middleware(&mut call);
        PlannedCall {
            call,
            middleware_failure,
        }
    }

    /// Step 1 in place: `tool_call` middleware may rewrite the name and arguments, never the id.
    /// A panicking middleware stops the chain; its failure is the call's error.
    fn run_call_middleware(&self, call: &mut ToolCall) -> Option<Box<ErrorInfo>> {
        let p = &*self.pipeline;
        for middleware in &p.middleware {
            let mut rewrite = CallRewrite {
                id: &call.id,
                name: &mut call.name,
                arguments: &mut call.arguments,
            };
            if let Err(panic) = guarded(|| middleware.on_tool_call(&mut rewrite)) {
                return Some(Box::new(panicked("tool_call middleware", &panic, p)));
            }
        }
        None
    }

    /// Steps 2 to 14 on a call that already went through [`plan`](Self::plan). With a `gate`,
    /// a call it holds ends as the gate's `H` instead of a result (see [`ApprovalGate`]).
    pub(crate) fn dispatch_planned<'a, H: From<Tripwire> + Send + 'a>(
        &'a self,
        planned: PlannedCall,
        ctx: &'a ToolExecutionContext,
        gate: Option<&'a dyn ApprovalGate<H>>,
    ) -> impl Future<Output = Result<ToolResult, H>> + Send + 'a {
        let PlannedCall {
            call,
            middleware_failure,
        } = planned;
        self.run_pipeline(call, Step1::Done(middleware_failure), gate, ctx)
    }

    /// The pipeline, steps 1 to 14 (step 1 only for a call that was not planned yet).
    ///
    /// An `async` block rather than an `async fn`, and the call used in place, field by field:
    /// an `async fn` keeps a second copy of its arguments in its future, as does a local a value
    /// is moved into, and every byte of that future is copied each time the caller moves it.
    #[expect(
        clippy::manual_async_fn,
        reason = "an async fn would copy the call once more"
    )]
    fn run_pipeline<'a, H: From<Tripwire> + Send + 'a>(
        &'a self,
        mut call: ToolCall,
        step1: Step1,
        gate: Option<&'a dyn ApprovalGate<H>>,
        ctx: &'a ToolExecutionContext,
    ) -> impl Future<Output = Result<ToolResult, H>> + Send + 'a {
        async move {
            let p = &*self.pipeline;
            // 1. tool_call middleware: may rewrite the name and arguments, never the id.
            let middleware_failure = match step1 {
                Step1::Pending => self.run_call_middleware(&mut call),
                Step1::Done(failure) => failure,
            };
            let span = span::tool_span(&call, &p.redactor);
            let mut observe = Observe::new(p, call.id, ctx, span);
            let (name, arguments) = (&call.name, &call.arguments);
            if let Some(failure) = middleware_failure {
                return Ok(observe.error(requested_name(p, name), *failure));
            }

            // 2. Input guardrails, on what middleware produced, once it is within the size and
            //    depth limits: no guard ever walks arguments over them.
            if let Err(exceeded) = check_value(
                arguments,
                p.limits.max_argument_bytes,
                p.limits.max_argument_depth,
            ) {
                let name = requested_name(p, name);
                let message = match exceeded {
                    Exceeded::Bytes => format!(
                        "The arguments for tool {name} exceed {} bytes",
                        p.limits.max_argument_bytes
                    ),
                    Exceeded::Depth => format!(
                        "The arguments for tool {name} nest deeper than {} levels",
                        p.limits.max_argument_depth
                    ),
                };
                // Either bound may be the one found first: an over-large value can also be
                // too deep for the recursive destructor.
                drop_deep(std::mem::take(&mut call.arguments));
                return Ok(observe.blocked(name, BlockReason::InvalidArguments, message.into()));
            }
            if let Some(span) = observe.span() {
                span::record_arguments(span, arguments, &p.redactor);
            }
            if let Some((message, tripwire)) = guardrail_refusal(p, Side::Input, |guardrail| {
                guardrail.check_input(name, arguments)
            }) {
                let name = requested_name(p, name);
                let result = observe.blocked(name, BlockReason::GuardrailBlocked, message.into());
                return settle(result, tripwire);
            }

            // 3. Lookup: only registered tools exist, besides the one tool a run provides itself
            //    for a turn (search mode's `search_tools`), which only the run's scope can carry.
            //    Steps 3 to 8 borrow the tool (from the registry's snapshot, the run's pinned one
            //    or the scope) instead of copying its definition.
            let snapshot = p.registry.borrow_snapshot();
            let run_tool = ctx.scope().and_then(|scope| scope.run_tool(name));
            let tool = if let Some(tool) = run_tool {
                tool
            } else {
                let Some(live) = snapshot.get(name) else {
                    let name = requested_name(p, name);
                    let message = format!("Unknown tool: {name}");
                    return Ok(observe.blocked(name, BlockReason::UnknownTool, message.into()));
                };
                match ctx.scope().and_then(ToolScope::pinned_tools) {
                    None => live,
                    Some(pinned) => match pinned.get(name) {
                        Some(tool) => tool,
                        None => {
                            let message = format!(
                                "Tool denied: {name} was not among this run's tools when it started"
                            );
                            return Ok(observe.blocked(
                                Arc::clone(live.name_arc()),
                                BlockReason::ToolDenied,
                                message.into(),
                            ));
                        }
                    },
                }
            };
            let name = Arc::clone(tool.name_arc());

            // 4. Filters, then the run's scope (grant and this turn's visible set).
            if !p.filters.allows(&name) {
                let message = format!("Tool denied: {name} is not allowed here");
                return Ok(observe.blocked(name, BlockReason::ToolDenied, message.into()));
            }
            if let Some(scope) = ctx.scope()
                && !scope.allows(&name)
            {
                let message = format!("Tool denied: {name} is not granted to this run or turn");
                return Ok(observe.blocked(name, BlockReason::ToolDenied, message.into()));
            }

            // 5. Arguments must be a JSON object (their size and depth were checked at step 2).
            if let Some(parse_error) = &call.arguments_error {
                let refusal = Refusal {
                    code: Some(ErrorCode::InvalidJsonArguments),
                    message: format!(
                        "The arguments for tool {name} are not valid JSON: {}",
                        bounded(p, parse_error)
                    ),
                };
                return Ok(observe.blocked(name, BlockReason::InvalidArguments, refusal));
            }
            if !arguments.is_object() {
                let message = format!(
                    "The arguments for tool {name} must be a JSON object, not {}",
                    json_kind(arguments)
                );
                return Ok(observe.blocked(name, BlockReason::InvalidArguments, message.into()));
            }

            // 6. Trust, then permission. A guard answers now or after an await (a pending
            //    verdict); only a pending one costs an allocation and a suspension.
            for trust in &p.trust {
                let answer = decide!(p, ctx, "trust policy", trust.check(tool, ctx));
                if let Err(stop) = answer {
                    return Ok(stop.end(observe, name, BlockReason::PermissionDenied));
                }
            }
            for permission in &p.permission {
                let answer = decide!(
                    p,
                    ctx,
                    "permission policy",
                    permission.check(tool, arguments, ctx)
                );
                if let Err(stop) = answer {
                    return Ok(stop.end(observe, name, BlockReason::PermissionDenied));
                }
            }

            // 7. Validators (the dispatcher's, then the run's), then the handler decodes the
            //    arguments.
            if p.require_schema && !tool.declares_parameters() {
                let message = MissingParameterSchema(name.to_string()).to_string();
                return Ok(observe.blocked(name, BlockReason::ValidationFailed, message.into()));
            }
            let run_validators = ctx.scope().map_or(&[][..], ToolScope::validators);
            for validator in p.validators.iter().chain(run_validators) {
                let answer = decide!(p, ctx, "validator", validator.validate(tool, arguments));
                if let Err(stop) = answer {
                    return Ok(stop.end(observe, name, BlockReason::ValidationFailed));
                }
            }
            // A tool that never reads its context gets an empty one, and no progress channel.
            let (call_ctx, progress_rx) = if tool.reads_context() {
                let relayed = observe.is_watching() || ctx.progress_listener().is_some();
                let (tx, rx) = relayed.then(|| progress_queue(&p.limits)).unzip();
                (ctx.for_call(observe.id().clone(), tx, &p.redactor), rx)
            } else {
                (ToolExecutionContext::unread(), None)
            };
            // The body is pinned where it will run. Every return below drops it unpolled, its
            // destructor guarded, as does dropping this future.
            let body = pin!(
                match guarded(|| tool.handler().prepare(arguments, call_ctx)) {
                    Ok(Ok(Prepared::Ready(body))) => guard_body(body),
                    // An extractor that waits: awaited here, before any side effect.
                    Ok(Ok(Prepared::Pending(pending))) => match until_cancelled(ctx, pending).await
                    {
                        Some(Ok(Ok(body))) => guard_body(body),
                        Some(Ok(Err(refused))) => {
                            let (reason, refusal) = refused.into_parts();
                            return Ok(observe.blocked(name, reason, refusal));
                        }
                        Some(Err(panic)) => {
                            let what = format!("preparing tool {name}");
                            return Ok(observe.error(name, panicked(&what, &panic, p)));
                        }
                        None => return Ok(observe.error(name, ToolError::cancelled().into_info())),
                    },
                    Ok(Err(refused)) => {
                        let (reason, refusal) = refused.into_parts();
                        return Ok(observe.blocked(name, reason, refusal));
                    }
                    Err(panic) => {
                        // Decoding the arguments, or cloning a typed tool for this call.
                        let what = format!("preparing tool {name}");
                        return Ok(observe.error(name, panicked(&what, &panic, p)));
                    }
                }
            );

            // 8. The execution policy's last word before the side effect.
            for policy in &p.before_execute {
                let answer = decide!(
                    p,
                    ctx,
                    "execution policy",
                    policy.check(tool, arguments, ctx)
                );
                if let Err(stop) = answer {
                    return Ok(stop.end(observe, name, BlockReason::ExecutionDenied));
                }
            }
            if ctx.is_cancelled() {
                return Ok(observe.error(name, ToolError::cancelled().into_info()));
            }
            // The approval (a run's, an MCP server's), asked only now that every check let the
            // call through. A tool that requires one is refused where nobody can be asked.
            match gate {
                Some(gate) => match gate.check(observe.id(), tool, arguments) {
                    Approval::Proceed => {}
                    Approval::Wait => {
                        let held = ToolCall::new(observe.id().clone(), call.name, call.arguments);
                        return Err(gate.hold(held, tool));
                    }
                    Approval::Refuse(refusal) => {
                        return Ok(observe.blocked(name, BlockReason::PermissionDenied, refusal));
                    }
                },
                // Without a gate (a bare dispatch, or a tool's nested call inside a run) nobody
                // can be asked, whether the tool or the run's policy wants the approval.
                None if tool.requires_approval()
                    || ctx
                        .scope()
                        .is_some_and(|scope| scope.asks_approval(tool, arguments)) =>
                {
                    let refusal = no_one_to_ask(&name);
                    return Ok(observe.blocked(name, BlockReason::PermissionDenied, refusal));
                }
                None => {}
            }
            // The snapshot is never held across an await: a slow tool must not pin an old registry.
            let effect_policy = tool.effect().cloned();
            let untrusted = tool.untrusted_output();
            drop(snapshot);

            // 9. Effect claim: at most once, or say unknown.
            let effect = match claim_effect(p, &name, effect_policy.as_ref(), arguments) {
                None => EffectGate::Run(None),
                Some(claiming) => claiming.await,
            };
            let effect = match effect {
                // Cancelled while the store answered: the tool never starts, and its claim is
                // released, since its effect certainly did not happen.
                EffectGate::Run(Some(claimed)) if ctx.is_cancelled() => {
                    release_effect(p, claimed).await;
                    return Ok(observe.error(name, ToolError::cancelled().into_info()));
                }
                EffectGate::Run(effect) => effect,
                EffectGate::Replay(outcome) => {
                    let tripwire = outcome.trips();
                    return settle(observe.marked(untrusted).replayed(name, outcome), tripwire);
                }
                EffectGate::Refuse(error) => {
                    return Ok(observe.error(name, error));
                }
            };

            // 10. Started.
            let name = observe.started(name, call.arguments);

            // 11. Execute, relaying progress and watching the cancellation token.
            let executed = execute(body, ctx, progress_rx, &mut observe, &name).await;
            // Steps 11 to 14 end with a result whose effect is recorded (a panicked or cancelled
            // call's is not: whether its effect happened is unknown), and whether a guardrail
            // tripped. Each such error carries the tool's untrusted mark, as its replay will
            // (a blocked end is never marked, replayed or not).
            let (result, tripwire) = 'ended: {
                let (mut value, mut content) = match executed {
                    Executed::Returned(Ok(output)) => output.into_raw(),
                    Executed::Returned(Err(error)) => {
                        let observe = observe.marked(untrusted);
                        break 'ended (observe.error(name, error.into_info()), false);
                    }
                    Executed::Panicked(panic) => {
                        let what = format!("tool {name}");
                        return Ok(observe.error(name, panicked(&what, &panic, p)));
                    }
                    Executed::Cancelled => {
                        return Ok(observe.error(name, ToolError::cancelled().into_info()));
                    }
                };
                if let Err(exceeded) = check_output(
                    &value,
                    blocks(&content),
                    p.limits.max_output_bytes,
                    p.limits.max_output_depth,
                ) {
                    let error = output_too_large(p, &name, exceeded, value, "");
                    break 'ended (observe.marked(untrusted).error(name, error), false);
                }

                // 12. Output guardrails, on the raw value, then on the text of its content.
                if let Some((message, tripwire)) = guardrail_refusal(p, Side::Output, |guardrail| {
                    match guardrail.check_output(&name, &value) {
                        GuardrailDecision::Pass if content.is_some() => {
                            guardrail.check_output_content(&name, blocks(&content))
                        }
                        decision => decision,
                    }
                }) {
                    let result =
                        observe.blocked(name, BlockReason::GuardrailBlocked, message.into());
                    break 'ended (result, tripwire);
                }

                // 13. tool_result middleware, on successful results only.
                let mut rewritten = false;
                for middleware in &p.middleware {
                    let mut rewrite = ResultRewrite {
                        id: observe.id(),
                        name: &name,
                        value: &mut value,
                        content: &mut content,
                        rewritten: &mut rewritten,
                    };
                    if let Err(panic) = guarded(|| middleware.on_tool_result(&mut rewrite)) {
                        let error = panicked("tool_result middleware", &panic, p);
                        break 'ended (observe.marked(untrusted).error(name, error), false);
                    }
                }
                // What middleware rewrote is held to the same bounds: events, rows and the
                // effect store must be able to carry and read it back.
                if rewritten
                    && let Err(exceeded) = check_output(
                        &value,
                        blocks(&content),
                        p.limits.max_output_bytes,
                        p.limits.max_output_depth,
                    )
                {
                    let how = " after tool_result middleware";
                    let error = output_too_large(p, &name, exceeded, value, how);
                    break 'ended (observe.marked(untrusted).error(name, error), false);
                }

                // 14. Finished.
                (
                    observe.marked(untrusted).finished(name, value, content),
                    false,
                )
            };
            if let Some(claimed) = effect {
                record_effect(p, claimed, &result, tripwire).await;
            }
            settle(result, tripwire)
        }
    }
}

impl Dispatcher {
    /// Answers a call that will never be dispatched (its batch stopped first, or it came past the
    /// run's tool-round limit): the error is redacted and recorded as an `error` ledger row, and no
    /// event is emitted, since nothing happened to the call.
    pub(crate) fn settle_unstarted(
        &self,
        call: &ToolCall,
        error: ErrorInfo,
        ctx: &ToolExecutionContext,
    ) -> ToolResult {
        let name = requested_name(&self.pipeline, &call.name);
        // Nothing happened to the call, so it has no span either.
        Observe::new(&self.pipeline, call.id.clone(), ctx, None).unstarted(name, error)
    }

    /// Whether calls of tools with an effect policy claim their effect in a store (and a repeated
    /// call gets the recorded outcome).
    #[cfg(feature = "mcp")]
    pub(crate) fn stores_effects(&self) -> bool {
        self.pipeline.effects.is_some()
    }

    /// Refuses a call outside the pipeline (its approval was refused, or could not be asked
    /// for): a blocked `permission_denied` result with the usual event and ledger row.
    pub(crate) fn settle_refused(
        &self,
        call: &ToolCall,
        message: String,
        ctx: &ToolExecutionContext,
    ) -> ToolResult {
        let name = requested_name(&self.pipeline, &call.name);
        let span = span::tool_span(call, &self.pipeline.redactor);
        Observe::new(&self.pipeline, call.id.clone(), ctx, span).blocked(
            name,
            BlockReason::PermissionDenied,
            message.into(),
        )
    }
}

/// A call after `tool_call` middleware (step 1), ready for the rest of the pipeline.
#[derive(Clone, Debug)]
pub(crate) struct PlannedCall {
    /// The call as middleware left it; its id is the provider's.
    pub(crate) call: ToolCall,
    /// Set when middleware panicked: dispatching reports it as the call's error.
    pub(crate) middleware_failure: Option<Box<ErrorInfo>>,
}

/// Where a call entering [`Dispatcher::run_pipeline`] stands with step 1.
enum Step1 {
    /// Straight from the host: `tool_call` middleware has not run yet.
    Pending,
    /// Already through [`Dispatcher::plan`], with the failure it ended in, if any.
    Done(Option<Box<ErrorInfo>>),
}

/// A guard's answer inside the pipeline: the verdict of `$check` (run through [`run_guard`]),
/// awaited only when it is pending. A macro, not an `async fn`, so a ready verdict adds no
/// future to the pipeline's state and no poll.
macro_rules! decide {
    ($p:expr, $ctx:expr, $kind:literal, $check:expr) => {
        match run_guard($p, $kind, || $check) {
            Verdict::Ready(answer) => answer.map_err(GuardStop::Refused),
            Verdict::Pending(check) => awaited($p, $ctx, $kind, check).await,
        }
    };
}
use decide;

/// Runs a guard callback; a panic refuses the call (fail closed).
#[inline]
fn run_guard<'v>(p: &Pipeline, kind: &str, check: impl FnOnce() -> Verdict<'v>) -> Verdict<'v> {
    match guarded(check) {
        Ok(verdict) => verdict,
        Err(panic) => Verdict::Ready(Err(refused_by_panic(p, kind, &panic))),
    }
}

/// Awaits a pending verdict. A panic while it is polled refuses the call, as one in the guard's
/// callback does, and so does one while it is dropped.
async fn awaited(
    p: &Pipeline,
    ctx: &ToolExecutionContext,
    kind: &str,
    check: Pin<Box<dyn Future<Output = Result<(), Refusal>> + Send + '_>>,
) -> Result<(), GuardStop> {
    match until_cancelled(ctx, check).await {
        None => Err(GuardStop::Cancelled),
        Some(Ok(answer)) => answer.map_err(GuardStop::Refused),
        Some(Err(panic)) => Err(GuardStop::Refused(refused_by_panic(p, kind, &panic))),
    }
}

/// Why a guard stopped a call: its refusal, or the call's cancellation while it decided.
enum GuardStop {
    Refused(Refusal),
    Cancelled,
}

impl GuardStop {
    /// The call's end: blocked for `reason`, or cancelled.
    #[cold]
    fn end(self, observe: Observe<'_>, name: Arc<str>, reason: BlockReason) -> ToolResult {
        match self {
            Self::Refused(refusal) => observe.blocked(name, reason, refusal),
            Self::Cancelled => observe.error(name, ToolError::cancelled().into_info()),
        }
    }
}

/// Awaits `work` (a guard's pending answer, an extractor) under the panic guard until the call
/// is cancelled; `None` when it was. A call waiting on a check must still end when cancelled.
/// `work` is dropped under the guard too, even when the dispatch itself is dropped while it
/// waits (a host's timeout around `dispatch`).
async fn until_cancelled<F: Future + Unpin>(
    ctx: &ToolExecutionContext,
    work: F,
) -> Option<Result<F::Output, String>> {
    let mut work = pin!(DropGuarded::new(work));
    let answer = {
        let answer = pin!(guarded_future(|| work.as_mut()));
        let cancelled = pin!(ctx.cancellation().cancelled());
        match futures_util::future::select(answer, cancelled).await {
            futures_util::future::Either::Left((answer, _)) => Some(answer),
            futures_util::future::Either::Right(((), _)) => None,
        }
    };
    work.discard();
    answer
}

// The message builders (this one, `panicked`, `bounded`, `requested_name`) are `#[cold]`, as
// are `Observe`'s refusal and failure exits: the compiler then keeps the code of a call that runs
// through together, so a call touches fewer cache lines of the pipeline.
/// The refusal of a call that requires an approval, dispatched where nobody can give one.
#[cold]
fn no_one_to_ask(name: &str) -> Refusal {
    Refusal::new(format!(
        "Tool {name} requires an approval, and this dispatch cannot ask for one: run it in an agent with an approval store, or serve it over MCP"
    ))
}

/// The error for an output over a bound (`how` says when it was found), dropping the value one
/// level at a time: found over the byte bound, it may still be too deep for recursive code.
#[cold]
fn output_too_large(
    p: &Pipeline,
    name: &str,
    exceeded: Exceeded,
    value: serde_json::Value,
    how: &str,
) -> ErrorInfo {
    let message = match exceeded {
        Exceeded::Bytes => format!(
            "The output of tool {name} exceeds {} bytes{how}",
            p.limits.max_output_bytes
        ),
        Exceeded::Depth => format!(
            "The output of tool {name} nests deeper than {} levels{how}",
            p.limits.max_output_depth
        ),
    };
    drop_deep(value);
    ErrorInfo::new(ErrorCode::OutputTooLarge, message)
}

/// A panic's message is bounded like every other ([`MESSAGE_LIMIT`]), redacted first.
#[cold]
fn refused_by_panic(p: &Pipeline, kind: &str, panic: &str) -> Refusal {
    let message = format!("The call was refused because the {kind} panicked: {panic}");
    Refusal::new(bounded(p, &message).into_owned())
}

/// Which side of the tool a guardrail checks.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    /// The call, before lookup (step 2).
    Input,
    /// The raw result (step 12).
    Output,
}

/// The first guardrail that does not let `check` pass: its message, and whether it trips the
/// run. A panicking guardrail blocks (fail closed) without tripping.
#[inline]
fn guardrail_refusal(
    p: &Pipeline,
    side: Side,
    check: impl Fn(&dyn Guardrail) -> GuardrailDecision,
) -> Option<(String, bool)> {
    let output = side == Side::Output;
    p.guardrails
        .iter()
        .find_map(|guardrail| match guarded(|| check(&**guardrail)) {
            Ok(GuardrailDecision::Pass) => None,
            Ok(GuardrailDecision::Block(hit)) => Some((hit.message(output), false)),
            Ok(GuardrailDecision::Tripwire(hit)) => Some((hit.message(output), true)),
            Err(panic) => Some((
                match side {
                    Side::Input => {
                        format!("Tool call blocked: an input guardrail panicked ({panic})")
                    }
                    Side::Output => {
                        format!("Tool result blocked: an output guardrail panicked ({panic})")
                    }
                },
                false,
            )),
        })
}

/// A call's ending: its result, or, when a guardrail tripped, the tripwire that carries it.
fn settle<H: From<Tripwire>>(result: ToolResult, tripwire: bool) -> Result<ToolResult, H> {
    if tripwire {
        Err(Tripwire { result }.into())
    } else {
        Ok(result)
    }
}

#[cold]
fn panicked(what: &str, panic: &str, p: &Pipeline) -> ErrorInfo {
    let mut message = p
        .redactor
        .redact_str(&format!("{what} panicked: {panic}"))
        .into_owned();
    crate::redact::truncate_at_char_boundary(&mut message, MESSAGE_LIMIT);
    ErrorInfo::new(ErrorCode::ToolPanicked, message)
}

/// `text` redacted, then cut at a char boundary to [`MESSAGE_LIMIT`] bytes and marked as cut.
/// Redacted first, so a secret the cut runs through is still found whole.
#[cold]
fn bounded<'t>(p: &Pipeline, text: &'t str) -> Cow<'t, str> {
    redacted_cut(&p.redactor, text, MESSAGE_LIMIT)
}

/// The name a call asked for, before lookup found a registered tool of that name, as results,
/// events and rows carry it (see [`shown_name`]).
#[cold]
fn requested_name(p: &Pipeline, name: &str) -> Arc<str> {
    shown_name(&p.redactor, name).into()
}

/// A requested tool name as anything outside the dispatcher sees it. The model (or middleware)
/// chose it, so it is redacted like any other text it sends back, then cut to [`NAME_LIMIT`]
/// bytes and marked: no limit bounds it on the way in.
pub(crate) fn shown_name<'n>(redactor: &SecretRedactor, name: &'n str) -> Cow<'n, str> {
    redacted_cut(redactor, name, NAME_LIMIT)
}

/// `text` redacted, then cut at a char boundary to `limit` bytes and marked as cut; borrowed
/// when neither changed it.
fn redacted_cut<'t>(redactor: &SecretRedactor, text: &'t str, limit: usize) -> Cow<'t, str> {
    match redactor.redact_str(text) {
        Cow::Borrowed(text) => crate::redact::cut_marked_str(text, limit),
        Cow::Owned(mut text) => {
            crate::redact::cut_marked(&mut text, limit);
            Cow::Owned(text)
        }
    }
}
