//! The `chat {model}` span of one provider turn, with OpenTelemetry's GenAI attributes.

use tracing::Span;
use tracing::field::Empty;

use crate::run::{ProviderError, ProviderResponse};
use crate::semconv::{
    ERROR_TYPE, GEN_AI_OPERATION_NAME, GEN_AI_PROVIDER_NAME, GEN_AI_REQUEST_MODEL,
    GEN_AI_RESPONSE_FINISH_REASONS, GEN_AI_RESPONSE_ID, GEN_AI_RESPONSE_MODEL,
    GEN_AI_USAGE_INPUT_TOKENS, GEN_AI_USAGE_OUTPUT_TOKENS, OPERATION_CHAT, OTEL_NAME,
};

/// The span of one turn; its outcome is recorded by [`record_outcome`].
pub(crate) fn chat_span(provider: &'static str, model: &str) -> Span {
    let span = tracing::info_span!(
        target: "prism_tools",
        "chat",
        { OTEL_NAME } = Empty,
        { GEN_AI_OPERATION_NAME } = OPERATION_CHAT,
        { GEN_AI_PROVIDER_NAME } = provider,
        { GEN_AI_REQUEST_MODEL } = model,
        { GEN_AI_RESPONSE_MODEL } = Empty,
        { GEN_AI_RESPONSE_ID } = Empty,
        { GEN_AI_RESPONSE_FINISH_REASONS } = Empty,
        { GEN_AI_USAGE_INPUT_TOKENS } = Empty,
        { GEN_AI_USAGE_OUTPUT_TOKENS } = Empty,
        { ERROR_TYPE } = Empty,
    );
    if !span.is_disabled() {
        span.record(OTEL_NAME, format!("{OPERATION_CHAT} {model}"));
    }
    span
}

/// Records what the turn answered: the model, the finish reason (a list of one, written as
/// `["tool_calls"]`), the usage; or the error's kind.
pub(crate) fn record_outcome(span: &Span, answer: &Result<ProviderResponse, ProviderError>) {
    if span.is_disabled() {
        return;
    }
    match answer {
        Ok(response) => {
            if let Some(model) = &response.model {
                span.record(GEN_AI_RESPONSE_MODEL, model.as_str());
            }
            if let Some(id) = &response.id {
                span.record(GEN_AI_RESPONSE_ID, id.as_str());
            }
            let reasons = serde_json::json!([response.stop_reason.as_str()]).to_string();
            span.record(GEN_AI_RESPONSE_FINISH_REASONS, reasons.as_str());
            if let Some(usage) = response.usage {
                span.record(GEN_AI_USAGE_INPUT_TOKENS, usage.input_tokens);
                span.record(GEN_AI_USAGE_OUTPUT_TOKENS, usage.output_tokens);
            }
        }
        Err(error) => {
            span.record(ERROR_TYPE, error.kind().as_str());
        }
    }
}
