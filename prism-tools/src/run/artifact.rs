//! The generate-validate-revise loop: the model proposes an artifact, the host checks it.
//!
//! Each provider answer is a candidate. The host's [`ArtifactValidator`] accepts it (the run
//! completes with the parsed value) or asks for a revision with feedback, which goes back to the
//! model as the next user row; after `max_revisions` revisions the loop fails with
//! `artifact_failed` (`reason: max_revisions`).
//!
//! Tools are inert by default: calls in an answer execute nothing and are answered
//! `tool_call_inert`, and the answer's text is still checked. With
//! [`ArtifactToolCalls::Bounded`], an answer with calls instead uses one of the run's shared tool
//! rounds: its calls run one at a time through the same dispatcher, their rows follow the
//! assistant row, and the answer is not checked as a candidate. A call past the run's tool-round
//! limit executes nothing and the loop fails with `artifact_failed` (`reason: tool_round_limit`).
//! Tool rounds never count as revisions.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What happens to tool calls inside the artifact loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactToolCalls {
    /// Calls execute nothing and are answered `tool_call_inert`.
    #[default]
    Inert,
    /// Calls use the run's shared tool rounds and run sequentially.
    Bounded,
}

/// The settings of the generate-validate-revise loop.
///
/// ```
/// use prism::run::{ArtifactLoop, ArtifactToolCalls, LoopStrategy};
///
/// let strategy = LoopStrategy::GenerateValidateRevise(ArtifactLoop::new(3).with_bounded_tools());
/// # let _ = strategy;
/// assert_eq!(ArtifactLoop::new(3).tool_calls, ArtifactToolCalls::Inert);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArtifactLoop {
    /// Revisions the validator may ask for before the loop fails.
    pub max_revisions: u32,
    /// What tool calls do.
    pub tool_calls: ArtifactToolCalls,
}

impl ArtifactLoop {
    /// A loop allowing `max_revisions` revisions, with inert tools.
    pub fn new(max_revisions: u32) -> Self {
        Self {
            max_revisions,
            tool_calls: ArtifactToolCalls::Inert,
        }
    }

    /// Lets answers with calls use the run's tool rounds.
    pub fn with_bounded_tools(mut self) -> Self {
        self.tool_calls = ArtifactToolCalls::Bounded;
        self
    }
}

/// The validator's verdict on one candidate.
#[derive(Clone, Debug, PartialEq)]
pub enum ArtifactVerdict {
    /// The candidate is the artifact; here it is, parsed.
    Accept(Value),
    /// Ask the model for a revision; the feedback becomes the next user row.
    Revise(String),
}

/// Parses and checks a candidate artifact.
pub trait ArtifactValidator: Send + Sync + 'static {
    /// The verdict on `candidate`, the model's text.
    fn check(&self, candidate: &str) -> ArtifactVerdict;
}

/// An artifact validator from a closure.
///
/// ```
/// use prism::run::{ArtifactVerdict, artifact_validator_fn};
///
/// let json_object = artifact_validator_fn(|text| match serde_json::from_str::<serde_json::Value>(text) {
///     Ok(value) if value.is_object() => ArtifactVerdict::Accept(value),
///     _ => ArtifactVerdict::Revise("Answer with one JSON object.".into()),
/// });
/// # let _ = json_object;
/// ```
pub fn artifact_validator_fn<F>(check: F) -> impl ArtifactValidator
where
    F: Fn(&str) -> ArtifactVerdict + Send + Sync + 'static,
{
    ArtifactFn(check)
}

struct ArtifactFn<F>(F);

impl<F> ArtifactValidator for ArtifactFn<F>
where
    F: Fn(&str) -> ArtifactVerdict + Send + Sync + 'static,
{
    fn check(&self, candidate: &str) -> ArtifactVerdict {
        (self.0)(candidate)
    }
}

/// Why the artifact loop failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactFailure {
    /// An answer called tools after the run's last tool round.
    ToolRoundLimit,
    /// The validator asked for more revisions than allowed.
    MaxRevisions,
}

impl ArtifactFailure {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ToolRoundLimit => "tool_round_limit",
            Self::MaxRevisions => "max_revisions",
        }
    }
}
