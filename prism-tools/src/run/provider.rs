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

use crate::definition::ToolDefinition;
use crate::effects::BoxFuture;
use crate::redact::SecretRedactor;
use crate::run::{Message, ProviderError, ProviderEvent, ProviderResponse, ToolChoice};

/// A language model, or anything that answers like one.
///
/// A streaming provider tells [`ProviderRequest::observe`] of each [`ProviderEvent`] as it
/// decodes it and answers with their fold; one that does not stream may report
/// [`ProviderResponse::to_events`] when it is done.
pub trait Provider: Send + Sync + 'static {
    /// Answers one turn.
    fn complete<'a>(
        &'a self,
        request: ProviderRequest<'a>,
    ) -> BoxFuture<'a, Result<ProviderResponse, ProviderError>>;

    /// Values that must never appear in anything a run emits: the provider's API key. An
    /// [`Agent`](crate::run::Agent) adds them to its dispatcher's redactor, so a tool that
    /// echoes the key has it redacted like any other secret. None by default.
    fn secrets(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Receives a turn's [`ProviderEvent`]s as they arrive.
pub type ProviderEventObserver = dyn Fn(&ProviderEvent) + Send + Sync;

/// What the provider is sent for one turn. Borrowed: the run owns the data.
///
/// ```
/// use prism::{Message, ProviderRequest};
/// use prism::run::{ToolChoice, ToolsMetadata, TurnMetadata};
///
/// let transcript = [Message::user("Hello")];
/// let metadata = TurnMetadata {
///     session_id: "s1".into(),
///     run_id: "r1".into(),
///     turn: 1,
///     tools: ToolsMetadata::of_names::<_, &str>([]),
/// };
/// let request = ProviderRequest::new(&transcript, &[], &metadata)
///     .with_instructions(Some("Answer briefly."));
/// assert_eq!(request.instructions, Some("Answer briefly."));
/// assert_eq!(*request.tool_choice, ToolChoice::Auto);
/// ```
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct ProviderRequest<'a> {
    /// The system instructions, sent before the transcript.
    pub instructions: Option<&'a str>,
    /// Every row so far, oldest first.
    pub transcript: &'a [Message],
    /// The tools described this turn, in the run snapshot's order.
    pub tools: &'a [ToolDefinition],
    /// Whether and which tools the model must call.
    pub tool_choice: &'a ToolChoice,
    /// Whether the model may make several calls in one response; `None` leaves the provider's
    /// default.
    pub parallel_tool_calls: Option<bool>,
    /// Which turn this is and what its tool list hashes to.
    pub metadata: &'a TurnMetadata,
    /// Told of each event as the response streams in, when the host asked to watch.
    pub observer: Option<&'a ProviderEventObserver>,
    /// The run's redactor: a provider that quotes text it did not write (an error body) redacts
    /// it with this one too before cutting it, since a cut could leave part of a secret only the
    /// run knows.
    pub redactor: Option<&'a SecretRedactor>,
}

impl fmt::Debug for ProviderRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderRequest")
            .field("instructions", &self.instructions)
            .field("transcript", &self.transcript)
            .field("tools", &self.tools)
            .field("tool_choice", &self.tool_choice)
            .field("parallel_tool_calls", &self.parallel_tool_calls)
            .field("metadata", &self.metadata)
            .field("observer", &self.observer.is_some())
            .field("redactor", &self.redactor)
            .finish()
    }
}

impl<'a> ProviderRequest<'a> {
    /// A request with no instructions, [`ToolChoice::Auto`], the provider's default for
    /// parallel calls, and no observer.
    pub fn new(
        transcript: &'a [Message],
        tools: &'a [ToolDefinition],
        metadata: &'a TurnMetadata,
    ) -> Self {
        static AUTO: ToolChoice = ToolChoice::Auto;
        Self {
            instructions: None,
            transcript,
            tools,
            tool_choice: &AUTO,
            parallel_tool_calls: None,
            metadata,
            observer: None,
            redactor: None,
        }
    }

    /// Sets the system instructions.
    pub fn with_instructions(mut self, instructions: Option<&'a str>) -> Self {
        self.instructions = instructions;
        self
    }

    /// Sets the tool choice.
    pub fn with_tool_choice(mut self, choice: &'a ToolChoice) -> Self {
        self.tool_choice = choice;
        self
    }

    /// Allows or forbids several calls in one response.
    pub fn with_parallel_tool_calls(mut self, parallel: Option<bool>) -> Self {
        self.parallel_tool_calls = parallel;
        self
    }

    /// Sets the observer of streamed events.
    pub fn with_observer(mut self, observer: Option<&'a ProviderEventObserver>) -> Self {
        self.observer = observer;
        self
    }

    /// Sets the run's redactor (see [`redactor`](Self::redactor)).
    pub fn with_redactor(mut self, redactor: Option<&'a SecretRedactor>) -> Self {
        self.redactor = redactor;
        self
    }

    /// Tells the observer, if any, of one event.
    pub fn observe(&self, event: &ProviderEvent) {
        if let Some(observer) = self.observer {
            observer(event);
        }
    }

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
