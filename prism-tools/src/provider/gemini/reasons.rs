//! Gemini's names for why a turn ended or failed, mapped to the run layer's kinds.

use crate::run::{ProviderError, ProviderErrorKind, StopReason, Usage};

use super::wire_types::{ApiError, UsageMetadata};

/// A candidate's `finishReason`. `STOP` is also what Gemini says after function calls, so the
/// caller passes whether the turn made any.
pub(super) fn stop_reason(finish_reason: &str, made_calls: bool) -> StopReason {
    match finish_reason {
        "STOP" if made_calls => StopReason::ToolCalls,
        "STOP" => StopReason::EndTurn,
        "MAX_TOKENS" => StopReason::MaxTokens,
        "SAFETY" | "PROHIBITED_CONTENT" | "BLOCKLIST" | "SPII" | "IMAGE_SAFETY" => {
            StopReason::ContentFilter
        }
        "MALFORMED_FUNCTION_CALL" => StopReason::MalformedCall,
        other => StopReason::Other(other.to_owned()),
    }
}

/// A `promptFeedback.blockReason`: the prompt itself was refused, no candidate was written.
pub(super) fn prompt_blocked(block_reason: &str) -> StopReason {
    match block_reason {
        "SAFETY" | "PROHIBITED_CONTENT" | "BLOCKLIST" | "IMAGE_SAFETY" => StopReason::ContentFilter,
        other => StopReason::Other(format!("prompt_blocked:{other}")),
    }
}

/// The run layer's usage: output counts the thoughts Gemini reports apart.
pub(super) fn usage(metadata: &UsageMetadata) -> Option<Usage> {
    if metadata.prompt_token_count.is_none() && metadata.candidates_token_count.is_none() {
        return None;
    }
    let thoughts = metadata.thoughts_token_count;
    Some(Usage {
        input_tokens: metadata
            .prompt_token_count
            .unwrap_or(0)
            .saturating_add(metadata.tool_use_prompt_token_count.unwrap_or(0)),
        output_tokens: metadata
            .candidates_token_count
            .unwrap_or(0)
            .saturating_add(thoughts.unwrap_or(0)),
        cached_input_tokens: metadata.cached_content_token_count,
        reasoning_tokens: thoughts,
    })
}

/// An error body's kind, from its `status` (or, failing that, its HTTP code).
pub(super) fn provider_error(error: &ApiError<'_>) -> ProviderError {
    let kind = match (error.status.as_deref(), error.code) {
        (Some("RESOURCE_EXHAUSTED"), _) | (None, Some(429)) => ProviderErrorKind::RateLimited,
        (Some("UNAVAILABLE" | "INTERNAL" | "DEADLINE_EXCEEDED"), _)
        | (None, Some(500 | 502 | 503 | 504)) => ProviderErrorKind::Overloaded,
        (Some("INVALID_ARGUMENT" | "FAILED_PRECONDITION" | "NOT_FOUND" | "OUT_OF_RANGE"), _)
        | (None, Some(400 | 404)) => ProviderErrorKind::InvalidRequest,
        (Some("UNAUTHENTICATED" | "PERMISSION_DENIED"), _) | (None, Some(401 | 403)) => {
            ProviderErrorKind::Authentication
        }
        (Some("CANCELLED"), _) => ProviderErrorKind::Cancelled,
        _ => ProviderErrorKind::Other,
    };
    let message = match (error.message.as_deref(), error.status.as_deref()) {
        (Some(message), _) if !message.is_empty() => message.to_owned(),
        (_, Some(status)) => status.to_owned(),
        _ => "the provider sent an error without a message".to_owned(),
    };
    let error_out = ProviderError::with_kind(kind, message);
    match error.code {
        Some(code) if (100..600).contains(&code) => error_out.with_status(code),
        _ => error_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn api(code: u16, status: &'static str) -> ApiError<'static> {
        ApiError {
            code: Some(code),
            message: Some(Cow::Borrowed("m")),
            status: Some(Cow::Borrowed(status)),
        }
    }

    #[test]
    fn statuses_map_to_kinds() {
        let cases = [
            (429, "RESOURCE_EXHAUSTED", ProviderErrorKind::RateLimited),
            (503, "UNAVAILABLE", ProviderErrorKind::Overloaded),
            (400, "INVALID_ARGUMENT", ProviderErrorKind::InvalidRequest),
            (401, "UNAUTHENTICATED", ProviderErrorKind::Authentication),
            (403, "PERMISSION_DENIED", ProviderErrorKind::Authentication),
            (418, "TEAPOT", ProviderErrorKind::Other),
        ];
        for (code, status, kind) in cases {
            let error = provider_error(&api(code, status));
            assert_eq!(error.kind(), kind, "{status}");
            assert_eq!(error.status(), Some(code));
            assert_eq!(error.message(), "m");
        }
    }

    #[test]
    fn finish_reasons_map_and_unknown_ones_are_kept() {
        assert_eq!(stop_reason("STOP", true), StopReason::ToolCalls);
        assert_eq!(stop_reason("STOP", false), StopReason::EndTurn);
        assert_eq!(stop_reason("SPII", false), StopReason::ContentFilter);
        assert_eq!(
            stop_reason("MALFORMED_FUNCTION_CALL", false),
            StopReason::MalformedCall
        );
        assert_eq!(
            stop_reason("RECITATION", false),
            StopReason::Other("RECITATION".into())
        );
        assert_eq!(prompt_blocked("SAFETY"), StopReason::ContentFilter);
        assert_eq!(
            prompt_blocked("OTHER"),
            StopReason::Other("prompt_blocked:OTHER".into())
        );
    }
}
