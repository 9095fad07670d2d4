//! [`RunOutcome`]: how a run that did not fail ended.

use serde::{Deserialize, Serialize};

/// How a run ended when it did not fail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunOutcome {
    /// The model answered without calling tools.
    Completed(RunSummary),
}

impl RunOutcome {
    /// The run's summary.
    pub fn summary(&self) -> &RunSummary {
        match self {
            Self::Completed(summary) => summary,
        }
    }
}

/// What a finished run amounted to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// The run's id.
    pub run_id: String,
    /// The model's final text.
    pub text: String,
    /// Provider turns taken.
    pub turns: u32,
    /// Tool rounds used.
    pub tool_rounds: u32,
}
