//! What a whole response and a stream decode the same way: a finished tool call (registered
//! name, restored arguments or `arguments_error`), stable ids for calls sent without one, the
//! stop reason and the usage.

use serde_json::{Value, json};

use super::FORMAT;
use super::wire_types::WireUsage;
use crate::call::json_kind;
use crate::call::{CallId, ReplayState, ToolCall};
use crate::provider::wire::ToolTable;
use crate::run::{StopReason, Usage};

/// The id of a call the server sent without one: the same for every chunk of the call, and
/// distinct across turns when the server gave the response an id.
pub(super) fn synthetic_call_id(response_id: Option<&str>, index: usize) -> String {
    match response_id {
        Some(response) if !response.is_empty() => format!("{response}_call_{index}"),
        _ => format!("call_{index}"),
    }
}

/// A finished call: the registered name of `wire_name`, and `arguments` parsed as a JSON object
/// and restored to the tool's canonical shape. Empty argument text means no arguments (`{}`);
/// text that is not a JSON object becomes an `arguments_error` call that keeps the model's text
/// in its replay state, so the model is shown what it wrote.
pub(super) fn finish_call(
    tools: &ToolTable,
    id: CallId,
    wire_name: &str,
    arguments: &str,
) -> ToolCall {
    if wire_name.is_empty() {
        return malformed(
            id,
            "",
            "the provider sent this tool call without a tool name",
            arguments,
        );
    }
    let name = tools.registered_name(wire_name);
    if arguments.trim().is_empty() {
        return ToolCall::new(id, name, Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(mut value @ Value::Object(_)) => {
            tools.restore_arguments(name, &mut value);
            ToolCall::new(id, name, value)
        }
        Ok(other) => malformed(
            id,
            name,
            &format!("arguments must be a JSON object, not {}", json_kind(&other)),
            arguments,
        ),
        Err(error) => malformed(id, name, &error.to_string(), arguments),
    }
}

fn malformed(id: CallId, name: &str, error: &str, arguments: &str) -> ToolCall {
    let call = ToolCall::malformed(id, name, error);
    if arguments.is_empty() {
        return call;
    }
    call.with_replay(ReplayState::new(FORMAT, json!({ "arguments": arguments })))
}

/// The stop reason for `finish_reason`. Servers that answer `stop` (or nothing) after calling
/// tools mean tool calls; OpenAI's `stop` after a refusal means a refusal.
pub(super) fn stop_reason(
    finish_reason: Option<&str>,
    has_calls: bool,
    refused: bool,
) -> StopReason {
    match finish_reason {
        None | Some("stop") if has_calls => StopReason::ToolCalls,
        None | Some("stop") if refused => StopReason::Refusal,
        None | Some("stop") => StopReason::EndTurn,
        Some("tool_calls" | "function_call") => StopReason::ToolCalls,
        // Mistral's `model_length`: the context window, rather than the limit, cut the answer.
        Some("length" | "model_length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::ContentFilter,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

/// The usage the server reported.
pub(super) fn usage(wire: &WireUsage) -> Usage {
    Usage {
        input_tokens: wire.prompt_tokens.unwrap_or(0),
        output_tokens: wire.completion_tokens.unwrap_or(0),
        cached_input_tokens: wire
            .prompt_tokens_details
            .as_ref()
            .and_then(|details| details.cached_tokens)
            .or(wire.prompt_cache_hit_tokens),
        reasoning_tokens: wire
            .completion_tokens_details
            .as_ref()
            .and_then(|details| details.reasoning_tokens),
    }
}

/// The message's replay state: a refusal (sent back in the `refusal` field) and the reasoning
/// text a server returned under `field`, when there was any.
pub(super) fn message_replay(
    refusal: &str,
    reasoning: Option<(&str, &str)>,
) -> Option<ReplayState> {
    let mut data = serde_json::Map::new();
    if !refusal.is_empty() {
        data.insert("refusal".into(), Value::from(refusal));
    }
    if let Some((field, text)) = reasoning
        && !text.is_empty()
    {
        data.insert(field.into(), Value::from(text));
    }
    (!data.is_empty()).then(|| ReplayState::new(FORMAT, Value::Object(data)))
}
