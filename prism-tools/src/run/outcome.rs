//! [`RunOutcome`]: how a run that did not fail ended.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::run::PendingApproval;

/// How a run ended when it did not fail: a summary, and why it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOutcome {
    /// What the run amounted to so far.
    pub summary: RunSummary,
    /// Why it ended.
    pub end: RunEnd,
}

impl RunOutcome {
    /// The run's summary.
    pub fn summary(&self) -> &RunSummary {
        &self.summary
    }

    /// The approvals the run waits for, when it is suspended.
    pub fn pending_approvals(&self) -> &[PendingApproval] {
        match &self.end {
            RunEnd::Suspended { pending } => pending,
            _ => &[],
        }
    }

    /// True when the run waits for approvals.
    pub fn is_suspended(&self) -> bool {
        matches!(self.end, RunEnd::Suspended { .. })
    }
}

/// Why a run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "status",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum RunEnd {
    /// The model answered without calling tools (or, in the artifact loop, the validator accepted
    /// its answer).
    Completed,
    /// The round gate refused a tool round; every call of that response has a row.
    Stopped {
        /// The gate's redacted reason.
        reason: String,
    },
    /// Calls wait for approval. Resume the session with decisions to go on.
    Suspended {
        /// The approvals asked for, in call order.
        pending: Vec<PendingApproval>,
    },
}

/// What a run amounted to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// The run's id.
    pub run_id: String,
    /// The model's latest text.
    pub text: String,
    /// Provider turns taken.
    pub turns: u32,
    /// Tool rounds used.
    pub tool_rounds: u32,
    /// The accepted artifact, in the artifact loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Value>,
    /// Revisions asked for, in the artifact loop.
    #[serde(default)]
    pub revisions: u32,
}
