//! Hostile or malformed provider streams: the decoders never panic, and every call the model
//! made reaches the run exactly once, with an id of its own.

mod provider_support;

use std::sync::Arc;

use prism::provider::anthropic::Anthropic;
use prism::provider::gemini::Gemini;
use prism::provider::openai_responses::OpenAiResponses;
use prism::provider::wire::{PreparedTool, ToolTable, WireFormat};
use prism::run::ProviderEvent;
use provider_support::{Sse, decode};
use serde_json::json;

fn events(lines: &[serde_json::Value]) -> Vec<Sse> {
    lines
        .iter()
        .map(|line| Sse {
            event: None,
            data: line.to_string(),
        })
        .collect()
}

fn tools() -> Arc<ToolTable> {
    Arc::new(ToolTable::new(vec![PreparedTool::new("lookup", json!({"type": "object"}))]).unwrap())
}

/// A Vertex streamed-arguments call with one piece at `path`, then a finish reason.
fn gemini_partial_args(path: &str) -> Vec<Sse> {
    events(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"name": "lookup", "willContinue": true}}]}}], "responseId": "r1"}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"partialArgs": [{"jsonPath": path, "stringValue": "x"}],
                              "willContinue": true}}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {}}]},
            "finishReason": "STOP"}]}),
    ])
}

fn decode_catching(format: &dyn WireFormat, events: &[Sse]) -> Result<usize, String> {
    let tools = tools();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let (_, end) = decode(format, &tools, events);
        match end {
            Ok(response) => response.tool_calls.len(),
            Err(_) => 0,
        }
    }))
    .map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// A `partialArgs` path with a far array index is refused, not used as a length.
#[test]
fn gemini_partial_args_with_a_huge_array_index_does_not_panic() {
    let outcome = decode_catching(
        &Gemini::new(),
        &gemini_partial_args("$.a[18446744073709551615]"),
    );
    assert!(outcome.is_ok(), "the decoder panicked: {outcome:?}");
}

/// A quoted key whose closing quote is missing is refused, not sliced inside a character.
#[test]
fn gemini_partial_args_with_an_unclosed_quoted_key_does_not_panic() {
    let outcome = decode_catching(&Gemini::new(), &gemini_partial_args("$['aé]"));
    assert!(outcome.is_ok(), "the decoder panicked: {outcome:?}");
}

fn responses_call_added() -> serde_json::Value {
    json!({"type": "response.output_item.added", "output_index": 0, "item": {
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup",
        "arguments": ""}})
}

fn responses_call_done() -> serde_json::Value {
    json!({"type": "response.output_item.done", "output_index": 0, "item": {
        "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup",
        "arguments": "{\"q\":1}", "status": "completed"}})
}

fn responses_completed() -> serde_json::Value {
    json!({"type": "response.completed", "response": {"id": "resp_1", "model": "m",
        "status": "completed", "usage": {"input_tokens": 1, "output_tokens": 2}}})
}

/// A `response.output_item.done` sent twice for one call is one call.
#[test]
fn responses_a_repeated_item_done_does_not_duplicate_the_call() {
    let stream = events(&[
        json!({"type": "response.created", "response": {"id": "resp_1", "model": "m"}}),
        responses_call_added(),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0,
            "item_id": "fc_1", "delta": "{\"q\":1}"}),
        responses_call_done(),
        responses_call_done(),
        responses_completed(),
    ]);
    let (_, end) = decode(&OpenAiResponses, &tools(), &stream);
    let response = end.unwrap();
    let ids: Vec<&str> = response.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_1"], "one call made, one call reported");
}

/// A call announced (`output_item.added`, argument deltas) whose `.done` never came is finished
/// when the response completes.
#[test]
fn responses_a_call_without_its_item_done_is_not_silently_dropped() {
    let stream = events(&[
        json!({"type": "response.created", "response": {"id": "resp_1", "model": "m"}}),
        responses_call_added(),
        json!({"type": "response.function_call_arguments.delta", "output_index": 0,
            "item_id": "fc_1", "delta": "{\"q\":1}"}),
        json!({"type": "response.function_call_arguments.done", "output_index": 0,
            "item_id": "fc_1", "arguments": "{\"q\":1}"}),
        responses_completed(),
    ]);
    let (events, end) = decode(&OpenAiResponses, &tools(), &stream);
    let started = events
        .iter()
        .filter(|e| matches!(e, ProviderEvent::ToolCallStarted { .. }))
        .count();
    let done = events
        .iter()
        .filter(|e| matches!(e, ProviderEvent::ToolCallDone { .. }))
        .count();
    let response = end.expect("the response completed");
    assert_eq!(
        (started, done, response.tool_calls.len()),
        (1, 1, 1),
        "stop = {:?}",
        response.stop_reason
    );
}

/// Two calls sent under one repeated `index` with distinct ids stay two calls.
#[test]
fn chat_a_repeated_index_with_a_new_id_is_a_new_call() {
    let stream: Vec<Sse> = [
        r#"{"id":"r1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"q\":1}"}}]}}]}"#,
        r#"{"id":"r1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_2","type":"function","function":{"name":"lookup","arguments":"{\"q\":2}"}}]}}]}"#,
        r#"{"id":"r1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ]
    .iter()
    .map(|data| Sse {
        event: None,
        data: data.to_string(),
    })
    .collect();
    let (_, end) = decode(
        &prism::provider::openai_chat::OpenAiChat::new(),
        &tools(),
        &stream,
    );
    let response = end.unwrap();
    let calls: Vec<(String, String, bool)> = response
        .tool_calls
        .iter()
        .map(|c| {
            (
                c.id.as_str().to_owned(),
                c.arguments.to_string(),
                c.arguments_error.is_some(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("call_1".to_owned(), r#"{"q":1}"#.to_owned(), false),
            ("call_2".to_owned(), r#"{"q":2}"#.to_owned(), false)
        ]
    );
}

/// `function_call` items without a `call_id` get distinct ids, as Chat and Gemini calls do.
#[test]
fn responses_calls_without_a_call_id_get_distinct_ids() {
    let item = |index: usize, item_id: &str| {
        json!({"type": "response.output_item.done", "output_index": index, "item": {
            "type": "function_call", "id": item_id, "name": "lookup", "arguments": "{}"}})
    };
    let stream = events(&[
        json!({"type": "response.created", "response": {"id": "resp_1", "model": "m"}}),
        item(0, "fc_1"),
        item(1, "fc_2"),
        responses_completed(),
    ]);
    let (_, end) = decode(&OpenAiResponses, &tools(), &stream);
    let response = end.unwrap();
    let ids: Vec<&str> = response.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 2);
    assert!(
        ids.iter().all(|id| !id.is_empty()) && ids[0] != ids[1],
        "call ids: {ids:?}"
    );
}

/// A chunk repeating a finished call's id after the finish reason, then a broken stream: the
/// partial answer lists the call once.
#[test]
fn chat_a_truncated_stream_does_not_list_a_call_twice() {
    let stream: Vec<Sse> = [
        r#"{"id":"r1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"lookup","arguments":"{\"q\":1}"}}]}}]}"#,
        r#"{"id":"r1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"id":"r1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1"}]}}]}"#,
    ]
    .iter()
    .map(|data| Sse {
        event: None,
        data: data.to_string(),
    })
    .collect();
    let (_, end) = decode(
        &prism::provider::openai_chat::OpenAiChat::new(),
        &tools(),
        &stream,
    );
    let error = end.unwrap_err();
    let ids: Vec<&str> = error
        .partial()
        .unwrap()
        .tool_calls
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, ["call_1"]);
}

/// An Anthropic `tool_use` block that starts with its whole `input` and then gets an empty
/// `input_json_delta` keeps the input it started with.
/// An Anthropic answer of one `tool_use` block of `lookup` that starts with `input` and then
/// gets `partial_json` as its one delta.
fn anthropic_tool_use(input: serde_json::Value, partial_json: &str) -> Vec<Sse> {
    events(&[
        json!({"type": "message_start", "message": {"id": "m1", "type": "message",
            "role": "assistant", "model": "claude", "content": [],
            "usage": {"input_tokens": 1, "output_tokens": 0}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use",
            "id": "toolu_1", "name": "lookup", "input": input}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": partial_json}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ])
}

#[test]
fn anthropic_an_empty_delta_keeps_the_blocks_start_input() {
    let stream = anthropic_tool_use(json!({"q": "tides"}), "");
    let (_, end) = decode(&Anthropic, &tools(), &stream);
    let response = end.expect("the response completed");
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].arguments, json!({"q": "tides"}));
}

/// A `partialArgs` path nested far deeper than any JSON parser accepts is refused: the value it
/// would build could not even be dropped without overflowing the stack.
#[test]
fn gemini_partial_args_with_a_very_deep_path_is_refused() {
    let path = format!("$.a{}", "[0]".repeat(100_000));
    let (_, end) = decode(&Gemini::new(), &tools(), &gemini_partial_args(&path));
    let response = end.expect("the stream finished");
    let error = response.tool_calls[0]
        .arguments_error
        .as_deref()
        .expect("the call has an arguments error");
    assert!(error.contains("levels"), "{error}");
}

/// A `tool_use` input that is JSON but no object is named by its kind, as the other formats do:
/// the whole value (it may be long) is not copied into the error the model and the ledger get.
#[test]
fn anthropic_a_non_object_input_is_named_by_its_kind() {
    let long = "x".repeat(10_000);
    let stream = anthropic_tool_use(json!({}), &format!("[\"{long}\"]"));
    let (_, end) = decode(&Anthropic, &tools(), &stream);
    let response = end.expect("the response completed");
    let error = response.tool_calls[0].arguments_error.as_deref().unwrap();
    assert_eq!(error, "the arguments are not a JSON object but an array");
}
