//! One tool round: the calls of one provider response, from the round limit to their rows.
//!
//! ```text
//! count the round ─► past the limit? tool_round_limit rows, fail
//! ─► round gate (before anything starts) ─► refused? not-dispatched rows, stop cleanly
//!                                          ─► run cancelled while it waits? not-dispatched rows,
//!                                             fail `Cancelled`
//! ─► plan after middleware ─► one batch through the dispatcher, with the run's approval gate
//! ─► no call waits: rows in call order
//! ─► a call waits (asked only once every guard let it through): nothing new is claimed,
//!    claimed calls settle, and the run suspends holding every call of the batch, the ones that
//!    never started included, until it resumes
//! ```

use std::sync::Arc;

use crate::call::{ErrorCode, ErrorInfo, ToolCall};
use crate::clock::now_or_system;
use crate::context::ToolExecutionContext;
use crate::definition::ToolDefinition;
use crate::dispatch::{Dispatcher, PlannedCall};
use crate::error::Refusal;
use crate::grant::ToolGrant;
use crate::panic::guarded_future;
use crate::run::approval_gate::RunApprovals;
use crate::run::approval_store::guarded_store;
use crate::run::batch::{Answer, not_dispatched};
use crate::run::run_loop::RunDriver;
use crate::run::suspension::{HeldCall, stored_visible};
use crate::run::turn::TurnTools;
use crate::run::until_cancelled::until_cancelled;
use crate::run::{
    ApprovalDecision, ApprovalKey, BatchExecutor, BatchStop, LoopStrategy, Message,
    PendingApproval, RoundCharge, RunEnd, RunError, RunEventKind, RunOutcome, SuspendedRun,
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

impl RunDriver<'_> {
    /// What a tool round means for the run: go on, or end here.
    pub(crate) fn round_outcome(&mut self, end: RoundEnd) -> Option<RunOutcome> {
        match end {
            RoundEnd::Done => None,
            RoundEnd::Refused(reason) => Some(self.outcome(RunEnd::Stopped { reason }, None)),
            RoundEnd::Suspended(pending) => Some(self.outcome(RunEnd::Suspended { pending }, None)),
        }
    }

    /// How many calls of a round run at once: the run's setting, or one at a time in the
    /// generate-validate-revise loop, whose tool calls run in order. A resumed round keeps it.
    pub(crate) fn round_concurrency(&self) -> usize {
        match self.settings.strategy {
            LoopStrategy::SingleShot => self.settings.tool_concurrency,
            LoopStrategy::GenerateValidateRevise(_) => 1,
        }
    }

    pub(crate) async fn run_tool_round(
        &mut self,
        calls: Vec<ToolCall>,
        turn_tools: &TurnTools,
    ) -> Result<RoundEnd, RunError> {
        let concurrency = self.round_concurrency();
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
        // A gate may wait on a person.
        let charging = self.charge_round(&calls);
        let Some(charged) = until_cancelled(self.ctx.cancellation(), charging).await else {
            self.answer_unstarted(&dispatcher, &calls, &not_dispatched());
            return Err(RunError::Cancelled);
        };
        if let Err(refusal) = charged {
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
            concurrency: executor.limit_for(&dispatcher, &planned, &ctx),
        });
        let agent = self.session.agent.clone();
        let session_id = Arc::clone(&self.session.id);
        let run_tool = turn_tools.search_tool.as_ref().map(ToolDefinition::name);
        let gate = RunApprovals::new(&agent, &session_id, run_tool);
        let batch = planned.into_iter().map(Answer::Unstarted).collect();
        let grants = (&turn_tools.visible, &turn_tools.searched);
        self.run_batch(batch, &gate, grants, &ctx, executor).await
    }

    /// Dispatches the calls of `batch` that have not started, in call order, through `gate`; then
    /// writes every row of the batch, or, when calls wait for approval, holds the batch.
    pub(crate) async fn run_batch(
        &mut self,
        batch: Vec<Answer>,
        gate: &RunApprovals<'_>,
        (visible, searched): (&ToolGrant, &ToolGrant),
        ctx: &ToolExecutionContext,
        executor: BatchExecutor,
    ) -> Result<RoundEnd, RunError> {
        let dispatcher = self.session.agent.dispatcher.clone();
        let mut to_run = Vec::new();
        let slots: Vec<Option<Answer>> = batch
            .into_iter()
            .map(|answer| match answer {
                Answer::Unstarted(planned) => {
                    to_run.push(planned);
                    None
                }
                answered => Some(answered),
            })
            .collect();
        let gated = executor
            .run_gated(&dispatcher, to_run, ctx, Some(gate))
            .await;
        let mut ran = gated.answers.into_iter();
        let answers: Vec<Answer> = slots
            .into_iter()
            .filter_map(|slot| slot.or_else(|| ran.next()))
            .collect();
        let waiting = answers
            .iter()
            .any(|answer| matches!(answer, Answer::Held(_)));
        if waiting && gated.stopped.is_none() {
            return self
                .suspend(&dispatcher, answers, (visible, searched), ctx)
                .await;
        }
        // Every call has its row now; in a failed batch, the calls that did not start (or were
        // to wait) are not dispatched.
        let rows = answers.into_iter().map(|answer| match answer {
            Answer::Done(result) => result,
            Answer::Held(call) => dispatcher.settle_unstarted(&call, not_dispatched(), ctx),
            Answer::Unstarted(planned) => {
                dispatcher.settle_unstarted(&planned.call, not_dispatched(), ctx)
            }
        });
        self.session.transcript.extend(rows.map(Message::tool));
        stop_error(gated.stopped).map(|()| RoundEnd::Done)
    }

    /// Holds the batch: settled rows, calls waiting for approval (each recorded in the approval
    /// store) and calls that never started.
    async fn suspend(
        &mut self,
        dispatcher: &Dispatcher,
        answers: Vec<Answer>,
        (visible, searched): (&ToolGrant, &ToolGrant),
        ctx: &ToolExecutionContext,
    ) -> Result<RoundEnd, RunError> {
        let mut pending = Vec::new();
        let calls: Vec<HeldCall> = answers
            .into_iter()
            .map(|answer| match answer {
                Answer::Done(result) => HeldCall::Settled { result },
                Answer::Held(call) => {
                    let approval = self.pending_approval(dispatcher, &call);
                    pending.push(approval.clone());
                    // The definition dispatch resolved the call to: the run's pinned one.
                    let tool_version = self
                        .tools
                        .pinned()
                        .get(&call.name)
                        .map(ToolDefinition::version_hash);
                    HeldCall::Pending {
                        call,
                        approval,
                        tool_version,
                    }
                }
                Answer::Unstarted(PlannedCall {
                    call,
                    middleware_failure,
                }) => HeldCall::Unstarted {
                    call,
                    middleware_failure,
                },
            })
            .collect();
        // The gate holds calls only when the agent has a store.
        let Some(store) = self.session.agent.approvals.clone() else {
            self.write_held_refused(dispatcher, calls, ctx, "this agent has no approval store");
            return Err(RunError::NoApprovalStore);
        };
        let cancellation = ctx.cancellation();
        for (at, approval) in pending.iter().enumerate() {
            let requested =
                until_cancelled(cancellation, guarded_store(|| store.request(approval))).await;
            let (why, error) = match requested {
                Some(Ok(())) => continue,
                Some(Err(error)) => (error.to_string(), RunError::Approval(error)),
                // A store that does not answer must not hold a cancelled run.
                None => ("the run was cancelled".to_owned(), RunError::Cancelled),
            };
            // Without a durable record there is no approval to wait for: refuse every waiting
            // call, write the whole batch, and fail. The requests already made are decided as
            // refused (as far as the store still answers, and unless the run was cancelled), so
            // nobody approves a call that will not run.
            for requested in &pending[..at] {
                let refusal = ApprovalDecision::refuse(
                    &requested.key,
                    format!("the run could not wait for approval: {why}"),
                );
                let _ =
                    until_cancelled(cancellation, guarded_store(|| store.decide(&refusal))).await;
            }
            self.write_held_refused(dispatcher, calls, ctx, &why);
            return Err(error);
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
            searched: (searched != visible)
                .then(|| stored_visible(searched))
                .flatten(),
            calls,
        });
        Ok(RoundEnd::Suspended(pending))
    }

    /// Writes a held batch to the transcript, refusing the calls that were waiting; the calls that
    /// never started are not dispatched.
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
                HeldCall::Unstarted { call, .. } => {
                    dispatcher.settle_unstarted(&call, not_dispatched(), ctx)
                }
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
        guarded_future(|| gate.charge(round))
            .await
            .unwrap_or_else(|_| Err(Refusal::new("the round gate panicked")))
    }

    /// The run's context narrowed to the grant, this turn's visible tools, the run's validator
    /// and the agent's approval policy, reaching `search_tool` (the turn's generated tool, in
    /// search mode) as well.
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
        // The batch asks through its approval gate; a tool's nested calls have none, and must
        // be refused rather than run unapproved.
        if let Some(policy) = &self.session.agent.approval_policy {
            let policy = Arc::clone(policy);
            scope = scope.with_approval_check(Arc::new(
                move |tool: &ToolDefinition, arguments: &serde_json::Value| {
                    policy.requires_approval(tool, arguments)
                },
            ));
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

/// The run-level error for a batch that stopped early.
pub(crate) fn stop_error(stopped: Option<BatchStop>) -> Result<(), RunError> {
    match stopped {
        None => Ok(()),
        Some(BatchStop::Tripwire(tripwire)) => Err(RunError::Tripwire(Box::new(tripwire))),
        Some(BatchStop::Cancelled) => Err(RunError::Cancelled),
    }
}
