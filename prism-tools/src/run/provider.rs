//! [`Provider`]: the model behind a run, as one async method.
//!
//! A provider turns a request (the transcript, the turn's tool schemas in snapshot order, and the
//! turn's metadata) into a response (text, tool calls, a stop reason). Wire adapters for real
//! model APIs and the [`ScriptedProvider`](super::ScriptedProvider) used by tests and examples
//! implement the same trait, so the run loop cannot tell them apart.
//!
//! The method returns a boxed future so that `Arc<dyn Provider>` works; one allocation per model
//! turn is noise next to the turn itself.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::call::ToolCall;
use crate::definition::ToolDefinition;
use crate::effects::BoxFuture;
use crate::run::Message;

/// A language model, or anything that answers like one.
pub trait Provider: Send + Sync + 'static {
    /// Answers one turn.
    fn complete<'a>(
        &'a self,
        request: ProviderRequest<'a>,
    ) -> BoxFuture<'a, Result<ProviderResponse, ProviderError>>;
}

/// What the provider is sent for one turn. Borrowed: the run owns the data.
#[derive(Clone, Copy, Debug)]
pub struct ProviderRequest<'a> {
    /// Every row so far, oldest first.
    pub transcript: &'a [Message],
    /// The tools described this turn, in the run snapshot's order.
    pub tools: &'a [ToolDefinition],
    /// Which turn this is and what its tool list hashes to.
    pub metadata: &'a TurnMetadata,
}

impl ProviderRequest<'_> {
    /// The tool schemas as JSON (`[{name, description?, parameters?}]`), in request order: the
    /// provider-neutral form a wire adapter lowers into its own dialect. The same tools always
    /// give the same bytes.
    pub fn tool_schemas(&self) -> Value {
        Value::Array(self.tools.iter().map(tool_schema).collect())
    }
}

fn tool_schema(tool: &ToolDefinition) -> Value {
    let mut schema = json!({ "name": tool.name() });
    if let Some(description) = tool.description() {
        schema["description"] = Value::from(description);
    }
    if let Some(parameters) = tool.parameters() {
        schema["parameters"] = parameters.clone();
    }
    schema
}

/// Per-turn facts a provider (and the run's events) can record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnMetadata {
    /// The session.
    pub session_id: String,
    /// The run.
    pub run_id: String,
    /// The provider turn within the run, from 1.
    pub turn: u32,
    /// The tools sent this turn.
    pub tools: ToolsMetadata,
}

/// How many tools a turn sent, and a hash of their names in request order (no schemas, no
/// arguments). Two turns that sent the same names in the same order have the same hash, so a
/// host can see at a glance whether a provider's prompt cache prefix could have been reused.
///
/// ```
/// use prism::run::ToolsMetadata;
///
/// let a = ToolsMetadata::of_names(["search", "fetch"]);
/// assert_eq!(a.count, 2);
/// assert_eq!(a, ToolsMetadata::of_names(["search", "fetch"]));
/// assert_ne!(a.ids_hash, ToolsMetadata::of_names(["fetch", "search"]).ids_hash);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsMetadata {
    /// How many tools.
    pub count: usize,
    /// SHA-256 (hex) of the canonical JSON array of the names, in request order.
    pub ids_hash: String,
}

impl ToolsMetadata {
    /// The metadata of these names, in this order.
    pub fn of_names<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let names: Vec<Value> = names
            .into_iter()
            .map(|name| Value::from(name.as_ref()))
            .collect();
        Self {
            count: names.len(),
            ids_hash: crate::canonical::canonical_sha256(&Value::Array(names)),
        }
    }

    /// The metadata of these tools, in this order.
    pub fn of_tools(tools: &[ToolDefinition]) -> Self {
        Self::of_names(tools.iter().map(ToolDefinition::name))
    }
}

/// Why the model stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model finished its answer.
    #[default]
    EndTurn,
    /// The model wants its tool calls answered.
    ToolCalls,
    /// The model ran out of output tokens.
    MaxTokens,
}

/// What the provider answered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderResponse {
    /// The assistant text (may be empty).
    #[serde(default)]
    pub text: String,
    /// The tool calls, in the order the model made them.
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// Why the model stopped.
    #[serde(default)]
    pub stop_reason: StopReason,
}

impl ProviderResponse {
    /// A final answer with no calls.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            tool_calls: Vec::new(),
            stop_reason: StopReason::EndTurn,
        }
    }

    /// A response that calls tools.
    pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Self {
            text: String::new(),
            tool_calls: calls.into_iter().collect(),
            stop_reason: StopReason::ToolCalls,
        }
    }

    /// Adds assistant text to the response.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }
}

/// The provider could not answer. Its message reaches the host after redaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderError {
    message: String,
}

impl ProviderError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ProviderError {}
