//! [`ProviderError`]: why a provider turn failed, with a kind a host (or a retry policy) can act on.

use std::fmt;
use std::time::Duration;

use crate::redact::SecretRedactor;
use crate::run::ProviderResponse;

/// What kind of failure a [`ProviderError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProviderErrorKind {
    /// Too many requests; [`ProviderError::retry_after`] says how long to wait when the provider
    /// said.
    RateLimited,
    /// The provider is overloaded or failing on its side (5xx, `overloaded_error`).
    Overloaded,
    /// The provider refused the request as malformed or unsupported (4xx).
    InvalidRequest,
    /// The key is missing, wrong or not allowed to do this.
    Authentication,
    /// The connection failed, or a timeout fired.
    Transport,
    /// The stream ended before the response was complete; [`ProviderError::partial`] holds what
    /// was complete.
    TruncatedStream,
    /// The provider reports that the response was cancelled on its side (a Responses
    /// `cancelled` status, Gemini's `CANCELLED`). The run's own cancellation is not a provider
    /// error: it ends the run with [`RunError::Cancelled`](crate::run::RunError::Cancelled).
    Cancelled,
    /// The response could not be read as the wire format says it should look.
    InvalidResponse,
    /// Anything else.
    Other,
}

impl ProviderErrorKind {
    /// The kind's name: `rate_limited`, `overloaded`, `invalid_request`, `authentication`,
    /// `transport`, `truncated_stream`, `cancelled`, `invalid_response`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RateLimited => "rate_limited",
            Self::Overloaded => "overloaded",
            Self::InvalidRequest => "invalid_request",
            Self::Authentication => "authentication",
            Self::Transport => "transport",
            Self::TruncatedStream => "truncated_stream",
            Self::Cancelled => "cancelled",
            Self::InvalidResponse => "invalid_response",
            Self::Other => "other",
        }
    }
}

impl fmt::Display for ProviderErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The provider could not answer. Its message reaches the host after redaction.
///
/// ```
/// use std::time::Duration;
/// use prism::ProviderError;
/// use prism::run::ProviderErrorKind;
///
/// let error = ProviderError::with_kind(ProviderErrorKind::RateLimited, "slow down")
///     .with_status(429)
///     .with_retry_after(Duration::from_secs(2));
/// assert_eq!(error.kind(), ProviderErrorKind::RateLimited);
/// assert_eq!(error.retry_after(), Some(Duration::from_secs(2)));
/// assert_eq!(error.to_string(), "rate_limited (HTTP 429): slow down");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderError {
    kind: ProviderErrorKind,
    message: String,
    /// Boxed so a `Result` carrying the error stays small.
    details: Option<Box<Details>>,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Details {
    status: Option<u16>,
    retry_after: Option<Duration>,
    partial: Option<ProviderResponse>,
}

impl ProviderError {
    /// An error of kind [`ProviderErrorKind::Other`].
    pub fn new(message: impl Into<String>) -> Self {
        Self::with_kind(ProviderErrorKind::Other, message)
    }

    /// An error of this kind.
    pub fn with_kind(kind: ProviderErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            details: None,
        }
    }

    fn details_mut(&mut self) -> &mut Details {
        self.details.get_or_insert_with(Box::default)
    }

    /// Records the HTTP status the provider answered with.
    pub fn with_status(mut self, status: u16) -> Self {
        self.details_mut().status = Some(status);
        self
    }

    /// Records how long the provider asked to wait before trying again.
    pub fn with_retry_after(mut self, wait: Duration) -> Self {
        self.details_mut().retry_after = Some(wait);
        self
    }

    /// Keeps what was complete when a stream ended early.
    pub fn with_partial(mut self, partial: ProviderResponse) -> Self {
        self.details_mut().partial = Some(partial);
        self
    }

    /// The kind.
    pub fn kind(&self) -> ProviderErrorKind {
        self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The HTTP status, when there was one.
    pub fn status(&self) -> Option<u16> {
        self.details.as_ref()?.status
    }

    /// How long the provider asked to wait, when it said.
    pub fn retry_after(&self) -> Option<Duration> {
        self.details.as_ref()?.retry_after
    }

    /// What was complete before a stream ended early: whole text deltas, and only the tool
    /// calls whose arguments were complete.
    pub fn partial(&self) -> Option<&ProviderResponse> {
        self.details.as_ref()?.partial.as_ref()
    }

    /// The same error, redacted, with its message cut to `max_bytes` (marked as cut).
    #[cfg(feature = "http")]
    pub(crate) fn redacted_within(self, redactor: &SecretRedactor, max_bytes: usize) -> Self {
        let mut error = self.redacted(redactor);
        crate::redact::cut_marked(&mut error.message, max_bytes);
        error
    }

    /// The same error with its message, and any partial text, replay state and tool calls (their
    /// names, arguments and replay state, and why those could not be read), redacted.
    pub fn redacted(mut self, redactor: &SecretRedactor) -> Self {
        redactor.redact_string(&mut self.message);
        let partial = self
            .details
            .as_mut()
            .and_then(|details| details.partial.as_mut());
        if let Some(partial) = partial {
            redactor.redact_string(&mut partial.text);
            // Replay state holds the model's own words too: reasoning text, a refusal, argument
            // text that did not parse, output items with their argument text.
            if let Some(replay) = &mut partial.replay {
                redactor.redact_value_in_place(&mut replay.data);
            }
            for call in &mut partial.tool_calls {
                // The model chose the name, as it chose the arguments.
                redactor.redact_string(&mut call.name);
                redactor.redact_value_in_place(&mut call.arguments);
                if let Some(error) = &mut call.arguments_error {
                    redactor.redact_string(error);
                }
                if let Some(replay) = &mut call.replay {
                    redactor.redact_value_in_place(&mut replay.data);
                }
            }
        }
        self
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = self.status();
        if self.kind == ProviderErrorKind::Other && status.is_none() {
            return f.write_str(&self.message);
        }
        f.write_str(self.kind.as_str())?;
        if let Some(status) = status {
            write!(f, " (HTTP {status})")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ProviderError {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::call::ToolCall;

    #[test]
    fn redaction_reaches_the_partial_answers_tool_calls() {
        let mut partial = ProviderResponse {
            text: "token sk-live-1".into(),
            ..ProviderResponse::default()
        };
        partial
            .tool_calls
            .push(ToolCall::new("c1", "login", json!({"key": "sk-live-1"})));
        partial.tool_calls.push(ToolCall::malformed(
            "c2",
            "login",
            "bad JSON near sk-live-1",
        ));
        let error = ProviderError::new("the stream broke after sk-live-1")
            .with_partial(partial)
            .redacted(&SecretRedactor::new(["sk-live-1"]));
        let shown = format!("{error:?}");
        assert!(!shown.contains("sk-live-1"), "{shown}");
        let partial = error.partial().unwrap();
        assert_eq!(
            partial.tool_calls[0].arguments,
            json!({"key": "[REDACTED]"})
        );
    }
}
