//! A whole (non-streamed) `chat.completion` body, or an error body, decoded.

use std::borrow::Cow;

use super::decoded::{finish_call, message_replay, stop_reason, synthetic_call_id, usage};
use super::errors::{provider_error, unreadable};
use super::wire_types::{Choice, Completion};
use crate::call::CallId;
use crate::provider::wire::ToolTable;
use crate::run::{ProviderError, ProviderErrorKind, ProviderResponse};

/// Decodes `body`. Only the first choice is read: requests never ask for more than one.
pub(super) fn decode_response(
    body: &[u8],
    tools: &ToolTable,
) -> Result<ProviderResponse, ProviderError> {
    let completion: Completion<'_> =
        serde_json::from_slice(body).map_err(|error| unreadable("a chat completion", &error))?;
    if let Some(error) = &completion.error {
        return Err(provider_error(error));
    }
    if completion.object.as_deref() == Some("error") {
        // vLLM's error body puts the fields at the top level.
        let whole = serde_json::from_slice::<serde_json::Value>(body)
            .map_err(|error| unreadable("an error body", &error))?;
        return Err(provider_error(&whole));
    }
    let choice = completion
        .choices
        .into_iter()
        .flatten()
        .min_by_key(|choice| choice.index.unwrap_or(0))
        .ok_or_else(|| {
            ProviderError::with_kind(
                ProviderErrorKind::InvalidResponse,
                "the chat completion has no choices",
            )
        })?;
    let id = completion.id.map(Cow::into_owned);
    let mut response = decode_choice(choice, id.as_deref(), tools);
    response.usage = completion.usage.as_ref().map(usage);
    response.id = id;
    response.model = completion.model.map(Cow::into_owned);
    Ok(response)
}

fn decode_choice(
    choice: Choice<'_>,
    response_id: Option<&str>,
    tools: &ToolTable,
) -> ProviderResponse {
    let mut response = ProviderResponse::default();
    let mut refusal = String::new();
    let mut reasoning = None;
    if let Some(message) = choice.message {
        if let Some(content) = message.content {
            response.text.push_str(&content);
        }
        if let Some(text) = message.refusal {
            refusal.push_str(&text);
            response.text.push_str(&text);
        }
        reasoning = message
            .reasoning_content
            .0
            .map(|text| ("reasoning_content", text))
            .or_else(|| message.reasoning.0.map(|text| ("reasoning", text)));
        for (position, part) in message.tool_calls.into_iter().flatten().enumerate() {
            let id = part
                .id
                .filter(|id| !id.is_empty())
                .map(Cow::into_owned)
                .unwrap_or_else(|| synthetic_call_id(response_id, position));
            let (name, arguments) = match part.function {
                Some(function) => (
                    function.name.unwrap_or_default(),
                    function.arguments.map(|arguments| arguments.into_text()),
                ),
                None => (Cow::Borrowed(""), None),
            };
            response.tool_calls.push(finish_call(
                tools,
                CallId::from(id),
                &name,
                arguments.as_deref().unwrap_or(""),
            ));
        }
    }
    response.replay = message_replay(
        &refusal,
        reasoning
            .as_ref()
            .map(|(field, text)| (*field, text.as_ref())),
    );
    response.stop_reason = stop_reason(
        choice
            .finish_reason
            .as_deref()
            .filter(|reason| !reason.is_empty()),
        !response.tool_calls.is_empty(),
        !refusal.is_empty(),
    );
    response
}
