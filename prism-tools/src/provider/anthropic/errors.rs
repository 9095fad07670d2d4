//! Anthropic's error types (`overloaded_error`, `rate_limit_error`…) as [`ProviderErrorKind`]s.

use crate::run::{ProviderError, ProviderErrorKind};

use super::wire::ErrorWire;

/// The kind of an error type the API names.
pub(super) fn error_kind(kind: &str) -> ProviderErrorKind {
    match kind {
        "rate_limit_error" => ProviderErrorKind::RateLimited,
        "overloaded_error" | "api_error" => ProviderErrorKind::Overloaded,
        "invalid_request_error" | "not_found_error" | "request_too_large" => {
            ProviderErrorKind::InvalidRequest
        }
        "authentication_error" | "permission_error" => ProviderErrorKind::Authentication,
        "timeout_error" => ProviderErrorKind::Transport,
        _ => ProviderErrorKind::Other,
    }
}

/// The error an `error` event or an error body describes, with the provider's message.
pub(super) fn provider_error(error: &ErrorWire<'_>) -> ProviderError {
    let kind = error.kind.as_deref().unwrap_or("error");
    let message = match error.message.as_deref() {
        Some(message) => format!("{kind}: {message}"),
        None => kind.to_owned(),
    };
    ProviderError::with_kind(error_kind(kind), message)
}

/// A response that does not have the shape the Messages API gives.
pub(super) fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::with_kind(ProviderErrorKind::InvalidResponse, message)
}
