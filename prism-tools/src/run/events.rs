//! [`RunEvent`]: what a run tells observers between tool calls.
//!
//! The dispatcher reports each call's lifecycle as [`ToolEvent`](crate::ToolEvent)s; a run adds
//! the decisions around them: which tools it was granted, what each provider turn was sent
//! (`metadata.tools: {count, idsHash}`), which names narrowing tried to add and were dropped,
//! when search-mode disclosure fell back to describing every tool, how a batch was run, and how
//! the run ended. Events carry names, counts and hashes, never arguments or results, and every
//! message in them went through the dispatcher's redactor.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::call::CallId;
use crate::clock::Millis;
use crate::run::{ArtifactFailure, ToolsMetadata};
use crate::shared_log::SharedLog;

/// One run-level event.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunEvent {
    /// The session.
    pub session_id: Arc<str>,
    /// The run.
    pub run_id: Arc<str>,
    /// When it happened.
    pub at: Millis,
    /// What happened.
    #[serde(flatten)]
    pub kind: RunEventKind,
}

/// The tool facts recorded for one provider turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TurnToolsMetadata {
    /// Count and hash of the tools sent.
    pub tools: ToolsMetadata,
}

/// Why the artifact loop failed, as recorded in its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ArtifactFailedMetadata {
    /// The reason.
    pub reason: ArtifactFailure,
}

/// What happened.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum RunEventKind {
    /// The run took its snapshot of the registry.
    RunStarted {
        /// The granted names, in snapshot order.
        grant: Vec<String>,
    },
    /// Narrowing returned names outside the grant; they were dropped and the turn went on.
    ToolNarrowingClamped {
        /// The provider turn.
        turn: u32,
        /// The dropped names, in the order the callback returned them.
        dropped: Vec<String>,
    },
    /// A search-mode turn described every visible tool instead of a ranked few, because the
    /// search could not rank them (too many tools to index, a scorer that failed...).
    ToolsFullyDisclosed {
        /// The provider turn.
        turn: u32,
        /// A stable code, e.g. `"too_many_tools"` or `"scorer_failed"`.
        reason: String,
        /// What happened, redacted.
        message: String,
    },
    /// A provider turn is about to be sent.
    TurnStarted {
        /// The provider turn, from 1.
        turn: u32,
        /// What the turn was sent.
        metadata: TurnToolsMetadata,
    },
    /// A response's calls are about to run.
    ToolBatchStarted {
        /// The provider turn.
        turn: u32,
        /// The tool round this batch uses, from 1.
        round: u32,
        /// How many calls.
        calls: usize,
        /// How many may run at once (1 when an exclusive tool is among them).
        concurrency: usize,
    },
    /// The round gate refused a tool round; nothing of it ran.
    ToolRoundRefused {
        /// The provider turn.
        turn: u32,
        /// The refused round.
        round: u32,
        /// The gate's redacted reason.
        reason: String,
    },
    /// The run suspended until these calls are approved or refused.
    RunSuspended {
        /// The calls waiting, in call order.
        pending: Vec<CallId>,
    },
    /// The run resumed with decisions on every pending call.
    RunResumed {
        /// The calls approved.
        approved: Vec<CallId>,
        /// The calls refused.
        refused: Vec<CallId>,
    },
    /// The artifact validator asked for a revision.
    ArtifactRevisionRequested {
        /// The provider turn whose answer was rejected.
        turn: u32,
        /// Revisions asked for so far.
        revision: u32,
    },
    /// The artifact validator accepted an answer.
    ArtifactAccepted {
        /// The provider turn.
        turn: u32,
    },
    /// The artifact loop failed.
    ArtifactFailed {
        /// Why.
        metadata: ArtifactFailedMetadata,
    },
    /// The run ended normally.
    RunFinished {
        /// Provider turns taken.
        turns: u32,
        /// Tool rounds used.
        tool_rounds: u32,
    },
    /// The run failed; the transcript still answers every call id.
    RunFailed {
        /// The redacted error.
        error: String,
    },
}

impl RunEventKind {
    /// The wire name, e.g. `"tool_narrowing_clamped"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::RunStarted { .. } => "run_started",
            Self::ToolNarrowingClamped { .. } => "tool_narrowing_clamped",
            Self::ToolsFullyDisclosed { .. } => "tools_fully_disclosed",
            Self::TurnStarted { .. } => "turn_started",
            Self::ToolBatchStarted { .. } => "tool_batch_started",
            Self::ToolRoundRefused { .. } => "tool_round_refused",
            Self::RunSuspended { .. } => "run_suspended",
            Self::RunResumed { .. } => "run_resumed",
            Self::ArtifactRevisionRequested { .. } => "artifact_revision_requested",
            Self::ArtifactAccepted { .. } => "artifact_accepted",
            Self::ArtifactFailed { .. } => "artifact_failed",
            Self::RunFinished { .. } => "run_finished",
            Self::RunFailed { .. } => "run_failed",
        }
    }
}

/// Receives run events, inline on the run's task: keep it quick. A panicking sink is caught and
/// logged.
pub trait RunEventSink: Send + Sync + 'static {
    /// One event.
    fn emit(&self, event: &RunEvent);
}

/// A run event sink from a closure.
///
/// ```
/// use prism::run::run_event_fn;
///
/// let print = run_event_fn(|event| println!("{}", event.kind.type_name()));
/// # let _ = print;
/// ```
pub fn run_event_fn<F>(sink: F) -> impl RunEventSink
where
    F: Fn(&RunEvent) + Send + Sync + 'static,
{
    RunEventFn(sink)
}

struct RunEventFn<F>(F);

impl<F: Fn(&RunEvent) + Send + Sync + 'static> RunEventSink for RunEventFn<F> {
    fn emit(&self, event: &RunEvent) {
        (self.0)(event);
    }
}

/// Keeps every run event in memory; clones share the log.
#[derive(Clone, Default)]
pub struct RunEventLog(SharedLog<RunEvent>);

impl RunEventLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// The events so far.
    pub fn events(&self) -> Vec<RunEvent> {
        self.0.snapshot()
    }

    /// Takes the events so far, leaving the log empty.
    pub fn take(&self) -> Vec<RunEvent> {
        self.0.take()
    }
}

impl RunEventSink for RunEventLog {
    fn emit(&self, event: &RunEvent) {
        self.0.push(event.clone());
    }
}

impl fmt::Debug for RunEventLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RunEventLog").field(&self.0.len()).finish()
    }
}
