//! [`ErrorInfo`] and its codes: why a call was refused ([`BlockReason`]) or failed
//! ([`ErrorCode`]), in a form the model and the host can both read.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_codes_survive_as_custom() {
        assert_eq!(ErrorCode::parse("rate_limited").as_str(), "rate_limited");
        assert_eq!(ErrorCode::parse("cancelled"), ErrorCode::Cancelled);
    }
}
