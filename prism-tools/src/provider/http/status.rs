//! A failed HTTP answer as a [`ProviderError`]: its kind from the status, its message from the
//! body the provider sent (each API nests it its own way), bounded and redacted.

use serde_json::Value;

use crate::redact::SecretRedactor;
use crate::run::{ProviderError, ProviderErrorKind};

/// The most of an error body quoted in a message.
const QUOTED: usize = 500;

/// The kind of a failed answer with this status.
pub(crate) fn kind_of_status(status: u16) -> ProviderErrorKind {
    match status {
        401 | 403 => ProviderErrorKind::Authentication,
        429 => ProviderErrorKind::RateLimited,
        408 => ProviderErrorKind::Transport,
        500.. => ProviderErrorKind::Overloaded,
        400..=499 => ProviderErrorKind::InvalidRequest,
        _ => ProviderErrorKind::InvalidResponse,
    }
}

/// The error for a failed answer: `status` and what its body says.
///
/// OpenAI, Anthropic and Gemini all put a message at `error.message` (Anthropic and Gemini with
/// a type or status beside it); a body without one is quoted as text, cut at 500 bytes.
pub(crate) fn status_error(status: u16, body: &[u8], redactor: &SecretRedactor) -> ProviderError {
    let mut message = match serde_json::from_slice::<Value>(body) {
        Ok(json) => json_message(&json),
        Err(_) => None,
    }
    .unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_owned());
    if message.is_empty() {
        message = format!("the server answered HTTP {status} with no message");
    }
    ProviderError::with_kind(kind_of_status(status), message)
        .with_status(status)
        .redacted_within(redactor, QUOTED)
}

/// An error the provider sent inside a successful answer (an `error` event of a stream, say),
/// bounded like one sent with a failed status: redacted, then cut, so no cut leaves part of a
/// secret behind.
pub(crate) fn bounded(error: ProviderError, redactor: &SecretRedactor) -> ProviderError {
    error.redacted_within(redactor, QUOTED)
}

fn json_message(json: &Value) -> Option<String> {
    // Some servers answer with a list of errors (Gemini behind some proxies).
    let json = json
        .as_array()
        .and_then(|list| list.first())
        .unwrap_or(json);
    let error = json.get("error").unwrap_or(json);
    if let Some(text) = error.as_str() {
        return Some(text.to_owned());
    }
    let message = error.get("message")?.as_str()?;
    let kind = error
        .get("type")
        .or_else(|| error.get("status"))
        .or_else(|| error.get("code"))
        .and_then(Value::as_str);
    Some(match kind {
        Some(kind) => format!("{kind}: {message}"),
        None => message.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_apis_error_body_gives_its_message() {
        let redactor = SecretRedactor::default();
        let openai = br#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#;
        let error = status_error(401, openai, &redactor);
        assert_eq!(error.kind(), ProviderErrorKind::Authentication);
        assert_eq!(
            error.message(),
            "invalid_request_error: Incorrect API key provided"
        );
        let anthropic =
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let error = status_error(529, anthropic, &redactor);
        assert_eq!(error.kind(), ProviderErrorKind::Overloaded);
        assert_eq!(
            error.to_string(),
            "overloaded (HTTP 529): overloaded_error: Overloaded"
        );
        let gemini =
            br#"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}"#;
        let error = status_error(429, gemini, &redactor);
        assert_eq!(error.message(), "RESOURCE_EXHAUSTED: Quota exceeded");
    }

    #[test]
    fn a_text_body_is_quoted_cut_and_redacted() {
        let redactor = SecretRedactor::new(["sk-abc"]);
        let body = format!("bad key sk-abc {}", "x".repeat(2000));
        let error = status_error(400, body.as_bytes(), &redactor);
        assert!(error.message().starts_with("bad key [REDACTED] xxx"));
        let marker = crate::redact::CUT_MARKER;
        assert!(error.message().ends_with(marker), "{}", error.message());
        assert!(error.message().len() <= 500 + marker.len());
        let empty = status_error(502, b"", &redactor);
        assert_eq!(
            empty.message(),
            "the server answered HTTP 502 with no message"
        );
    }
}
