//! [`BatchExecutor`]: the calls of one provider response, with bounded concurrency and ordered
//! results.
//!
//! Calls are planned first (each goes through `tool_call` middleware), so a rename into an
//! exclusive tool still makes the whole batch sequential. Up to `concurrency` calls are then in
//! flight at once: a new call is claimed, in call order, as soon as one settles, so never more
//! than N run and N run whenever N are ready. Results come back in call order whatever order the
//! calls finish in.
//!
//! A batch stops early on a guardrail tripwire or when the run's cancellation token fires:
//! nothing new is claimed, calls already claimed settle (they see the same token), and every call
//! that never started is answered `tool_call_not_dispatched` (with an `error` ledger row and no
//! event). Side effects of claimed calls are not rolled back.
//!
//! In a run, a call can also stop the batch by waiting for approval (see
//! [`ApprovalGate`](crate::dispatch::ApprovalGate)). That is not a failure: nothing new is
//! claimed, claimed calls settle, and the calls that never started are handed back to the run,
//! which dispatches them once the run resumes. Should the run's token fire while the claimed calls
//! settle, the batch stops as cancelled instead: a cancelled run waits for no one.
//!
//! The calls run as futures on the caller's task (no spawning): concurrency, not parallelism. A
//! tool that burns CPU should move that work to `spawn_blocking`, as any async code would.

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

use crate::call::{CallId, ErrorCode, ErrorInfo, ToolCall, ToolResult};
use crate::context::ToolExecutionContext;
use crate::definition::ToolDefinition;
use crate::dispatch::{ApprovalGate, Dispatcher, PlannedCall, Tripwire};
use crate::scope::ToolScope;

/// Runs the calls of one response.
///
/// ```
/// use prism::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
/// use prism::run::BatchExecutor;
/// use serde_json::{json, Value};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let echo = ToolDefinition::builder("echo").run_sync(|args: &Value, _| Ok(args.clone()));
/// let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([echo])).build();
/// let calls = (0..3).map(|i| ToolCall::new(format!("c{i}"), "echo", json!({"i": i})));
///
/// let outcome = BatchExecutor::new(2)
///     .run(&dispatcher, calls.collect(), &ToolExecutionContext::new())
///     .await;
/// let ids: Vec<_> = outcome.results.iter().map(|r| r.tool_call_id.as_str()).collect();
/// assert_eq!(ids, ["c0", "c1", "c2"]);
/// assert!(outcome.stopped.is_none());
/// # });
/// ```
#[derive(Clone, Copy, Debug)]
pub struct BatchExecutor {
    concurrency: usize,
}

/// What a batch produced: one result per call, in call order, and why it stopped early, if it did.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchOutcome {
    /// One result per call, in call order.
    pub results: Vec<ToolResult>,
    /// The first failure, when the batch stopped early.
    pub stopped: Option<BatchStop>,
}

/// Why a batch stopped claiming calls.
#[derive(Clone, Debug, PartialEq)]
pub enum BatchStop {
    /// A guardrail tripped; its blocked result is already among the results.
    Tripwire(Tripwire),
    /// The cancellation token fired.
    Cancelled,
}

impl BatchExecutor {
    /// An executor running up to `concurrency` calls at once (0 counts as 1).
    pub fn new(concurrency: usize) -> Self {
        Self {
            concurrency: concurrency.max(1),
        }
    }

    /// The configured concurrency.
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// Plans and runs `calls` through `dispatcher` with `ctx` (which carries the run's scope and
    /// cancellation token).
    pub async fn run(
        &self,
        dispatcher: &Dispatcher,
        calls: Vec<ToolCall>,
        ctx: &ToolExecutionContext,
    ) -> BatchOutcome {
        let planned = calls
            .into_iter()
            .map(|call| dispatcher.plan(call))
            .collect();
        self.run_planned(dispatcher, planned, ctx).await
    }

    /// How many calls of `planned` may run at once: 1 when any of them is exclusive. A run's
    /// calls execute the tools pinned when it started (`ctx`'s scope), so those say.
    pub(crate) fn limit_for(
        &self,
        dispatcher: &Dispatcher,
        planned: &[PlannedCall],
        ctx: &ToolExecutionContext,
    ) -> usize {
        if self.concurrency == 1 || planned.len() < 2 {
            return 1;
        }
        let pinned = ctx.scope().and_then(ToolScope::pinned_tools);
        let live = dispatcher.registry().borrow_snapshot();
        let tools = pinned.map_or(&**live, |pinned| &**pinned);
        let exclusive = planned.iter().any(|planned| {
            tools
                .get(&planned.call.name)
                .is_some_and(ToolDefinition::is_exclusive)
        });
        if exclusive {
            1
        } else {
            self.concurrency.min(planned.len())
        }
    }

    /// Runs calls that already went through middleware.
    pub(crate) async fn run_planned(
        &self,
        dispatcher: &Dispatcher,
        planned: Vec<PlannedCall>,
        ctx: &ToolExecutionContext,
    ) -> BatchOutcome {
        let gated = self.run_gated(dispatcher, planned, ctx, None).await;
        let results = gated
            .answers
            .into_iter()
            .map(|answer| match answer {
                Answer::Done(result) => result,
                // Without a run to resume them, calls that did not start are not dispatched.
                Answer::Unstarted(planned) => {
                    dispatcher.settle_unstarted(&planned.call, not_dispatched(), ctx)
                }
                Answer::Held(call) => dispatcher.settle_unstarted(&call, not_dispatched(), ctx),
            })
            .collect();
        BatchOutcome {
            results,
            stopped: gated.stopped,
        }
    }

    /// Runs calls that already went through middleware, asking `gate` before each executes. The
    /// batch stops claiming calls at the first failure or the first call the gate holds.
    pub(crate) async fn run_gated(
        &self,
        dispatcher: &Dispatcher,
        planned: Vec<PlannedCall>,
        ctx: &ToolExecutionContext,
        gate: Option<&dyn ApprovalGate<Halt>>,
    ) -> GatedBatch {
        let limit = self.limit_for(dispatcher, &planned, ctx);
        let mut slots: Vec<Slot> = planned.into_iter().map(Slot::Waiting).collect();
        let batch = Batch {
            dispatcher,
            ctx,
            gate,
        };
        let mut stopped = if limit == 1 {
            batch.run_sequentially(&mut slots).await
        } else {
            batch.run_concurrently(&mut slots, limit).await
        };
        // A call that waits for approval stops the claiming, so a cancellation that fires while
        // the claimed calls settle is not seen there. A cancelled run does not wait for anyone.
        let held = slots.iter().any(|slot| matches!(slot, Slot::Held(_)));
        if stopped.is_none() && held && ctx.is_cancelled() {
            stopped = Some(BatchStop::Cancelled);
        }
        let answers = slots
            .into_iter()
            .map(|slot| match slot {
                Slot::Done(result) => Answer::Done(result),
                Slot::Held(call) => Answer::Held(call),
                Slot::Waiting(planned) => Answer::Unstarted(planned),
                // Every claimed call is awaited before the batch returns, so this arm only keeps
                // the one-result-per-id promise should that ever change.
                Slot::Claimed(id) => Answer::Done(ToolResult::error(id, "", not_dispatched())),
            })
            .collect();
        GatedBatch { answers, stopped }
    }
}

/// What the pipeline hands a run's batch instead of a result.
pub(crate) enum Halt {
    /// A guardrail tripped.
    Tripwire(Tripwire),
    /// The call waits for approval; it is the call as middleware left it.
    Held(ToolCall),
}

impl From<Tripwire> for Halt {
    fn from(tripwire: Tripwire) -> Self {
        Self::Tripwire(tripwire)
    }
}

/// A gated batch: where each call ended, in call order, and the failure that stopped it, if any.
pub(crate) struct GatedBatch {
    pub(crate) answers: Vec<Answer>,
    pub(crate) stopped: Option<BatchStop>,
}

/// Where one call of a gated batch ended.
pub(crate) enum Answer {
    /// It has its result.
    Done(ToolResult),
    /// It waits for approval.
    Held(ToolCall),
    /// It never started.
    Unstarted(PlannedCall),
}

/// One call's place in the batch.
enum Slot {
    /// Not claimed yet.
    Waiting(PlannedCall),
    /// In flight.
    Claimed(CallId),
    /// Settled.
    Done(ToolResult),
    /// Waiting for approval.
    Held(ToolCall),
}

/// What settling a call means for the rest of the batch.
enum Next {
    /// Claim on.
    Continue,
    /// Claim nothing more: a call waits for approval.
    Hold,
    /// Claim nothing more: the batch failed.
    Stop(BatchStop),
}

impl Slot {
    fn claim(&mut self) -> Option<PlannedCall> {
        let Slot::Waiting(planned) = self else {
            return None;
        };
        let id = planned.call.id.clone();
        match std::mem::replace(self, Slot::Claimed(id)) {
            Slot::Waiting(planned) => Some(planned),
            _ => None,
        }
    }

    fn settle(&mut self, outcome: Result<ToolResult, Halt>) -> Next {
        match outcome {
            Ok(result) => {
                *self = Slot::Done(result);
                Next::Continue
            }
            Err(Halt::Tripwire(tripwire)) => {
                *self = Slot::Done(tripwire.result().clone());
                Next::Stop(BatchStop::Tripwire(tripwire))
            }
            Err(Halt::Held(call)) => {
                *self = Slot::Held(call);
                Next::Hold
            }
        }
    }
}

/// What every call of one batch is dispatched with.
struct Batch<'a> {
    dispatcher: &'a Dispatcher,
    ctx: &'a ToolExecutionContext,
    gate: Option<&'a dyn ApprovalGate<Halt>>,
}

impl Batch<'_> {
    /// One call at a time, in call order: the default, and every batch with an exclusive tool.
    async fn run_sequentially(&self, slots: &mut [Slot]) -> Option<BatchStop> {
        for slot in slots {
            if self.ctx.is_cancelled() {
                return Some(BatchStop::Cancelled);
            }
            let Some(planned) = slot.claim() else {
                continue;
            };
            let outcome = self
                .dispatcher
                .dispatch_planned(planned, self.ctx, self.gate)
                .await;
            match slot.settle(outcome) {
                Next::Continue => {}
                Next::Hold => return None,
                Next::Stop(stop) => return Some(stop),
            }
        }
        None
    }

    async fn run_concurrently(&self, slots: &mut [Slot], limit: usize) -> Option<BatchStop> {
        let mut stopped = None;
        let mut held = false;
        let mut next = 0;
        let mut in_flight = FuturesUnordered::new();
        loop {
            // Claim in call order until `limit` calls are in flight.
            while stopped.is_none() && !held && in_flight.len() < limit && next < slots.len() {
                if self.ctx.is_cancelled() {
                    stopped = Some(BatchStop::Cancelled);
                    break;
                }
                if let Some(planned) = slots[next].claim() {
                    let index = next;
                    let dispatched = self
                        .dispatcher
                        .dispatch_planned(planned, self.ctx, self.gate);
                    in_flight.push(async move { (index, dispatched.await) });
                }
                next += 1;
            }
            let Some((index, outcome)) = in_flight.next().await else {
                return stopped;
            };
            match slots[index].settle(outcome) {
                Next::Continue => {}
                Next::Hold => held = true,
                Next::Stop(stop) => {
                    stopped.get_or_insert(stop);
                }
            }
        }
    }
}

/// The error of a call its batch never started.
pub(crate) fn not_dispatched() -> ErrorInfo {
    ErrorInfo::new(
        ErrorCode::ToolCallNotDispatched,
        "The batch stopped before this call started; it did not run",
    )
}
