//! The turn loop of one run, for both loop strategies.
//!
//! ```text
//! start:  merge settings ─► snapshot the grant ─► check skills (and schemas, when secure)
//!         ─► resolve disclosure (search mode: reserved name, index) ─► append the input
//! turn:   narrow + disclose ─► provider ─► append the answer
//!   single-shot:               no calls? done.  calls? one tool round (see tool_round.rs)
//!   generate-validate-revise:  calls? inert rows, or a bounded tool round (then next turn)
//!                              ─► validator: accept (done) or revise (feedback, next turn)
//! ```
//!
//! Rows are appended before any failure is returned, so a failed run still answers every call id
//! the model made. A suspended run keeps its place (turn, rounds, revisions) in the session's
//! state and [`RunDriver::resume`] picks it up there.

use std::sync::Arc;

use serde_json::Value;

use crate::call::ToolCall;
use crate::clock::now_or_system;
use crate::context::ToolExecutionContext;
use crate::panic::guarded_future;
use crate::run::config::Resolved;
use crate::run::run_disclosure::RunDisclosure;
use crate::run::snapshot::RunTools;
use crate::run::turn::{TurnInput, TurnTools, assemble};
use crate::run::until_cancelled::until_cancelled;
use crate::run::{
    LoopStrategy, Message, ProviderError, ProviderRequest, ProviderResponse, RunEnd, RunError,
    RunEvent, RunEventKind, RunOptions, RunOutcome, RunSummary, Session, SuspendedRun,
    TurnMetadata, TurnToolsMetadata,
};

/// One run in progress over a session.
pub(crate) struct RunDriver<'s> {
    pub(crate) session: &'s mut Session,
    pub(crate) settings: Resolved,
    pub(crate) tools: RunTools,
    pub(crate) disclosure: RunDisclosure,
    pub(crate) ctx: ToolExecutionContext,
    pub(crate) run_id: Arc<str>,
    pub(crate) turn: u32,
    pub(crate) rounds: u32,
    pub(crate) revisions: u32,
    /// The model's latest text.
    pub(crate) text: String,
}

impl<'s> RunDriver<'s> {
    /// Checks everything that can fail before a provider turn, then appends the input.
    pub(crate) fn start(
        session: &'s mut Session,
        input: String,
        options: RunOptions,
    ) -> Result<Self, RunError> {
        if session.suspended.is_some() {
            return Err(RunError::Suspended);
        }
        let (settings, tools, disclosure) = prepare(session, &options, session.ceiling.as_deref())?;
        session.runs += 1;
        let run_id: Arc<str> = format!("{}-run-{}", session.id, session.runs).into();
        session.grant = Some(tools.stored_names());
        session.transcript.push(Message::user(input));
        let driver = Self::with_state(session, settings, tools, disclosure, &options, run_id);
        driver.emit(RunEventKind::RunStarted {
            grant: driver.tools.stored_names(),
        });
        Ok(driver)
    }

    /// Picks a suspended run up where it stopped. The grant is the stored one, intersected with
    /// the live registry (and with `options.tool_names`, if set): never wider.
    pub(crate) fn resume(
        session: &'s mut Session,
        suspended: &SuspendedRun,
        options: RunOptions,
    ) -> Result<Self, RunError> {
        let (settings, tools, disclosure) = prepare(session, &options, session.grant.as_deref())?;
        let run_id: Arc<str> = suspended.run_id.as_str().into();
        let mut driver = Self::with_state(session, settings, tools, disclosure, &options, run_id);
        driver.turn = suspended.turn;
        driver.rounds = suspended.rounds;
        driver.revisions = suspended.revisions;
        driver.text = suspended.text.clone();
        Ok(driver)
    }

    fn with_state(
        session: &'s mut Session,
        settings: Resolved,
        tools: RunTools,
        disclosure: RunDisclosure,
        options: &RunOptions,
        run_id: Arc<str>,
    ) -> Self {
        let ctx = ToolExecutionContext::new()
            .with_session_id(Arc::clone(&session.id))
            .with_run_id(Arc::clone(&run_id))
            .with_cancellation(options.cancellation.clone().unwrap_or_default());
        Self {
            session,
            settings,
            tools,
            disclosure,
            ctx,
            run_id,
            turn: 0,
            rounds: 0,
            revisions: 0,
            text: String::new(),
        }
    }

    /// Turns until the run completes, stops, suspends or fails.
    pub(crate) async fn drive(mut self) -> Result<RunOutcome, RunError> {
        loop {
            if self.ctx.is_cancelled() {
                return Err(self.fail(RunError::Cancelled));
            }
            if self.turn >= self.settings.max_turns {
                let limit = self.settings.max_turns;
                return Err(self.fail(RunError::TurnLimit { limit }));
            }
            self.turn += 1;
            let turn_tools = match self.assemble_turn().await {
                Ok(turn_tools) => turn_tools,
                Err(error) => return Err(self.fail(error)),
            };
            let mut answer = self.ask_provider(&turn_tools).await;
            // A host secret source's key is known only once a turn has fetched it.
            if let Err(error) = self.session.agent.learn_provider_secrets() {
                answer = Err(RunError::Provider {
                    turn: self.turn,
                    error,
                });
            }
            let response = match answer {
                Ok(response) => response,
                Err(error) => return Err(self.fail(error)),
            };
            self.session
                .transcript
                .push(Message::from_response(&response));
            let ProviderResponse {
                text, tool_calls, ..
            } = response;
            self.text = text;
            let step = match self.settings.strategy {
                LoopStrategy::SingleShot => self.single_shot_step(tool_calls, &turn_tools).await,
                LoopStrategy::GenerateValidateRevise(artifact) => {
                    self.artifact_step(artifact, tool_calls, &turn_tools).await
                }
            };
            match step {
                Ok(None) => {}
                Ok(Some(outcome)) => return Ok(outcome),
                Err(error) => return Err(self.fail(error)),
            }
        }
    }

    /// `Some` when the run ends with this turn.
    async fn single_shot_step(
        &mut self,
        calls: Vec<ToolCall>,
        turn_tools: &TurnTools,
    ) -> Result<Option<RunOutcome>, RunError> {
        if calls.is_empty() {
            return Ok(Some(self.finish(None)));
        }
        let end = self.run_tool_round(calls, turn_tools).await?;
        Ok(self.round_outcome(end))
    }

    pub(crate) fn finish(&mut self, artifact: Option<Value>) -> RunOutcome {
        self.emit(RunEventKind::RunFinished {
            turns: self.turn,
            tool_rounds: self.rounds,
        });
        self.outcome(RunEnd::Completed, artifact)
    }

    pub(crate) fn outcome(&self, end: RunEnd, artifact: Option<Value>) -> RunOutcome {
        RunOutcome {
            summary: RunSummary {
                run_id: self.run_id.to_string(),
                text: self.text.clone(),
                turns: self.turn,
                tool_rounds: self.rounds,
                artifact,
                revisions: self.revisions,
            },
            end,
        }
    }

    async fn assemble_turn(&mut self) -> Result<TurnTools, RunError> {
        let transcript = &self.session.transcript;
        let last_assistant_text = transcript.iter().rev().find_map(|row| match row {
            Message::Assistant { content, .. } => Some(content.as_str()),
            _ => None,
        });
        let latest_input = transcript.iter().rev().find_map(|row| match row {
            Message::User { content } => Some(content.as_str()),
            _ => None,
        });
        let input = TurnInput {
            turn: self.turn,
            last_assistant_text,
            latest_input,
        };
        let redactor = self.session.agent.dispatcher.redactor();
        let assembled = assemble(
            &self.tools,
            &self.settings,
            &self.disclosure,
            input,
            redactor,
        );
        // The narrowing callback is the host's and may wait on anything.
        let turn_tools = until_cancelled(self.ctx.cancellation(), assembled)
            .await
            .ok_or(RunError::Cancelled)??;
        if !turn_tools.clamped.is_empty() {
            self.emit(RunEventKind::ToolNarrowingClamped {
                turn: self.turn,
                dropped: turn_tools
                    .clamped
                    .iter()
                    .map(|name| redactor.redact_str(name).into_owned())
                    .collect(),
            });
        }
        if let Some(reason) = &turn_tools.full_disclosure {
            let message = reason.redacted_message(redactor);
            self.emit(RunEventKind::ToolsFullyDisclosed {
                turn: self.turn,
                reason: reason.code().to_owned(),
                message,
            });
        }
        Ok(turn_tools)
    }

    async fn ask_provider(&self, turn_tools: &TurnTools) -> Result<ProviderResponse, RunError> {
        let metadata = TurnMetadata {
            session_id: self.session.id.to_string(),
            run_id: self.run_id.to_string(),
            turn: self.turn,
            tools: turn_tools.metadata.clone(),
        };
        self.emit(RunEventKind::TurnStarted {
            turn: self.turn,
            metadata: TurnToolsMetadata {
                tools: turn_tools.metadata.clone(),
            },
        });
        let settings = &self.settings;
        let request =
            ProviderRequest::new(&self.session.transcript, &turn_tools.described, &metadata)
                .with_instructions(settings.instructions.as_deref())
                .with_tool_choice(&settings.tool_choice)
                .with_parallel_tool_calls(settings.parallel_tool_calls)
                .with_observer(settings.provider_events.as_deref())
                .with_redactor(Some(self.session.agent.dispatcher.redactor()));
        let provider = &self.session.agent.provider;
        let cancellation = self.ctx.cancellation();
        // The run's cancellation drops the provider's future, and with it any connection it
        // holds open, instead of waiting for the turn to end.
        let turn = guarded_future(|| provider.complete(request));
        let answer = until_cancelled(cancellation, turn)
            .await
            .ok_or(RunError::Cancelled)?
            .unwrap_or_else(|panic| {
                Err(ProviderError::new(format!(
                    "the provider panicked: {panic}"
                )))
            });
        answer.map_err(|error| {
            let redactor = self.session.agent.dispatcher.redactor();
            RunError::Provider {
                turn: self.turn,
                error: error.redacted(redactor),
            }
        })
    }

    pub(crate) fn emit(&self, kind: RunEventKind) {
        let agent = &self.session.agent;
        if agent.sinks.is_empty() {
            return;
        }
        agent.emit(&RunEvent {
            session_id: Arc::clone(&self.session.id),
            run_id: Arc::clone(&self.run_id),
            at: now_or_system(&*agent.clock),
            kind,
        });
    }

    /// Reports a failure, then hands it back to be returned.
    pub(crate) fn fail(&self, error: RunError) -> RunError {
        let message = error.to_string();
        let redactor = self.session.agent.dispatcher.redactor();
        self.emit(RunEventKind::RunFailed {
            error: redactor.redact_str(&message).into_owned(),
        });
        error
    }
}

/// Settings, grant and disclosure for a run, and every check that must pass before anything is
/// written.
fn prepare(
    session: &Session,
    options: &RunOptions,
    ceiling: Option<&[String]>,
) -> Result<(Resolved, RunTools, RunDisclosure), RunError> {
    let settings = Resolved::merge(&session.agent.config, options);
    if matches!(settings.strategy, LoopStrategy::GenerateValidateRevise(_))
        && settings.artifact_validator.is_none()
    {
        return Err(missing_artifact_validator());
    }
    let dispatcher = &session.agent.dispatcher;
    let tools = RunTools::snapshot(
        dispatcher.registry(),
        options.tool_names.as_deref(),
        ceiling,
        |name| dispatcher.filters_allow(name),
    )?;
    for skill in &settings.skills {
        let missing: Vec<String> = skill
            .tool_names
            .iter()
            .filter(|name| !tools.grant().allows(name))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(RunError::MissingSkillTools {
                skill: skill.name.clone(),
                names: missing,
            });
        }
    }
    let disclosure = RunDisclosure::prepare(&settings, &tools, &session.agent, &session.activated)?;
    Ok((settings, tools, disclosure))
}

pub(crate) fn missing_artifact_validator() -> RunError {
    RunError::Misconfigured {
        message: "the generate-validate-revise loop needs an artifact validator".into(),
    }
}
