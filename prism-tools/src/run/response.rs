//! [`ProviderResponse`]: what the model answered on one turn, why it stopped, and what it cost.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::call::{ReplayState, ToolCall};

/// Why the model stopped.
///
/// Providers name the same reasons differently (`stop`, `end_turn`, `STOP`; `length`,
/// `max_tokens`, `MAX_TOKENS`); each wire format maps its own names here and keeps any other in
/// [`StopReason::Other`], so nothing the provider said is lost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The model finished its answer.
    #[default]
    EndTurn,
    /// The model wants its tool calls answered.
    ToolCalls,
    /// The model ran out of output tokens: the answer is cut.
    MaxTokens,
    /// The model declined to answer (a safety refusal).
    Refusal,
    /// The provider paused a long turn (Anthropic's `pause_turn`); send the transcript back as it
    /// is to let it go on.
    Pause,
    /// The provider could not form a tool call (Gemini's `MALFORMED_FUNCTION_CALL`).
    MalformedCall,
    /// A content filter stopped the answer.
    ContentFilter,
    /// Another reason, as the provider wrote it.
    Other(String),
}

impl StopReason {
    /// The reason's name: `end_turn`, `tool_calls`, `max_tokens`, `refusal`, `pause`,
    /// `malformed_call`, `content_filter`, or the provider's own text for [`StopReason::Other`].
    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolCalls => "tool_calls",
            Self::MaxTokens => "max_tokens",
            Self::Refusal => "refusal",
            Self::Pause => "pause",
            Self::MalformedCall => "malformed_call",
            Self::ContentFilter => "content_filter",
            Self::Other(raw) => raw,
        }
    }

    /// The reason named `name` (one of [`as_str`](Self::as_str)'s names), else `Other(name)`.
    pub fn from_name(name: &str) -> Self {
        match name {
            "end_turn" => Self::EndTurn,
            "tool_calls" => Self::ToolCalls,
            "max_tokens" => Self::MaxTokens,
            "refusal" => Self::Refusal,
            "pause" => Self::Pause,
            "malformed_call" => Self::MalformedCall,
            "content_filter" => Self::ContentFilter,
            other => Self::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(deserializer)?;
        Ok(Self::from_name(&name))
    }
}

/// Tokens a turn used, as the provider counted them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Tokens read, cached ones included.
    pub input_tokens: u64,
    /// Tokens written, reasoning included.
    pub output_tokens: u64,
    /// Of the input, tokens read from the provider's prompt cache, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Of the output, reasoning tokens, when the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    /// Two turns' usage added up (an unknown part stays unknown only when both are).
    pub fn plus(self, other: Usage) -> Usage {
        fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
            }
        }
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cached_input_tokens: add(self.cached_input_tokens, other.cached_input_tokens),
            reasoning_tokens: add(self.reasoning_tokens, other.reasoning_tokens),
        }
    }
}

/// What the provider answered.
///
/// ```
/// use prism::ToolCall;
/// use prism::ProviderResponse;
/// use prism::run::StopReason;
/// use serde_json::json;
///
/// let response = ProviderResponse::calls([ToolCall::new("c1", "add", json!({"a": 2}))]);
/// assert_eq!(response.stop_reason, StopReason::ToolCalls);
/// assert!(response.text.is_empty() && response.usage.is_none());
/// ```
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
    /// What the turn cost, when the provider said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// State the provider wants back with this message on later turns (reasoning, thinking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayState>,
    /// The provider's id of the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The model that answered, as the provider named it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl ProviderResponse {
    /// A final answer with no calls.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            stop_reason: StopReason::EndTurn,
            ..Self::default()
        }
    }

    /// A response that calls tools.
    pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Self {
            tool_calls: calls.into_iter().collect(),
            stop_reason: StopReason::ToolCalls,
            ..Self::default()
        }
    }

    /// Adds assistant text to the response.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = text.into();
        self
    }

    /// Sets the usage.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Sets the message's replay state.
    pub fn with_replay(mut self, replay: ReplayState) -> Self {
        self.replay = Some(replay);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_keep_unknown_names() {
        for reason in [
            StopReason::EndTurn,
            StopReason::ToolCalls,
            StopReason::MaxTokens,
            StopReason::Refusal,
            StopReason::Pause,
            StopReason::MalformedCall,
            StopReason::ContentFilter,
            StopReason::Other("SPII".into()),
        ] {
            let text = serde_json::to_string(&reason).unwrap();
            assert_eq!(serde_json::from_str::<StopReason>(&text).unwrap(), reason);
        }
    }

    #[test]
    fn usage_adds_up_and_keeps_unknown_parts_unknown() {
        let a = Usage {
            input_tokens: 10,
            output_tokens: 2,
            cached_input_tokens: Some(4),
            reasoning_tokens: None,
        };
        let total = a.plus(Usage {
            input_tokens: 1,
            output_tokens: 1,
            ..Usage::default()
        });
        assert_eq!(total.input_tokens, 11);
        assert_eq!(total.output_tokens, 3);
        assert_eq!(total.cached_input_tokens, Some(4));
        assert_eq!(total.reasoning_tokens, None);
    }
}
