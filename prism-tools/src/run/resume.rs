//! Resuming a suspended run with approval decisions.
//!
//! A stale session state is refused with [`RunError::StaleSession`], which says what is stale
//! and what the host can do, and nothing of the batch runs: a stored copy resumed before (the
//! store holds its approvals as acted on) or being resumed by another worker at the same time
//! (the first approval a resume acts on is its claim on the batch), a copy a later run of the
//! session overtook (the store holds the call id for that run; checked before any decision is
//! recorded, so none decides the later run's call), or a decision for a call the agent's store
//! has no record of (another store than the run suspended with, or one that lost the request).
//!
//! Decisions are recorded in the agent's [`ApprovalStore`](crate::run::ApprovalStore) first; a
//! decision whose key does not match a pending call exactly (another tool, other arguments, an
//! unknown call) is refused there and nothing runs; one on another session's call is refused
//! (`NotFound`) before any decision is recorded, as the store may be shared. A resume that
//! failed after recording its decisions can be retried on the same session with the same
//! decisions; a decision another worker recorded first is refused (`AlreadyDecided`), so of two
//! workers resuming one stored session with the same decision, one goes on. Until every pending
//! call has a decision the run stays suspended (a request the store lost can never be decided,
//! and its call is refused). Then each decision is consumed (so it acts once) and the held batch
//! goes on with the suspended turn's scope: refused calls get a `permission_denied` row (so does
//! an approved call whose tool was removed from the registry meanwhile), and the approved calls
//! and the calls that never started go through the whole pipeline again, in call order (every
//! guard checks them anew; an approval only answers the approval gate). A call
//! further on may wait for approval in turn, which suspends the run again; otherwise the held
//! batch reaches the transcript in call order and the run goes on from the turn it stopped at.

use std::sync::Arc;

use crate::call::{CallId, shown_call_id};
use crate::definition::ToolDefinition;
use crate::dispatch::PlannedCall;
use crate::run::approval_gate::{Approved, RunApprovals};
use crate::run::approval_store::guarded_store;
use crate::run::batch::Answer;
use crate::run::run_loop::RunDriver;
use crate::run::suspension::HeldCall;
use crate::run::until_cancelled::until_cancelled;
use crate::run::{
    ApprovalDecision, ApprovalState, ApprovalStoreError, ApprovalVerdict, BatchExecutor, Message,
    RunEnd, RunError, RunEventKind, RunOptions, RunOutcome, Session, SuspendedRun,
};
use crate::search::SEARCH_TOOLS_NAME;

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
        // The store is shared: a decision handed to the wrong session must not decide another
        // session's call. Checked before any decision is recorded.
        let decisions: Vec<ApprovalDecision> = decisions.into_iter().collect();
        if decisions
            .iter()
            .any(|decision| *decision.key.session_id != *self.id)
        {
            return Err(RunError::Approval(ApprovalStoreError::NotFound));
        }
        // A store that does not answer must not hold a cancelled resume. Until the batch goes
        // on, a cancelled resume changes nothing but the decisions it recorded, which a retry
        // may bring again.
        let cancellation = options.cancellation.clone().unwrap_or_default();
        let Some(listed) =
            until_cancelled(&cancellation, guarded_store(|| store.pending(&self.id))).await
        else {
            return Err(RunError::Cancelled);
        };
        let waits_for = |id: &CallId| suspended.pending().any(|asked| asked.key.call_id == *id);
        if let Some(later) = listed
            .map_err(RunError::Approval)?
            .iter()
            .find(|listed| listed.run_id != suspended.run_id && waits_for(&listed.key.call_id))
        {
            return Err(stale(&later.key.call_id, Stale::Overtaken(&later.run_id)));
        }
        for decision in decisions {
            let Some(recorded) =
                until_cancelled(&cancellation, guarded_store(|| store.decide(&decision))).await
            else {
                return Err(RunError::Cancelled);
            };
            match recorded {
                Ok(()) => self.recorded.push(decision),
                // This session recorded it in a resume that then failed: a retry brings it again.
                // Another session (a worker racing this one) recording it first is no such case.
                Err(ApprovalStoreError::AlreadyDecided) if self.recorded.contains(&decision) => {}
                // The decision answers exactly a call this run waits for, and the store says
                // that call was acted on, or has no record of it: the state is stale, not the
                // decision wrong.
                Err(
                    error @ (ApprovalStoreError::AlreadyConsumed | ApprovalStoreError::NotFound),
                ) if suspended.pending().any(|asked| asked.key == decision.key) => {
                    let why = match error {
                        ApprovalStoreError::NotFound => Stale::Lost,
                        _ => Stale::ResumedBefore(&suspended.run_id),
                    };
                    return Err(stale(&decision.key.call_id, why));
                }
                Err(error) => return Err(RunError::Approval(error)),
            }
        }
        let mut waiting = Vec::new();
        for approval in suspended.pending() {
            let Some(record) =
                until_cancelled(&cancellation, guarded_store(|| store.get(&approval.key))).await
            else {
                return Err(RunError::Cancelled);
            };
            let record = record.map_err(RunError::Approval)?;
            let id = &approval.key.call_id;
            match &record {
                Some(record) if record.pending.run_id != suspended.run_id => {
                    return Err(stale(id, Stale::Overtaken(&record.pending.run_id)));
                }
                Some(record) if matches!(record.state, ApprovalState::Consumed { .. }) => {
                    return Err(stale(id, Stale::ResumedBefore(&suspended.run_id)));
                }
                _ => {}
            }
            // A request the store lost can never be decided: its call is refused below, when
            // its decision cannot be consumed, rather than holding the run forever.
            if record.is_some_and(|record| record.state == ApprovalState::Pending) {
                waiting.push(approval.clone());
            }
        }

        let mut driver = RunDriver::resume(self, &suspended, options)?;
        if !waiting.is_empty() {
            return Ok(driver.outcome(RunEnd::Suspended { pending: waiting }, None));
        }
        let dispatcher = driver.session.agent.dispatcher.clone();
        let visible = suspended.visible_grant();
        let searched = suspended.searched_grant();
        let search_tool = driver.resumed_search_tool(&suspended);
        let ctx = driver.scoped_context(&visible, search_tool.as_ref());

        let mut batch = Vec::with_capacity(suspended.calls.len());
        let mut keys = Vec::new();
        let mut approved = Vec::new();
        let mut refused = Vec::new();
        let mut claimed = false;
        for held in suspended.calls {
            batch.push(match held {
                HeldCall::Settled { result } => Answer::Done(result),
                HeldCall::Unstarted {
                    call,
                    middleware_failure,
                } => Answer::Unstarted(PlannedCall {
                    call,
                    middleware_failure,
                }),
                HeldCall::Pending {
                    call,
                    approval,
                    tool_version,
                } => {
                    let consumed = until_cancelled(
                        &cancellation,
                        guarded_store(|| store.consume(&approval.key)),
                    )
                    .await;
                    // The first approval acted on is this resume's claim on the batch: a worker
                    // that finds it taken (another worker resuming the same state, past the
                    // checks above at the same time) stops here, before anything ran or changed.
                    if !claimed
                        && matches!(consumed, Some(Err(ApprovalStoreError::AlreadyConsumed)))
                    {
                        return Err(stale(&call.id, Stale::ResumedBefore(&suspended.run_id)));
                    }
                    claimed = true;
                    let refusal = match consumed {
                        // The approval is spent either way: it covered that tool, now gone.
                        Some(Ok(ApprovalVerdict::Approved))
                            if !dispatcher.registry().contains(&call.name) =>
                        {
                            Some(format!(
                                "The call was approved, but the tool {} was removed while the \
                                 run waited, so it did not run",
                                call.name
                            ))
                        }
                        Some(Ok(ApprovalVerdict::Approved)) => None,
                        Some(Ok(ApprovalVerdict::Refused { reason })) => Some(match reason {
                            Some(reason) => format!("The call was not approved: {reason}"),
                            None => "The call was not approved".to_owned(),
                        }),
                        // A decision that cannot be confirmed runs nothing.
                        Some(Err(error)) => {
                            Some(format!("The approval could not be confirmed: {error}"))
                        }
                        None => Some(
                            "The run was cancelled before the approval was confirmed".to_owned(),
                        ),
                    };
                    match refusal {
                        None => {
                            approved.push(call.id.clone());
                            keys.push(Approved::new(approval.key, tool_version));
                            Answer::Unstarted(PlannedCall {
                                call,
                                middleware_failure: None,
                            })
                        }
                        Some(message) => {
                            refused.push(call.id.clone());
                            Answer::Done(dispatcher.settle_refused(&call, message, &ctx))
                        }
                    }
                }
            });
        }
        driver.session.suspended = None;
        driver.session.recorded.clear();
        driver.emit(RunEventKind::RunResumed { approved, refused });

        let agent = driver.session.agent.clone();
        let session_id = Arc::clone(&driver.session.id);
        let run_tool = search_tool.as_ref().map(ToolDefinition::name);
        let gate = RunApprovals::new(&agent, &session_id, run_tool).approved(keys);
        let executor = BatchExecutor::new(driver.round_concurrency());
        match driver
            .run_batch(batch, &gate, (&visible, &searched), &ctx, executor)
            .await
        {
            Ok(end) => match driver.round_outcome(end) {
                Some(outcome) => Ok(outcome),
                None => driver.drive().await,
            },
            Err(error) => Err(driver.fail(error)),
        }
    }
}

/// What makes a stored session state stale.
enum Stale<'a> {
    /// The store holds the call's approval as acted on: this copy of the state, of run `.0`, was
    /// resumed before (or another worker is resuming it now).
    ResumedBefore(&'a str),
    /// The store holds the call id for a later run of the session, `.0`.
    Overtaken(&'a str),
    /// The store has no record of the call a decision answers.
    Lost,
}

/// The refusal of a stale state: what is stale about call `id`, and what the host can do. It
/// names call and run ids, never arguments.
fn stale(id: &CallId, why: Stale<'_>) -> RunError {
    let id = id.shown();
    let message = match why {
        // A run's id is made from its session's, which the host chooses: cut as a call id is.
        Stale::ResumedBefore(run) => format!(
            "the approval of call {id} was already acted on, so this copy of the session state \
             (run {}) was resumed before, or is being resumed by another worker; restore the \
             state saved after that resume, or start a new run",
            shown_call_id(run)
        ),
        Stale::Overtaken(run) => format!(
            "the approval store holds call {id} of this session for another run ({}), started \
             after this state was saved; restore the session's latest state instead",
            shown_call_id(run)
        ),
        Stale::Lost => format!(
            "the approval store has no record of call {id}, which this run waits for: it is not \
             the store the run suspended with, or it lost the request; resume with the store the \
             run suspended with, or resume without a decision for this call to answer it as \
             refused"
        ),
    };
    RunError::StaleSession { message }
}

impl RunDriver<'_> {
    /// The suspended turn's `search_tools`, built again over the tools it searched when a
    /// call to it never started: only then can the resumed batch need it.
    fn resumed_search_tool(&self, suspended: &SuspendedRun) -> Option<ToolDefinition> {
        let needed = suspended.calls.iter().any(|held| {
            matches!(held, HeldCall::Unstarted { call, .. } if call.name == SEARCH_TOOLS_NAME)
        });
        if !needed {
            return None;
        }
        let searched = suspended.searched_grant();
        let tools: Vec<ToolDefinition> = self
            .tools
            .tools()
            .iter()
            .filter(|tool| searched.allows(tool.name()))
            .cloned()
            .collect();
        let latest_input = self
            .session
            .transcript
            .iter()
            .rev()
            .find_map(|row| match row {
                Message::User { content } => Some(content.as_str()),
                _ => None,
            });
        self.disclosure
            .describe(suspended.turn, latest_input, &tools)
            .search_tool
    }
}
