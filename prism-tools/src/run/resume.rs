//! Resuming a suspended run with approval decisions.
//!
//! Decisions are recorded in the agent's [`ApprovalStore`](crate::run::ApprovalStore) first; a
//! decision whose key does not match a pending call exactly (another tool, other arguments, an
//! unknown call) is refused there and nothing runs. Until every pending call has a decision the
//! run stays suspended. Then each decision is consumed (so it acts once), approved calls run as
//! one batch through the dispatcher with the suspended turn's scope, refused calls get a
//! `permission_denied` row, the held batch reaches the transcript in call order, and the run
//! goes on from the turn it stopped at.

use crate::dispatch::PlannedCall;
use crate::run::run_loop::RunDriver;
use crate::run::suspension::HeldCall;
use crate::run::tool_round::stop_error;
use crate::run::{
    ApprovalDecision, ApprovalState, ApprovalStoreError, ApprovalVerdict, BatchExecutor, Message,
    RunEnd, RunError, RunEventKind, RunOptions, RunOutcome, Session,
};

impl Session {
    /// Records `decisions` and, once every pending call has one, finishes the suspended batch and
    /// continues the run with the agent's settings.
    pub async fn resume(
        &mut self,
        decisions: impl IntoIterator<Item = ApprovalDecision>,
    ) -> Result<RunOutcome, RunError> {
        self.resume_with(decisions, RunOptions::new()).await
    }

    /// [`resume`](Self::resume) with run options. `tool_names` can only narrow the stored grant.
    pub async fn resume_with(
        &mut self,
        decisions: impl IntoIterator<Item = ApprovalDecision>,
        options: RunOptions,
    ) -> Result<RunOutcome, RunError> {
        let Some(suspended) = self.suspended.clone() else {
            return Err(RunError::NotSuspended);
        };
        let Some(store) = self.agent.approvals.clone() else {
            return Err(RunError::NoApprovalStore);
        };
        for decision in decisions {
            store.decide(&decision).await.map_err(RunError::Approval)?;
        }
        let mut waiting = Vec::new();
        for approval in suspended.pending() {
            match store.get(&approval.key).await.map_err(RunError::Approval)? {
                Some(record) if record.state == ApprovalState::Pending => {
                    waiting.push(approval.clone())
                }
                Some(_) => {}
                // The store lost the request: nothing can approve the call any more.
                None => return Err(RunError::Approval(ApprovalStoreError::NotFound)),
            }
        }

        let driver = RunDriver::resume(self, &suspended, options)?;
        if !waiting.is_empty() {
            return Ok(driver.outcome(RunEnd::Suspended { pending: waiting }, None));
        }
        driver.session.suspended = None;
        let dispatcher = driver.session.agent.dispatcher.clone();
        // A suspended batch never holds `search_tools` (it does not wait for approval), so the
        // resumed calls need no generated tool.
        let ctx = driver.scoped_context(&suspended.visible_grant(), None);

        let mut rows = Vec::with_capacity(suspended.calls.len());
        let mut approved = Vec::new();
        let mut refused = Vec::new();
        let mut to_run = Vec::new();
        for held in suspended.calls {
            match held {
                HeldCall::Settled { result } => rows.push(Some(result)),
                HeldCall::Pending { call, approval } => {
                    match store.consume(&approval.key).await {
                        Ok(ApprovalVerdict::Approved) => {
                            approved.push(call.id.clone());
                            rows.push(None);
                            to_run.push(PlannedCall {
                                call,
                                middleware_failure: None,
                            });
                        }
                        Ok(ApprovalVerdict::Refused { reason }) => {
                            refused.push(call.id.clone());
                            let message = match reason {
                                Some(reason) => format!("The call was not approved: {reason}"),
                                None => "The call was not approved".to_owned(),
                            };
                            rows.push(Some(dispatcher.settle_refused(&call, message, &ctx)));
                        }
                        // A decision that cannot be confirmed runs nothing.
                        Err(error) => {
                            refused.push(call.id.clone());
                            let message = format!("The approval could not be confirmed: {error}");
                            rows.push(Some(dispatcher.settle_refused(&call, message, &ctx)));
                        }
                    }
                }
            }
        }
        driver.emit(RunEventKind::RunResumed { approved, refused });

        let executor = BatchExecutor::new(driver.settings.tool_concurrency);
        let outcome = executor.run_planned(&dispatcher, to_run, &ctx).await;
        let mut ran = outcome.results.into_iter();
        let rows = rows
            .into_iter()
            .filter_map(|row| row.or_else(|| ran.next()));
        driver.session.transcript.extend(rows.map(Message::tool));
        if let Err(error) = stop_error(outcome.stopped) {
            return Err(driver.fail(error));
        }
        driver.drive().await
    }
}
