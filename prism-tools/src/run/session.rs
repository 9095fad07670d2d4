//! [`Session`]: a conversation with a transcript, run after run, and its storable state.
//!
//! [`Session::run`] appends the user's input, drives the provider and the tool batches, and
//! returns how the run ended. [`Session::state`] is plain serde data (transcript, grant, run
//! count, activated tool names): store it anywhere and
//! [`Agent::restore`](crate::run::Agent::restore) it later, in this process or another. A restored
//! session keeps its stored grant as a ceiling, intersected with whatever is registered at that
//! time, so resuming can never widen what the host granted.
//!
//! The activated tools are what `search_tools` found in search mode: names only, at most
//! [`MAX_ACTIVATED_TOOLS`](crate::search::MAX_ACTIVATED_TOOLS) (the oldest is evicted), described
//! on later search-mode turns when they are among the turn's visible tools. They authorise
//! nothing, and a name the registry no longer has is simply never described.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::run::run_loop::RunDriver;
use crate::run::{
    Agent, ApprovalDecision, Message, RunError, RunOptions, RunOutcome, SuspendedRun,
};
use crate::search::{ActivatedTools, SharedActivatedTools};

/// The storable part of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// The session's id.
    pub session_id: String,
    /// Every row so far.
    pub transcript: Vec<Message>,
    /// The names granted to the latest run, in snapshot order; `None` before the first run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<Vec<String>>,
    /// How many runs the session started.
    #[serde(default)]
    pub runs: u64,
    /// The run waiting for approvals, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspended: Option<SuspendedRun>,
    /// The tools `search_tools` found, oldest first (a JSON array of names).
    #[serde(default, skip_serializing_if = "ActivatedTools::is_empty")]
    pub activated_tool_names: ActivatedTools,
}

/// A conversation with an agent.
pub struct Session {
    pub(crate) agent: Agent,
    pub(crate) id: Arc<str>,
    pub(crate) transcript: Vec<Message>,
    /// The latest run's grant.
    pub(crate) grant: Option<Vec<String>>,
    /// The grant this session was restored with: no run may exceed it.
    pub(crate) ceiling: Option<Vec<String>>,
    pub(crate) runs: u64,
    pub(crate) suspended: Option<SuspendedRun>,
    /// Shared with the `search_tools` tool of each search-mode turn, which writes its finds.
    pub(crate) activated: SharedActivatedTools,
    /// Decisions a resume of this session recorded in the approval store while the run stays
    /// suspended (a resume that failed part way): a retry may bring them again.
    pub(crate) recorded: Vec<ApprovalDecision>,
}

impl Session {
    pub(crate) fn new(agent: Agent, id: Arc<str>) -> Self {
        Self {
            agent,
            id,
            transcript: Vec::new(),
            grant: None,
            ceiling: None,
            runs: 0,
            suspended: None,
            activated: SharedActivatedTools::default(),
            recorded: Vec::new(),
        }
    }

    pub(crate) fn from_state(agent: Agent, state: SessionState) -> Self {
        Self {
            agent,
            id: state.session_id.into(),
            transcript: state.transcript,
            ceiling: state.grant.clone(),
            grant: state.grant,
            runs: state.runs,
            suspended: state.suspended,
            activated: SharedActivatedTools::new(state.activated_tool_names),
            recorded: Vec::new(),
        }
    }

    /// Runs one user input to the end: provider turns and tool batches until the model answers
    /// without calls, a limit is reached, or something fails. Failures before the first provider
    /// turn (unknown granted names, a skill's missing tools) leave the session as it was. A run
    /// that reaches a call needing approval returns a suspended outcome; finish it with
    /// [`resume`](Self::resume) before starting another.
    pub async fn run(
        &mut self,
        input: impl Into<String>,
        options: RunOptions,
    ) -> Result<RunOutcome, RunError> {
        RunDriver::start(self, input.into(), options)?.drive().await
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Every row so far.
    pub fn transcript(&self) -> &[Message] {
        &self.transcript
    }

    /// The run waiting for approvals, if any.
    pub fn suspended(&self) -> Option<&SuspendedRun> {
        self.suspended.as_ref()
    }

    /// The tools `search_tools` activated, oldest first.
    pub fn activated_tools(&self) -> ActivatedTools {
        self.activated.snapshot()
    }

    /// Forgets the activated tools: later search-mode turns describe only what they rank.
    pub fn clear_activated_tools(&mut self) {
        self.activated.clear();
    }

    /// The storable state.
    pub fn state(&self) -> SessionState {
        SessionState {
            session_id: self.id.to_string(),
            transcript: self.transcript.clone(),
            grant: self.grant.clone(),
            runs: self.runs,
            suspended: self.suspended.clone(),
            activated_tool_names: self.activated.snapshot(),
        }
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("rows", &self.transcript.len())
            .field("grant", &self.grant)
            .field("ceiling", &self.ceiling)
            .field("runs", &self.runs)
            .field("suspended", &self.suspended.is_some())
            .field("activated", &self.activated.snapshot().len())
            .finish()
    }
}
