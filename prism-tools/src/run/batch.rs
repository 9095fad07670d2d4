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
//! The calls run as futures on the caller's task (no spawning): concurrency, not parallelism. A
//! tool that burns CPU should move that work to `spawn_blocking`, as any async code would.

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;

use crate::call::{CallId, ErrorCode, ErrorInfo, ToolCall, ToolResult};
use crate::context::ToolExecutionContext;
use crate::dispatch::{Dispatcher, PlannedCall, Tripwire};

/// Runs the calls of one response.
///
/// ```
/// use prism_tools::run::BatchExecutor;
/// use prism_tools::{Dispatcher, ToolCall, ToolDefinition, ToolExecutionContext, ToolRegistry};
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

    /// How many calls of `planned` may run at once: 1 when any of them is exclusive.
    pub(crate) fn limit_for(&self, dispatcher: &Dispatcher, planned: &[PlannedCall]) -> usize {
        if self.concurrency == 1 || planned.len() < 2 {
            return 1;
        }
        let exclusive = planned.iter().any(|planned| {
            dispatcher
                .registry()
                .get(&planned.call.name)
                .is_some_and(|tool| tool.is_exclusive())
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
        let limit = self.limit_for(dispatcher, &planned);
        if limit == 1 {
            return run_sequentially(dispatcher, planned, ctx).await;
        }
        let mut slots: Vec<Slot> = planned.into_iter().map(Slot::Waiting).collect();
        let stopped = run_concurrently(dispatcher, &mut slots, ctx, limit).await;
        let results = slots
            .into_iter()
            .map(|slot| match slot {
                Slot::Done(result) => result,
                Slot::Waiting(planned) => {
                    dispatcher.settle_unstarted(&planned.call, not_dispatched(), ctx)
                }
                // Every claimed call is awaited before the batch returns, so this arm only keeps
                // the one-result-per-id promise should that ever change.
                Slot::Claimed(id) => ToolResult::error(id, "", not_dispatched()),
            })
            .collect();
        BatchOutcome { results, stopped }
    }
}

/// One call at a time, in call order: the default, and every batch with an exclusive tool.
async fn run_sequentially(
    dispatcher: &Dispatcher,
    planned: Vec<PlannedCall>,
    ctx: &ToolExecutionContext,
) -> BatchOutcome {
    let mut results = Vec::with_capacity(planned.len());
    let mut stopped = None;
    let mut calls = planned.into_iter();
    for planned in calls.by_ref() {
        if ctx.is_cancelled() {
            results.push(dispatcher.settle_unstarted(&planned.call, not_dispatched(), ctx));
            stopped = Some(BatchStop::Cancelled);
            break;
        }
        match dispatcher.dispatch_planned(planned, ctx).await {
            Ok(result) => results.push(result),
            Err(tripwire) => {
                results.push(tripwire.result().clone());
                stopped = Some(BatchStop::Tripwire(tripwire));
                break;
            }
        }
    }
    results.extend(
        calls.map(|planned| dispatcher.settle_unstarted(&planned.call, not_dispatched(), ctx)),
    );
    BatchOutcome { results, stopped }
}

/// One call's place in the batch.
enum Slot {
    /// Not claimed yet.
    Waiting(PlannedCall),
    /// In flight.
    Claimed(CallId),
    /// Settled.
    Done(ToolResult),
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

    fn settle(&mut self, outcome: Result<ToolResult, Tripwire>) -> Option<Tripwire> {
        match outcome {
            Ok(result) => {
                *self = Slot::Done(result);
                None
            }
            Err(tripwire) => {
                *self = Slot::Done(tripwire.result().clone());
                Some(tripwire)
            }
        }
    }
}

async fn run_concurrently(
    dispatcher: &Dispatcher,
    slots: &mut [Slot],
    ctx: &ToolExecutionContext,
    limit: usize,
) -> Option<BatchStop> {
    let mut stopped = None;
    let mut next = 0;
    let mut in_flight = FuturesUnordered::new();
    loop {
        // Claim in call order until `limit` calls are in flight.
        while stopped.is_none() && in_flight.len() < limit && next < slots.len() {
            if ctx.is_cancelled() {
                stopped = Some(BatchStop::Cancelled);
                break;
            }
            if let Some(planned) = slots[next].claim() {
                let index = next;
                in_flight
                    .push(async move { (index, dispatcher.dispatch_planned(planned, ctx).await) });
            }
            next += 1;
        }
        let Some((index, outcome)) = in_flight.next().await else {
            return stopped;
        };
        if let Some(tripwire) = slots[index].settle(outcome)
            && stopped.is_none()
        {
            stopped = Some(BatchStop::Tripwire(tripwire));
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
