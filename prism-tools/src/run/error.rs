//! [`RunError`]: why a run failed.
//!
//! Failures before the first provider turn (an unknown granted name, a skill's missing tool, a
//! host tool named `search_tools` in search mode)
//! leave the session untouched. Failures later leave a transcript in which every call id the
//! model made has its result row: the run persists rows first and fails second.

use std::fmt;

use crate::dispatch::Tripwire;
use crate::run::{ApprovalStoreError, ArtifactFailure, ProviderError};
use crate::search::SEARCH_TOOLS_NAME;

/// Why a run failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RunError {
    /// `tool_names` named tools the registry does not have. Nothing was written.
    UnknownTools {
        /// The unknown names.
        names: Vec<String>,
    },
    /// An active skill relies on tools outside the run's grant. Nothing was written.
    MissingSkillTools {
        /// The skill.
        skill: String,
        /// The tools it is missing.
        names: Vec<String>,
    },
    /// The narrowing callback failed (or panicked); nothing was sent for that turn.
    Narrowing {
        /// The turn.
        turn: u32,
        /// Its redacted message.
        message: String,
    },
    /// The provider failed.
    Provider {
        /// The turn.
        turn: u32,
        /// Its error, redacted.
        error: ProviderError,
    },
    /// A guardrail tripped during a batch. The rows of that batch were written first.
    Tripwire(Box<Tripwire>),
    /// The run's cancellation token fired.
    Cancelled,
    /// A response called tools after the run's last allowed tool round; its calls were answered
    /// `tool_round_limit` and nothing ran.
    ToolRoundLimit {
        /// The limit.
        limit: u32,
    },
    /// The run reached its provider-turn limit.
    TurnLimit {
        /// The limit.
        limit: u32,
    },
    /// The artifact loop failed.
    ArtifactFailed {
        /// Why.
        reason: ArtifactFailure,
    },
    /// The loop strategy needs a setting the run does not have (the artifact loop's validator).
    Misconfigured {
        /// What is missing.
        message: String,
    },
    /// Search-mode disclosure reserves the name `search_tools`, and a tool of the run's snapshot
    /// uses it. Nothing was written.
    ReservedToolName,
    /// The session has a suspended run: resume it before starting another.
    Suspended,
    /// `resume` was called on a session with no suspended run.
    NotSuspended,
    /// Approvals were needed but the agent has no approval store.
    NoApprovalStore,
    /// The approval store refused an operation; nothing ran because of it.
    Approval(ApprovalStoreError),
    /// `resume` was given a stale session state: one resumed before (its approvals were acted
    /// on), one a later run of the session has overtaken, or one restored beside an approval
    /// store that does not hold the request a decision answers. Nothing was recorded or run, and
    /// the session is unchanged.
    StaleSession {
        /// What is stale and what the host can do, naming call ids, never arguments.
        message: String,
    },
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownTools { names } => {
                write!(f, "the run grants unknown tools: {}", names.join(", "))
            }
            Self::MissingSkillTools { skill, names } => write!(
                f,
                "skill {skill} needs tools this run does not have: {}",
                names.join(", ")
            ),
            Self::Narrowing { turn, message } => {
                write!(f, "tool narrowing failed before turn {turn}: {message}")
            }
            Self::Provider { turn, error } => {
                write!(f, "the provider failed on turn {turn}: {error}")
            }
            Self::Tripwire(tripwire) => tripwire.fmt(f),
            Self::Cancelled => f.write_str("the run was cancelled"),
            Self::ToolRoundLimit { limit } => {
                write!(
                    f,
                    "the model called tools after the limit of {limit} tool rounds"
                )
            }
            Self::TurnLimit { limit } => write!(f, "the run reached its limit of {limit} turns"),
            Self::ArtifactFailed { reason } => {
                write!(f, "the artifact loop failed: {}", reason.as_str())
            }
            Self::Misconfigured { message } => write!(f, "the run is misconfigured: {message}"),
            Self::ReservedToolName => write!(
                f,
                "the tool name `{SEARCH_TOOLS_NAME}` is reserved when tools are disclosed by \
                 search; rename the host tool or leave it out of the run's tool_names"
            ),
            Self::Suspended => f.write_str("the session has a suspended run; resume it first"),
            Self::NotSuspended => f.write_str("the session has no suspended run to resume"),
            Self::NoApprovalStore => f.write_str("approvals need an approval store on the agent"),
            Self::Approval(error) => write!(f, "approval refused: {error}"),
            Self::StaleSession { message } => {
                write!(f, "the session state is stale: {message}")
            }
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Tripwire(tripwire) => Some(tripwire),
            Self::Provider { error, .. } => Some(error),
            Self::Approval(error) => Some(error),
            _ => None,
        }
    }
}
