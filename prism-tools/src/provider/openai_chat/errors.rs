//! Error bodies (`{"error": {"message", "type", "code", "param"}}`, and the shapes compatible
//! servers use instead) mapped to a [`ProviderErrorKind`] with the provider's message.

use serde_json::Value;

use crate::run::{ProviderError, ProviderErrorKind};

/// The error an `error` field (or a whole vLLM-style error body) describes.
pub(super) fn provider_error(error: &Value) -> ProviderError {
    let (message, kind_names, status) = match error {
        // Ollama and llama.cpp answer `{"error": "model not found"}`.
        Value::String(message) => (message.clone(), Vec::new(), None),
        Value::Object(fields) => {
            let text = |key: &str| fields.get(key).and_then(Value::as_str);
            let message = text("message")
                .map(str::to_owned)
                .unwrap_or_else(|| format!("the provider answered with an error: {error}"));
            let mut names: Vec<&str> = Vec::new();
            names.extend(text("type"));
            names.extend(text("code"));
            // vLLM and some gateways put the HTTP status in `code`.
            let status = fields
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|code| u16::try_from(code).ok())
                .filter(|code| (400..600).contains(code));
            let names = names.into_iter().map(str::to_owned).collect();
            (message, names, status)
        }
        other => (
            format!("the provider answered with an error: {other}"),
            Vec::new(),
            None,
        ),
    };
    let kind = kind_names
        .iter()
        .find_map(|name| kind_of_name(name))
        .or_else(|| status.map(kind_of_status))
        .unwrap_or(ProviderErrorKind::Other);
    let error = ProviderError::with_kind(kind, message);
    match status {
        Some(status) => error.with_status(status),
        None => error,
    }
}

/// The kind an error `type` or `code` names, when it names one.
fn kind_of_name(name: &str) -> Option<ProviderErrorKind> {
    Some(match name {
        "rate_limit_exceeded" | "rate_limit_error" | "tokens" | "requests" => {
            ProviderErrorKind::RateLimited
        }
        "server_error"
        | "overloaded_error"
        | "service_unavailable"
        | "api_error"
        | "internal_error"
        | "engine_overloaded" => ProviderErrorKind::Overloaded,
        "authentication_error"
        | "invalid_api_key"
        | "permission_error"
        | "permission_denied"
        | "unauthorized"
        | "insufficient_permissions" => ProviderErrorKind::Authentication,
        "invalid_request_error"
        | "unsupported_parameter"
        | "unsupported_value"
        | "context_length_exceeded"
        | "model_not_found"
        | "not_found_error"
        | "BadRequestError"
        | "NotFoundError" => ProviderErrorKind::InvalidRequest,
        _ => return None,
    })
}

fn kind_of_status(status: u16) -> ProviderErrorKind {
    match status {
        401 | 403 => ProviderErrorKind::Authentication,
        429 => ProviderErrorKind::RateLimited,
        500..=599 => ProviderErrorKind::Overloaded,
        _ => ProviderErrorKind::InvalidRequest,
    }
}

/// The error a body that could not be read as the format says describes.
pub(super) fn unreadable(what: &str, error: &serde_json::Error) -> ProviderError {
    ProviderError::with_kind(
        ProviderErrorKind::InvalidResponse,
        format!("could not read {what}: {error}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_codes_and_statuses_choose_the_kind() {
        let rate = provider_error(&json!({
            "message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"
        }));
        assert_eq!(rate.kind(), ProviderErrorKind::RateLimited);
        assert_eq!(rate.message(), "Rate limit reached");
        let vllm = provider_error(&json!({"message": "bad", "type": "Odd", "code": 503}));
        assert_eq!(vllm.kind(), ProviderErrorKind::Overloaded);
        assert_eq!(vllm.status(), Some(503));
        let ollama = provider_error(&json!("model 'x' not found"));
        assert_eq!(ollama.kind(), ProviderErrorKind::Other);
        assert_eq!(ollama.message(), "model 'x' not found");
        let auth =
            provider_error(&json!({"message": "no", "type": null, "code": "invalid_api_key"}));
        assert_eq!(auth.kind(), ProviderErrorKind::Authentication);
    }
}
