//! [`ToolCall`]: what the model asks for, with its [`CallId`].

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::replay::ReplayState;
use crate::redact::cut_marked_str;

/// A JSON object: the shape every tool's arguments must have.
pub type JsonObject = serde_json::Map<String, Value>;

/// What kind of JSON value arguments that are not an object are, for the message refusing them.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The id of one tool call, as chosen by the provider. Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallId(Arc<str>);

impl CallId {
    /// Wraps an id.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self(id.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id as a message quotes it: cut to [`SHOWN_CALL_ID_LIMIT`] bytes and marked. The
    /// provider or the model chooses ids, and nothing bounds them on the way in; results, events
    /// and rows carry the id whole, as they must answer it, but a message only names it.
    pub(crate) fn shown(&self) -> Cow<'_, str> {
        shown_call_id(&self.0)
    }
}

/// A call id as a message quotes it (see [`CallId::shown`]), from its text: a provider's stored
/// items name calls by ids no [`CallId`] holds yet.
pub(crate) fn shown_call_id(id: &str) -> Cow<'_, str> {
    cut_marked_str(id, SHOWN_CALL_ID_LIMIT)
}

/// Bound on a call id quoted in a message, in bytes: well over the ids providers make.
const SHOWN_CALL_ID_LIMIT: usize = 128;

impl fmt::Debug for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

impl From<&str> for CallId {
    fn from(id: &str) -> Self {
        Self(id.into())
    }
}

impl From<String> for CallId {
    fn from(id: String) -> Self {
        Self(id.into())
    }
}

impl Serialize for CallId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for CallId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

/// One tool call requested by the model.
///
/// `arguments` is whatever the provider sent. The dispatcher refuses anything but a JSON object
/// before a tool sees it. When the provider could not even parse the streamed argument text, it
/// sets `arguments_error` instead; such a call is blocked with code `invalid_json_arguments`, so the
/// model can correct itself on its next turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The provider's id for this call; the result carries it back.
    pub id: CallId,
    /// The tool the model asked for.
    pub name: String,
    /// The arguments, normally a JSON object.
    #[serde(default)]
    pub arguments: Value,
    /// Why the provider could not parse the arguments, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_error: Option<String>,
    /// State the provider attached to this call and wants back unchanged (a Gemini thought
    /// signature, an OpenAI Responses item id). Boxed: most calls have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Box<ReplayState>>,
}

impl ToolCall {
    /// A call with parsed arguments.
    pub fn new(id: impl Into<CallId>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            arguments_error: None,
            replay: None,
        }
    }

    /// A call whose argument text did not parse; `error` says why.
    pub fn malformed(
        id: impl Into<CallId>,
        name: impl Into<String>,
        error: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: Value::Null,
            arguments_error: Some(error.into()),
            replay: None,
        }
    }

    /// Attaches the provider's replay state.
    pub fn with_replay(mut self, replay: ReplayState) -> Self {
        self.replay = Some(Box::new(replay));
        self
    }
}
