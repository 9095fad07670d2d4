//! The single-shot tool loop of one run.
//!
//! ```text
//! start:  merge settings ─► snapshot the grant ─► check skills ─► append the input
//! turn:   narrow + disclose ─► provider ─► append the answer ─► no calls? done
//!         ─► count a tool round (past the limit: tool_round_limit rows, fail)
//!         ─► plan after middleware ─► batch (ordered rows) ─► tripwire or abort? fail
//! ```
//!
//! Rows are appended before any failure is returned, so a failed run still answers every call id
//! the model made.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;

use crate::call::{ErrorCode, ErrorInfo, ToolCall};
use crate::context::ToolExecutionContext;
use crate::panic::{guarded, payload_message};
use crate::run::config::Resolved;
use crate::run::snapshot::RunTools;
use crate::run::turn::{TurnInput, TurnTools, assemble};
use crate::run::{
    BatchExecutor, BatchStop, LoopStrategy, Message, ProviderError, ProviderRequest,
    ProviderResponse, RunError, RunEvent, RunEventKind, RunOptions, RunOutcome, RunSummary,
    Session, TurnMetadata, TurnToolsMetadata,
};
use crate::scope::ToolScope;

/// One run in progress over a session.
pub(crate) struct RunDriver<'s> {
    session: &'s mut Session,
    settings: Resolved,
    tools: RunTools,
    ctx: ToolExecutionContext,
    run_id: Arc<str>,
    turn: u32,
    rounds: u32,
}

impl<'s> RunDriver<'s> {
    /// Checks everything that can fail before a provider turn, then appends the input.
    pub(crate) fn start(
        session: &'s mut Session,
        input: String,
        options: RunOptions,
    ) -> Result<Self, RunError> {
        let settings = Resolved::merge(&session.agent.config, &options);
        let tools = RunTools::snapshot(
            session.agent.dispatcher.registry(),
            options.tool_names.as_deref(),
            session.ceiling.as_deref(),
        )?;
        check_skills(&settings, &tools)?;

        session.runs += 1;
        let run_id: Arc<str> = format!("{}-run-{}", session.id, session.runs).into();
        session.grant = Some(tools.stored_names());
        let ctx = ToolExecutionContext::new()
            .with_session_id(Arc::clone(&session.id))
            .with_run_id(Arc::clone(&run_id))
            .with_cancellation(options.cancellation.unwrap_or_default());
        session.transcript.push(Message::user(input));
        let driver = Self {
            session,
            settings,
            tools,
            ctx,
            run_id,
            turn: 0,
            rounds: 0,
        };
        driver.emit(RunEventKind::RunStarted {
            grant: driver.tools.stored_names(),
        });
        Ok(driver)
    }

    /// Turns until the model answers without calls.
    pub(crate) async fn drive(mut self) -> Result<RunOutcome, RunError> {
        let LoopStrategy::SingleShot = self.settings.strategy;
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
            let response = match self.ask_provider(&turn_tools).await {
                Ok(response) => response,
                Err(error) => return Err(self.fail(error)),
            };
            let ProviderResponse {
                text, tool_calls, ..
            } = response;
            self.session
                .transcript
                .push(Message::assistant(text.clone(), tool_calls.clone()));
            if tool_calls.is_empty() {
                self.emit(RunEventKind::RunFinished {
                    turns: self.turn,
                    tool_rounds: self.rounds,
                });
                return Ok(RunOutcome::Completed(RunSummary {
                    run_id: self.run_id.to_string(),
                    text,
                    turns: self.turn,
                    tool_rounds: self.rounds,
                }));
            }
            if let Err(error) = self.run_tool_round(tool_calls, &turn_tools).await {
                return Err(self.fail(error));
            }
        }
    }

    async fn assemble_turn(&mut self) -> Result<TurnTools, RunError> {
        let last_assistant_text = self
            .session
            .transcript
            .iter()
            .rev()
            .find_map(|row| match row {
                Message::Assistant { content, .. } => Some(content.as_str()),
                _ => None,
            });
        let latest_input = self
            .session
            .transcript
            .iter()
            .rev()
            .find_map(|row| match row {
                Message::User { content } => Some(content.as_str()),
                _ => None,
            });
        let input = TurnInput {
            turn: self.turn,
            last_assistant_text,
            latest_input,
        };
        let redactor = self.session.agent.dispatcher.redactor();
        let turn_tools = assemble(&self.tools, &self.settings, input, redactor).await?;
        if !turn_tools.clamped.is_empty() {
            self.emit(RunEventKind::ToolNarrowingClamped {
                turn: self.turn,
                dropped: turn_tools.clamped.clone(),
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
        let request = ProviderRequest {
            transcript: &self.session.transcript,
            tools: &turn_tools.described,
            metadata: &metadata,
        };
        let provider = &self.session.agent.provider;
        let answer = match guarded(|| provider.complete(request)) {
            Ok(future) => AssertUnwindSafe(future)
                .catch_unwind()
                .await
                .unwrap_or_else(|panic| {
                    Err(ProviderError::new(format!(
                        "the provider panicked: {}",
                        payload_message(panic)
                    )))
                }),
            Err(panic) => Err(ProviderError::new(format!(
                "the provider panicked: {panic}"
            ))),
        };
        answer.map_err(|error| {
            let redactor = self.session.agent.dispatcher.redactor();
            RunError::Provider {
                turn: self.turn,
                error: ProviderError::new(redactor.redact_str(error.message())),
            }
        })
    }

    /// Runs one response's calls and appends their rows in call order.
    async fn run_tool_round(
        &mut self,
        calls: Vec<ToolCall>,
        turn_tools: &TurnTools,
    ) -> Result<(), RunError> {
        let dispatcher = &self.session.agent.dispatcher;
        self.rounds += 1;
        if self.rounds > self.settings.max_tool_rounds {
            let limit = self.settings.max_tool_rounds;
            for call in &calls {
                let error = ErrorInfo::new(
                    ErrorCode::ToolRoundLimit,
                    format!("The run allows {limit} tool rounds; this call did not run"),
                );
                let row = dispatcher.settle_unstarted(call, error, &self.ctx);
                self.session.transcript.push(Message::tool(row));
            }
            return Err(RunError::ToolRoundLimit { limit });
        }

        let mut scope =
            ToolScope::new(self.tools.grant().clone()).with_visible(turn_tools.visible.clone());
        if let Some(validator) = &self.settings.validator {
            scope = scope.with_validator(Arc::clone(validator));
        }
        let ctx = self.ctx.clone().with_scope(scope);
        let executor = BatchExecutor::new(self.settings.tool_concurrency);
        let planned: Vec<_> = calls
            .into_iter()
            .map(|call| dispatcher.plan(call))
            .collect();
        self.emit(RunEventKind::ToolBatchStarted {
            turn: self.turn,
            round: self.rounds,
            calls: planned.len(),
            concurrency: executor.limit_for(dispatcher, &planned),
        });
        let outcome = executor.run_planned(dispatcher, planned, &ctx).await;
        self.session
            .transcript
            .extend(outcome.results.into_iter().map(Message::tool));
        match outcome.stopped {
            None => Ok(()),
            Some(BatchStop::Tripwire(tripwire)) => Err(RunError::Tripwire(tripwire)),
            Some(BatchStop::Cancelled) => Err(RunError::Cancelled),
        }
    }

    fn emit(&self, kind: RunEventKind) {
        let agent = &self.session.agent;
        if agent.sinks.is_empty() {
            return;
        }
        agent.emit(&RunEvent {
            session_id: Arc::clone(&self.session.id),
            run_id: Arc::clone(&self.run_id),
            at: agent.clock.now_millis(),
            kind,
        });
    }

    /// Reports a failure, then hands it back to be returned.
    fn fail(&self, error: RunError) -> RunError {
        let message = error.to_string();
        let redactor = self.session.agent.dispatcher.redactor();
        self.emit(RunEventKind::RunFailed {
            error: redactor.redact_str(&message).into_owned(),
        });
        error
    }
}

/// Every active skill's tools must be among the granted ones.
fn check_skills(settings: &Resolved, tools: &RunTools) -> Result<(), RunError> {
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
    Ok(())
}
