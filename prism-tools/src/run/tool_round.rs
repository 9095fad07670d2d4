//! One tool round: the calls of one provider response, from the round limit to their rows.
//!
//! ```text
//! count the round ─► past the limit? tool_round_limit rows, fail
//! ─► round gate (before anything starts) ─► refused? not-dispatched rows, stop cleanly
//! ─► plan after middleware ─► classify each call: run, wait for approval, refuse
//! ─► no approvals needed: one batch, rows in call order
//! ─► approvals needed: run the calls before the first one that waits, then suspend, holding
//!    every row of the batch until the run resumes
//! ```

use std::sync::Arc;

use crate::call::{ErrorCode, ErrorInfo, ToolCall, ToolResult};
use crate::clock::now_or_system;
use crate::context::ToolExecutionContext;
use crate::definition::ToolDefinition;
use crate::dispatch::{Dispatcher, PlannedCall};
use crate::error::Refusal;
use crate::grant::ToolGrant;
use crate::panic::guarded;
use crate::run::batch::not_dispatched;
use crate::run::run_loop::RunDriver;
use crate::run::suspension::{HeldCall, stored_visible};
use crate::run::turn::TurnTools;
use crate::run::{
    ApprovalKey, BatchExecutor, BatchStop, Message, PendingApproval, RoundCharge, RunError,
    RunEventKind, SuspendedRun,
};
use crate::scope::ToolScope;

/// How a tool round ended, when it did not fail.
pub(crate) enum RoundEnd {
    /// Every call has its row; the run goes on.
    Done,
    /// The round gate refused; every call has a row and the run stops.
    Refused(String),
    /// Calls wait for approval; the batch is held in the session's state.
    Suspended(Vec<PendingApproval>),
}

/// What to do with one planned call.
enum Plan {
    Run,
    AwaitApproval,
    Refuse(String),
}

impl RunDriver<'_> {
    pub(crate) async fn run_tool_round(
        &mut self,
        calls: Vec<ToolCall>,
        turn_tools: &TurnTools,
        concurrency: usize,
    ) -> Result<RoundEnd, RunError> {
        let dispatcher = self.session.agent.dispatcher.clone();
        self.rounds += 1;
        if self.rounds > self.settings.max_tool_rounds {
            let limit = self.settings.max_tool_rounds;
            let error = ErrorInfo::new(
                ErrorCode::ToolRoundLimit,
                format!("The run allows {limit} tool rounds; this call did not run"),
            );
            self.answer_unstarted(&dispatcher, &calls, &error);
            return Err(RunError::ToolRoundLimit { limit });
        }
        if let Err(refusal) = self.charge_round(&calls).await {
            let reason = dispatcher
                .redactor()
                .redact_str(&refusal.message)
                .into_owned();
            let error = ErrorInfo::new(
                ErrorCode::ToolCallNotDispatched,
                format!("The tool round was refused: {reason}"),
            );
            self.answer_unstarted(&dispatcher, &calls, &error);
            self.emit(RunEventKind::ToolRoundRefused {
                turn: self.turn,
                round: self.rounds,
                reason: reason.clone(),
            });
            return Ok(RoundEnd::Refused(reason));
        }

        let ctx = self.scoped_context(&turn_tools.visible, turn_tools.search_tool.as_ref());
        let executor = BatchExecutor::new(concurrency);
        let planned: Vec<PlannedCall> = calls
            .into_iter()
            .map(|call| dispatcher.plan(call))
            .collect();
        self.emit(RunEventKind::ToolBatchStarted {
            turn: self.turn,
            round: self.rounds,
            calls: planned.len(),
            concurrency: executor.limit_for(&dispatcher, &planned),
        });
        let plans: Vec<Plan> = planned
            .iter()
            .map(|call| self.plan_call(call, &ctx))
            .collect();
        let first_wait = plans
            .iter()
            .position(|plan| matches!(plan, Plan::AwaitApproval));
        let Some(first_wait) = first_wait else {
            let (results, stopped) = execute(&dispatcher, executor, planned, plans, &ctx).await;
            self.session
                .transcript
                .extend(results.into_iter().map(Message::tool));
            return stop_error(stopped).map(|()| RoundEnd::Done);
        };

        // Claim in call order up to the first call that waits: run what comes before it.
        let mut tail_planned = planned;
        let head_planned: Vec<PlannedCall> = tail_planned.drain(..first_wait).collect();
        let mut tail_plans = plans;
        let head_plans: Vec<Plan> = tail_plans.drain(..first_wait).collect();
        let (head, stopped) = execute(&dispatcher, executor, head_planned, head_plans, &ctx).await;
        if stopped.is_some() {
            // The batch failed before reaching the approval: the usual failure rows.
            let not_dispatched = not_dispatched();
            let mut rows = head;
            for (planned, plan) in tail_planned.iter().zip(&tail_plans) {
                rows.push(match plan {
                    Plan::Refuse(message) => {
                        dispatcher.settle_refused(&planned.call, message.clone(), &ctx)
                    }
                    _ => dispatcher.settle_unstarted(&planned.call, not_dispatched.clone(), &ctx),
                });
            }
            self.session
                .transcript
                .extend(rows.into_iter().map(Message::tool));
            return stop_error(stopped).map(|()| RoundEnd::Done);
        }
        self.suspend(
            &dispatcher,
            head,
            tail_planned,
            tail_plans,
            &turn_tools.visible,
            &ctx,
        )
        .await
    }

    /// Holds the batch: settled rows, calls waiting for approval, and not-dispatched rows for
    /// the other calls after the first that waits.
    async fn suspend(
        &mut self,
        dispatcher: &Dispatcher,
        head: Vec<ToolResult>,
        tail: Vec<PlannedCall>,
        plans: Vec<Plan>,
        visible: &ToolGrant,
        ctx: &ToolExecutionContext,
    ) -> Result<RoundEnd, RunError> {
        let Some(store) = self.session.agent.approvals.clone() else {
            return Err(RunError::NoApprovalStore);
        };
        let mut calls: Vec<HeldCall> = head
            .into_iter()
            .map(|result| HeldCall::Settled { result })
            .collect();
        let mut pending = Vec::new();
        for (planned, plan) in tail.into_iter().zip(plans) {
            let held = match plan {
                Plan::AwaitApproval => {
                    let approval = self.pending_approval(dispatcher, &planned.call);
                    if let Err(error) = store.request(&approval).await {
                        // Without a durable record there is no approval to wait for: refuse
                        // every waiting call, write the whole batch, and fail.
                        self.write_held_refused(dispatcher, calls, ctx, &error.to_string());
                        return Err(RunError::Approval(error));
                    }
                    pending.push(approval.clone());
                    HeldCall::Pending {
                        call: planned.call,
                        approval,
                    }
                }
                Plan::Refuse(message) => HeldCall::Settled {
                    result: dispatcher.settle_refused(&planned.call, message, ctx),
                },
                Plan::Run => {
                    let error = ErrorInfo::new(
                        ErrorCode::ToolCallNotDispatched,
                        "The batch stopped at a call waiting for approval before this call started; it did not run",
                    );
                    HeldCall::Settled {
                        result: dispatcher.settle_unstarted(&planned.call, error, ctx),
                    }
                }
            };
            calls.push(held);
        }
        self.emit(RunEventKind::RunSuspended {
            pending: pending.iter().map(|p| p.key.call_id.clone()).collect(),
        });
        self.session.suspended = Some(SuspendedRun {
            run_id: self.run_id.to_string(),
            turn: self.turn,
            rounds: self.rounds,
            revisions: self.revisions,
            text: self.text.clone(),
            visible: stored_visible(visible),
            calls,
        });
        Ok(RoundEnd::Suspended(pending))
    }

    /// Writes a held batch to the transcript, refusing the calls that were waiting.
    pub(crate) fn write_held_refused(
        &mut self,
        dispatcher: &Dispatcher,
        calls: Vec<HeldCall>,
        ctx: &ToolExecutionContext,
        why: &str,
    ) {
        for held in calls {
            let row = match held {
                HeldCall::Settled { result } => result,
                HeldCall::Pending { call, .. } => dispatcher.settle_refused(
                    &call,
                    format!("The call needs an approval that could not be recorded: {why}"),
                    ctx,
                ),
            };
            self.session.transcript.push(Message::tool(row));
        }
    }

    fn pending_approval(&self, dispatcher: &Dispatcher, call: &ToolCall) -> PendingApproval {
        let arguments = dispatcher
            .redactor()
            .redact_value(&call.arguments)
            .into_owned();
        PendingApproval {
            key: ApprovalKey::new(
                self.session.id.to_string(),
                call.id.clone(),
                call.name.clone(),
                &call.arguments,
            ),
            run_id: self.run_id.to_string(),
            arguments,
            requested_at: now_or_system(&*self.session.agent.clock),
        }
    }

    /// Does this call wait for a decision? Only calls that could run at all are asked about:
    /// unknown, denied and malformed calls, and calls with arguments over the dispatcher's
    /// limits, are refused by the dispatcher as usual (so no approval store keeps such
    /// arguments, and no policy walks them).
    fn plan_call(&self, planned: &PlannedCall, ctx: &ToolExecutionContext) -> Plan {
        let call = &planned.call;
        if planned.middleware_failure.is_some() || call.arguments_error.is_some() {
            return Plan::Run;
        }
        if ctx.scope().is_some_and(|scope| !scope.allows(&call.name)) {
            return Plan::Run;
        }
        // The run's own `search_tools` reads the index and activates names (which grants
        // nothing): it never waits for approval.
        if ctx
            .scope()
            .is_some_and(|scope| scope.run_tool(&call.name).is_some())
        {
            return Plan::Run;
        }
        let agent = &self.session.agent;
        let Some(tool) = agent.dispatcher.registry().get(&call.name) else {
            return Plan::Run;
        };
        if !agent.dispatcher.within_limits(&call.arguments) {
            return Plan::Run;
        }
        let asked = tool.requires_approval()
            || agent.approval_policy.as_ref().is_some_and(|policy| {
                // A panicking policy asks for approval: fail closed.
                guarded(|| policy.requires_approval(&tool, &call.arguments)).unwrap_or(true)
            });
        match (asked, &agent.approvals) {
            (false, _) => Plan::Run,
            (true, Some(_)) => Plan::AwaitApproval,
            (true, None) => Plan::Refuse(format!(
                "Tool {} needs an approval, and this agent has no approval store to ask for one",
                call.name
            )),
        }
    }

    async fn charge_round(&self, calls: &[ToolCall]) -> Result<(), Refusal> {
        let Some(gate) = &self.settings.round_gate else {
            return Ok(());
        };
        let round = RoundCharge {
            session_id: &self.session.id,
            run_id: &self.run_id,
            turn: self.turn,
            round: self.rounds,
            calls,
        };
        match guarded(|| gate.charge(round)) {
            Ok(future) => {
                use futures_util::FutureExt;
                std::panic::AssertUnwindSafe(future)
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|_| Err(Refusal::new("the round gate panicked")))
            }
            Err(_) => Err(Refusal::new("the round gate panicked")),
        }
    }

    /// The run's context narrowed to the grant, this turn's visible tools and the run's
    /// validator, reaching `search_tool` (the turn's generated tool, in search mode) as well.
    pub(crate) fn scoped_context(
        &self,
        visible: &ToolGrant,
        search_tool: Option<&ToolDefinition>,
    ) -> ToolExecutionContext {
        let mut scope = ToolScope::new(self.tools.grant().clone())
            .with_visible(visible.clone())
            .with_pinned_tools(Arc::clone(self.tools.pinned()));
        if let Some(validator) = &self.settings.validator {
            scope = scope.with_validator(Arc::clone(validator));
        }
        if let Some(tool) = search_tool {
            scope = scope.with_run_tool(tool.clone());
        }
        self.ctx.clone().with_scope(scope)
    }

    fn answer_unstarted(&mut self, dispatcher: &Dispatcher, calls: &[ToolCall], error: &ErrorInfo) {
        for call in calls {
            let row = dispatcher.settle_unstarted(call, error.clone(), &self.ctx);
            self.session.transcript.push(Message::tool(row));
        }
    }
}

/// Runs the calls planned to run as one batch and refuses the others, rows in call order.
async fn execute(
    dispatcher: &Dispatcher,
    executor: BatchExecutor,
    planned: Vec<PlannedCall>,
    plans: Vec<Plan>,
    ctx: &ToolExecutionContext,
) -> (Vec<ToolResult>, Option<BatchStop>) {
    let mut rows: Vec<Option<ToolResult>> = Vec::with_capacity(planned.len());
    let mut to_run = Vec::with_capacity(planned.len());
    for (planned, plan) in planned.into_iter().zip(plans) {
        match plan {
            Plan::Refuse(message) => {
                rows.push(Some(dispatcher.settle_refused(&planned.call, message, ctx)))
            }
            _ => {
                rows.push(None);
                to_run.push(planned);
            }
        }
    }
    let outcome = executor.run_planned(dispatcher, to_run, ctx).await;
    let mut ran = outcome.results.into_iter();
    let results = rows
        .into_iter()
        .filter_map(|row| row.or_else(|| ran.next()))
        .collect();
    (results, outcome.stopped)
}

/// The run-level error for a batch that stopped early.
pub(crate) fn stop_error(stopped: Option<BatchStop>) -> Result<(), RunError> {
    match stopped {
        None => Ok(()),
        Some(BatchStop::Tripwire(tripwire)) => Err(RunError::Tripwire(tripwire)),
        Some(BatchStop::Cancelled) => Err(RunError::Cancelled),
    }
}
