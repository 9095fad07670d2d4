//! The Responses API shapes both decoders read (a response's head: id, model, status, why it
//! stopped early, usage, error) and how they map to the run layer's stop reasons, usage and error
//! kinds.
//!
//! The structs borrow from the body and skip what they do not name, so a `response.completed`
//! event (which repeats the whole request: instructions, tools, schemas) costs a scan, not a tree.

use std::borrow::Cow;

use serde::Deserialize;

use crate::run::{ProviderError, ProviderErrorKind, StopReason, Usage};

/// A response object: the whole body of a non-streamed answer, or the `response` of a stream's
/// lifecycle events. `O` is how its `output` is read (skipped in streams).
#[derive(Deserialize)]
pub(super) struct ResponseHead<'a, O: Default> {
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub incomplete_details: Option<IncompleteDetails<'a>>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    #[serde(borrow, default)]
    pub error: Option<WireError<'a>>,
    #[serde(default)]
    pub output: O,
}

/// Why a response is `incomplete`.
#[derive(Deserialize)]
pub(super) struct IncompleteDetails<'a> {
    #[serde(borrow, default)]
    pub reason: Option<Cow<'a, str>>,
}

/// Token counts as the API writes them.
#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<InputDetails>,
    #[serde(default)]
    output_tokens_details: Option<OutputDetails>,
}

#[derive(Deserialize)]
struct InputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

impl WireUsage {
    pub fn to_usage(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cached_input_tokens: self
                .input_tokens_details
                .as_ref()
                .and_then(|details| details.cached_tokens),
            reasoning_tokens: self
                .output_tokens_details
                .as_ref()
                .and_then(|details| details.reasoning_tokens),
        }
    }
}

/// An error object: an error body's `error`, an `error` stream event's `error` (or the event
/// itself, in older streams), a failed response's `error`.
#[derive(Deserialize)]
pub(super) struct WireError<'a> {
    #[serde(borrow, default, rename = "type")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub code: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub message: Option<Cow<'a, str>>,
}

impl WireError<'_> {
    /// The provider's error with its kind and message.
    pub fn to_error(&self) -> ProviderError {
        let kind = error_kind(self.kind.as_deref(), self.code.as_deref());
        let message = match (&self.message, &self.code) {
            (Some(message), _) => message.to_string(),
            (None, Some(code)) => format!("the provider failed with code `{code}`"),
            (None, None) => "the provider failed without saying why".to_owned(),
        };
        ProviderError::with_kind(kind, message)
    }
}

/// The error kind of an error `type` or `code`. An exhausted quota is an account that may not
/// spend more, not a rate limit: waiting does not help, so a retry policy must not retry it.
pub(super) fn error_kind(kind: Option<&str>, code: Option<&str>) -> ProviderErrorKind {
    for name in [code, kind].into_iter().flatten() {
        let kind = match name {
            "rate_limit_exceeded" | "rate_limit_error" | "tokens" | "requests" => {
                ProviderErrorKind::RateLimited
            }
            "server_error"
            | "server_is_overloaded"
            | "overloaded"
            | "service_unavailable"
            | "engine_overloaded" => ProviderErrorKind::Overloaded,
            "invalid_api_key"
            | "authentication_error"
            | "permission_error"
            | "insufficient_quota"
            | "organization_deactivated"
            | "unsupported_country_region_territory" => ProviderErrorKind::Authentication,
            "invalid_request_error"
            | "context_length_exceeded"
            | "invalid_prompt"
            | "unsupported_parameter"
            | "unsupported_value"
            | "invalid_value"
            | "not_found_error" => ProviderErrorKind::InvalidRequest,
            _ => continue,
        };
        return kind;
    }
    ProviderErrorKind::Other
}

/// Items the model leaves for the client to answer that are not our function calls: a hosted MCP
/// call waiting for approval, a tool search the client runs, a call to a custom (free-form) tool.
/// A response that ends on one of them stops with [`StopReason::Other`] naming it.
pub(super) fn waits_for_client(item_type: &str, execution: Option<&str>) -> bool {
    match item_type {
        "mcp_approval_request" | "custom_tool_call" => true,
        "tool_search_call" => execution == Some("client"),
        _ => false,
    }
}

/// What a decoder saw of a response's output, which decides its stop reason.
#[derive(Default)]
pub(super) struct OutputSummary {
    pub calls: usize,
    pub refused: bool,
    /// The type of the last item left for the client to answer, if any.
    pub waiting_on: Option<String>,
}

/// The stop reason of a response that did not fail: `completed` (tool calls, a refusal, an item
/// the client must answer, or the end of the turn) or `incomplete` (and why).
pub(super) fn stop_reason(
    status: Option<&str>,
    incomplete: Option<&str>,
    output: &OutputSummary,
) -> StopReason {
    match status {
        Some("incomplete") => match incomplete {
            Some("max_output_tokens") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::ContentFilter,
            Some(other) => StopReason::Other(other.to_owned()),
            None => StopReason::Other("incomplete".to_owned()),
        },
        _ if output.calls > 0 => StopReason::ToolCalls,
        _ if output.waiting_on.is_some() => {
            StopReason::Other(output.waiting_on.clone().unwrap_or_default())
        }
        _ if output.refused => StopReason::Refusal,
        Some("completed") | None => StopReason::EndTurn,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

/// The error of a response whose status says it did not answer (`failed`, `cancelled`), or
/// `None` when it did.
pub(super) fn failure<O: Default>(head: &ResponseHead<'_, O>) -> Option<ProviderError> {
    match head.status.as_deref() {
        Some("failed") => Some(head.error.as_ref().map_or_else(
            || {
                ProviderError::with_kind(
                    ProviderErrorKind::Other,
                    "the response failed without an error",
                )
            },
            WireError::to_error,
        )),
        Some("cancelled") => Some(ProviderError::with_kind(
            ProviderErrorKind::Cancelled,
            "the response was cancelled",
        )),
        Some(status @ ("queued" | "in_progress")) => Some(ProviderError::with_kind(
            ProviderErrorKind::InvalidResponse,
            format!("the response is still {status}"),
        )),
        _ => None,
    }
}
