//! What the model asks for ([`ToolCall`]) and what it gets back ([`ToolResult`]).
//!
//! Every call id that enters the dispatcher leaves it with exactly one [`ToolResult`]. The
//! result's [`ToolOutcome`] is an enum rather than two optional fields, so "a value and an error
//! at once" cannot be represented. On the wire a result has the familiar shape
//! `{"toolCallId", "name", "value"}` or `{"toolCallId", "name", "error": {code, message, reason?}}`.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A JSON object: the shape every tool's arguments must have.
pub type JsonObject = serde_json::Map<String, Value>;

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
}

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
}

impl ToolCall {
    /// A call with parsed arguments.
    pub fn new(id: impl Into<CallId>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            arguments_error: None,
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
        }
    }
}

/// Why a call was refused before (or, for output guardrails, instead of) returning its value.
///
/// Serialised in `snake_case`, as in the outcome table of the crate docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BlockReason {
    /// No registered tool has that name.
    UnknownTool,
    /// A filter, the run's grant or this turn's narrowing excludes the tool.
    ToolDenied,
    /// The arguments are not a JSON object, exceed a limit, or do not decode.
    InvalidArguments,
    /// The trust or permission policy refused the call.
    PermissionDenied,
    /// A validator refused the arguments.
    ValidationFailed,
    /// The before-execute policy refused the call.
    ExecutionDenied,
    /// A guardrail blocked the call or its result.
    GuardrailBlocked,
    /// A value the tool takes from its call's context (an extractor) could not be made, so the
    /// body did not run: the host's set-up lacks something, or the extractor refused the caller.
    ExtractionFailed,
}

impl BlockReason {
    /// The wire name, e.g. `"unknown_tool"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownTool => "unknown_tool",
            Self::ToolDenied => "tool_denied",
            Self::InvalidArguments => "invalid_arguments",
            Self::PermissionDenied => "permission_denied",
            Self::ValidationFailed => "validation_failed",
            Self::ExecutionDenied => "execution_denied",
            Self::GuardrailBlocked => "guardrail_blocked",
            Self::ExtractionFailed => "extraction_failed",
        }
    }
}

impl fmt::Display for BlockReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A machine-readable error code. Serialised as its `snake_case` name.
///
/// Blocked results carry the code of their [`BlockReason`] (except malformed argument text, which
/// is `invalid_json_arguments`). Tools may use [`ErrorCode::Custom`] for codes of their own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// See [`BlockReason::UnknownTool`].
    UnknownTool,
    /// See [`BlockReason::ToolDenied`].
    ToolDenied,
    /// See [`BlockReason::InvalidArguments`].
    InvalidArguments,
    /// The provider could not parse the argument text at all.
    InvalidJsonArguments,
    /// See [`BlockReason::PermissionDenied`].
    PermissionDenied,
    /// See [`BlockReason::ValidationFailed`].
    ValidationFailed,
    /// See [`BlockReason::ExecutionDenied`].
    ExecutionDenied,
    /// The tool's own parameter schema is unusable (it does not compile, breaks a validator's
    /// limits, or refers outside its document): the host's bug, not the model's. Reported under
    /// [`BlockReason::ValidationFailed`] with this code so hosts can tell the two apart.
    InvalidToolSchema,
    /// See [`BlockReason::GuardrailBlocked`].
    GuardrailBlocked,
    /// See [`BlockReason::ExtractionFailed`].
    ExtractionFailed,
    /// The tool's effect was claimed earlier and never recorded an outcome; it may or may not have
    /// happened, so it is not run again until the host resolves it.
    EffectOutcomeUnknown,
    /// Another live owner holds the effect claim for these arguments.
    EffectInFlight,
    /// The effect store itself failed, so the tool was not run.
    EffectStoreError,
    /// The tool returned an error.
    ToolError,
    /// The tool, or a host callback around it, panicked.
    ToolPanicked,
    /// The run's cancellation token fired.
    Cancelled,
    /// The tool's output exceeded the configured byte limit.
    OutputTooLarge,
    /// A batch stopped before this call started.
    ToolCallNotDispatched,
    /// The call came after the run's tool-round limit.
    ToolRoundLimit,
    /// The loop treats tools as inert: the call was answered without running.
    ToolCallInert,
    /// A code chosen by a tool or host.
    Custom(Cow<'static, str>),
}

impl ErrorCode {
    /// The wire name, e.g. `"tool_error"`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::UnknownTool => "unknown_tool",
            Self::ToolDenied => "tool_denied",
            Self::InvalidArguments => "invalid_arguments",
            Self::InvalidJsonArguments => "invalid_json_arguments",
            Self::PermissionDenied => "permission_denied",
            Self::ValidationFailed => "validation_failed",
            Self::ExecutionDenied => "execution_denied",
            Self::GuardrailBlocked => "guardrail_blocked",
            Self::ExtractionFailed => "extraction_failed",
            Self::InvalidToolSchema => "invalid_tool_schema",
            Self::EffectOutcomeUnknown => "effect_outcome_unknown",
            Self::EffectInFlight => "effect_in_flight",
            Self::EffectStoreError => "effect_store_error",
            Self::ToolError => "tool_error",
            Self::ToolPanicked => "tool_panicked",
            Self::Cancelled => "cancelled",
            Self::OutputTooLarge => "output_too_large",
            Self::ToolCallNotDispatched => "tool_call_not_dispatched",
            Self::ToolRoundLimit => "tool_round_limit",
            Self::ToolCallInert => "tool_call_inert",
            Self::Custom(code) => code,
        }
    }

    /// Parses a wire name; names this crate does not know become [`ErrorCode::Custom`].
    pub fn parse(code: &str) -> Self {
        match code {
            "unknown_tool" => Self::UnknownTool,
            "tool_denied" => Self::ToolDenied,
            "invalid_arguments" => Self::InvalidArguments,
            "invalid_json_arguments" => Self::InvalidJsonArguments,
            "permission_denied" => Self::PermissionDenied,
            "validation_failed" => Self::ValidationFailed,
            "execution_denied" => Self::ExecutionDenied,
            "invalid_tool_schema" => Self::InvalidToolSchema,
            "guardrail_blocked" => Self::GuardrailBlocked,
            "extraction_failed" => Self::ExtractionFailed,
            "effect_outcome_unknown" => Self::EffectOutcomeUnknown,
            "effect_in_flight" => Self::EffectInFlight,
            "effect_store_error" => Self::EffectStoreError,
            "tool_error" => Self::ToolError,
            "tool_panicked" => Self::ToolPanicked,
            "cancelled" => Self::Cancelled,
            "output_too_large" => Self::OutputTooLarge,
            "tool_call_not_dispatched" => Self::ToolCallNotDispatched,
            "tool_round_limit" => Self::ToolRoundLimit,
            "tool_call_inert" => Self::ToolCallInert,
            other => Self::Custom(Cow::Owned(other.to_owned())),
        }
    }
}

impl From<BlockReason> for ErrorCode {
    fn from(reason: BlockReason) -> Self {
        match reason {
            BlockReason::UnknownTool => Self::UnknownTool,
            BlockReason::ToolDenied => Self::ToolDenied,
            BlockReason::InvalidArguments => Self::InvalidArguments,
            BlockReason::PermissionDenied => Self::PermissionDenied,
            BlockReason::ValidationFailed => Self::ValidationFailed,
            BlockReason::ExecutionDenied => Self::ExecutionDenied,
            BlockReason::GuardrailBlocked => Self::GuardrailBlocked,
            BlockReason::ExtractionFailed => Self::ExtractionFailed,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = Cow::<str>::deserialize(deserializer)?;
        Ok(Self::parse(&code))
    }
}

/// What went wrong, in a form the model and the host can both read.
///
/// `message` has been redacted by the dispatcher's [`SecretRedactor`](crate::SecretRedactor)
/// before it leaves the dispatcher.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// Machine-readable code.
    pub code: ErrorCode,
    /// Human-readable message, also shown to the model.
    pub message: String,
    /// Set on blocked results: which guard refused the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<BlockReason>,
}

impl ErrorInfo {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            reason: None,
        }
    }

    /// A blocked error: its code is the reason's own.
    pub fn blocked(reason: BlockReason, message: impl Into<String>) -> Self {
        Self {
            code: reason.into(),
            message: message.into(),
            reason: Some(reason),
        }
    }
}

impl fmt::Display for ErrorInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorInfo {}

/// How a call ended.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolOutcome {
    /// The tool ran and returned this value.
    Value(Value),
    /// A guard refused the call (or, for output guardrails, its result). `error.reason` is set.
    Blocked(ErrorInfo),
    /// The tool ran (or was about to) and failed.
    Error(ErrorInfo),
}

impl ToolOutcome {
    /// What `error` ended: a blocked call when it names the guard that refused (its `reason`),
    /// a failed one otherwise.
    pub(crate) fn from_error(error: ErrorInfo) -> Self {
        if error.reason.is_some() {
            Self::Blocked(error)
        } else {
            Self::Error(error)
        }
    }
}

/// The one result every tool call gets.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub tool_call_id: CallId,
    /// The tool's name (after middleware; for unknown tools, the name the model used).
    pub name: Arc<str>,
    /// How it ended.
    pub outcome: ToolOutcome,
}

impl ToolResult {
    /// A successful result.
    pub fn value(tool_call_id: CallId, name: impl Into<Arc<str>>, value: Value) -> Self {
        Self {
            tool_call_id,
            name: name.into(),
            outcome: ToolOutcome::Value(value),
        }
    }

    /// A blocked result.
    pub fn blocked(
        tool_call_id: CallId,
        name: impl Into<Arc<str>>,
        reason: BlockReason,
        message: impl Into<String>,
    ) -> Self {
        Self {
            tool_call_id,
            name: name.into(),
            outcome: ToolOutcome::Blocked(ErrorInfo::blocked(reason, message)),
        }
    }

    /// A failed result.
    pub fn error(tool_call_id: CallId, name: impl Into<Arc<str>>, error: ErrorInfo) -> Self {
        Self {
            tool_call_id,
            name: name.into(),
            outcome: ToolOutcome::Error(error),
        }
    }

    /// The value, when the call succeeded.
    pub fn as_value(&self) -> Option<&Value> {
        match &self.outcome {
            ToolOutcome::Value(value) => Some(value),
            _ => None,
        }
    }

    /// The error, when the call was blocked or failed.
    pub fn error_info(&self) -> Option<&ErrorInfo> {
        match &self.outcome {
            ToolOutcome::Value(_) => None,
            ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => Some(error),
        }
    }

    /// The block reason, when a guard refused the call.
    pub fn block_reason(&self) -> Option<BlockReason> {
        match &self.outcome {
            ToolOutcome::Blocked(error) => error.reason,
            _ => None,
        }
    }

    /// True when the tool ran and returned a value.
    pub fn is_success(&self) -> bool {
        matches!(self.outcome, ToolOutcome::Value(_))
    }
}

/// A result as it is read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolResultWire<'a> {
    tool_call_id: CallId,
    name: Cow<'a, str>,
    #[serde(default)]
    value: Option<Cow<'a, Value>>,
    #[serde(default)]
    error: Option<Cow<'a, ErrorInfo>>,
}

/// An outcome as it is read: `value`, or `error` (whose `reason` says whether it was blocked).
#[derive(Deserialize)]
struct OutcomeWire<'a> {
    #[serde(default)]
    value: Option<Cow<'a, Value>>,
    #[serde(default)]
    error: Option<Cow<'a, ErrorInfo>>,
}

impl OutcomeWire<'_> {
    fn into_outcome(self) -> ToolOutcome {
        match (self.value, self.error) {
            (_, Some(error)) => ToolOutcome::from_error(error.into_owned()),
            (Some(value), None) => ToolOutcome::Value(value.into_owned()),
            // A result whose value is JSON null omits nothing but is still a value.
            (None, None) => ToolOutcome::Value(Value::Null),
        }
    }
}

impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ResultRef::new(&self.tool_call_id, &self.name, &self.outcome).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = ToolResultWire::deserialize(deserializer)?;
        Ok(Self {
            tool_call_id: wire.tool_call_id,
            name: Arc::from(wire.name.as_ref()),
            outcome: OutcomeWire {
                value: wire.value,
                error: wire.error,
            }
            .into_outcome(),
        })
    }
}

/// A result as it is written, borrowed from wherever its parts are kept (a ledger row, an event).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResultRef<'a> {
    tool_call_id: &'a CallId,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a ErrorInfo>,
}

impl<'a> ResultRef<'a> {
    /// A value result.
    pub(crate) fn value(tool_call_id: &'a CallId, name: &'a str, value: &'a Value) -> Self {
        Self {
            tool_call_id,
            name,
            value: Some(value),
            error: None,
        }
    }

    pub(crate) fn new(tool_call_id: &'a CallId, name: &'a str, outcome: &'a ToolOutcome) -> Self {
        let (value, error) = match outcome {
            ToolOutcome::Value(value) => (Some(value), None),
            ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => (None, Some(error)),
        };
        Self {
            tool_call_id,
            name,
            value,
            error,
        }
    }
}

/// Reads an optional outcome from a written result; its ids, which the row carries beside it,
/// are ignored.
pub(crate) fn optional_outcome<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ToolOutcome>, D::Error> {
    Ok(Option::<OutcomeWire<'static>>::deserialize(deserializer)?.map(OutcomeWire::into_outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_round_trip_through_the_wire_shape() {
        let ok = ToolResult::value("c1".into(), "add", json!(3));
        let text = serde_json::to_value(&ok).unwrap();
        assert_eq!(text, json!({"toolCallId": "c1", "name": "add", "value": 3}));
        assert_eq!(serde_json::from_value::<ToolResult>(text).unwrap(), ok);

        let blocked = ToolResult::blocked(
            "c2".into(),
            "x",
            BlockReason::UnknownTool,
            "Unknown tool: x",
        );
        let text = serde_json::to_value(&blocked).unwrap();
        assert_eq!(
            text,
            json!({"toolCallId": "c2", "name": "x", "error": {"code": "unknown_tool", "message": "Unknown tool: x", "reason": "unknown_tool"}})
        );
        assert_eq!(serde_json::from_value::<ToolResult>(text).unwrap(), blocked);

        let failed = ToolResult::error(
            "c3".into(),
            "y",
            ErrorInfo::new(ErrorCode::ToolError, "boom"),
        );
        let back: ToolResult =
            serde_json::from_value(serde_json::to_value(&failed).unwrap()).unwrap();
        assert_eq!(back, failed);
    }

    #[test]
    fn unknown_codes_survive_as_custom() {
        assert_eq!(ErrorCode::parse("rate_limited").as_str(), "rate_limited");
        assert_eq!(ErrorCode::parse("cancelled"), ErrorCode::Cancelled);
    }
}
