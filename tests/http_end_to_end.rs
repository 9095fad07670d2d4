//! End to end per provider API: an [`Agent`] run against the local server, which answers from
//! the transcript it receives. On the first turn the model calls two tools in parallel, one of
//! them with malformed arguments; the run goes on, and the second request carries both results
//! in that API's exact shape, with the first answer's replay state (reasoning content, an
//! encrypted reasoning item, a signed thinking block, a thought signature) sent back unchanged.

mod http_support;

use http_support::{Recorded, Reply, Server};
use prism::provider::http::{HttpProvider, HttpProviderBuilder, KeySource};
use prism::{Agent, Dispatcher, RunOptions, ToolError, ToolRegistry, tool};
use serde_json::{Value, json};

/// Adds two integers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> Result<i64, ToolError> {
    a.checked_add(b).ok_or_else(|| ToolError::new("overflow"))
}

/// Says the text back.
#[tool(read_only)]
fn echo(
    /// The text.
    text: String,
) -> String {
    text
}

fn registry() -> ToolRegistry {
    ToolRegistry::from_iter([add::definition(), echo::definition()])
}

/// SSE bytes: each `(event name, data)` as one event.
fn sse(events: &[(Option<&str>, Value)]) -> Vec<u8> {
    let mut text = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            text.push_str(&format!("event: {name}\n"));
        }
        text.push_str(&format!("data: {data}\n\n"));
    }
    text.into_bytes()
}

/// Runs the agent (no key: the local server checks none) and hands back the run's final text.
async fn run(builder: HttpProviderBuilder) -> String {
    let provider = builder.key(KeySource::None).build().unwrap();
    let agent = Agent::new(Dispatcher::builder(registry()).build(), provider);
    let mut session = agent.session("s");
    let outcome = session
        .run("Add 2 and 3, and echo hi.", RunOptions::new())
        .await
        .unwrap();
    outcome.summary().text.clone()
}

/// The text the second turn answers with: how many results the server found, so the final text
/// proves the server read them.
fn answer_text(results: usize) -> String {
    format!("I see {results} results.")
}

fn second_request(server: &Server) -> Value {
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "two turns");
    requests[1].json()
}

#[tokio::test]
async fn openai_chat_sends_both_results_as_tool_messages_with_reasoning_content_kept() {
    let chunk = |delta: Value| json!({"id": "chatcmpl-1", "model": "m", "choices": [{"index": 0, "delta": delta}]});
    let first = sse(&[
        (
            None,
            chunk(json!({"role": "assistant", "reasoning_content": "Two tools at once."})),
        ),
        (
            None,
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_add", "type": "function", "function": {"name": "add", "arguments": "{\"a\": 2, "}}]}),
            ),
        ),
        (
            None,
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"b\": 3}"}}]})),
        ),
        (
            None,
            chunk(
                json!({"tool_calls": [{"index": 1, "id": "call_echo", "type": "function", "function": {"name": "echo", "arguments": "{\"text\": \"hi"}}]}),
            ),
        ),
        (
            None,
            json!({"id": "chatcmpl-1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ),
    ]);
    let server = Server::start(move |request: &Recorded, index| {
        if index == 0 {
            let mut bytes = first.clone();
            bytes.extend_from_slice(b"data: [DONE]\n\n");
            return Reply::sse(bytes).cut(3, 25, std::time::Duration::ZERO);
        }
        let body = request.json();
        let results = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").count();
        let text = chunk(json!({"content": answer_text(results)}));
        let end = json!({"id": "chatcmpl-2", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
        let mut bytes = sse(&[(None, text), (None, end)]);
        bytes.extend_from_slice(b"data: [DONE]\n\n");
        Reply::sse(bytes)
    })
    .await;
    let text = run(HttpProvider::openai_compatible(
        format!("{}/v1", server.base),
        "m",
    ))
    .await;
    assert_eq!(text, answer_text(2));
    let body = second_request(&server);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "{body:#}");
    assert_eq!(
        messages[0],
        json!({"role": "user", "content": "Add 2 and 3, and echo hi."})
    );
    let assistant = &messages[1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["reasoning_content"], "Two tools at once.");
    assert_eq!(
        assistant["tool_calls"],
        json!([
            {"id": "call_add", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}},
            {"id": "call_echo", "type": "function", "function": {"name": "echo", "arguments": "{\"text\": \"hi"}}
        ])
    );
    assert_eq!(
        messages[2],
        json!({"role": "tool", "tool_call_id": "call_add", "content": "5"})
    );
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_echo");
    let error = messages[3]["content"].as_str().unwrap();
    assert!(error.contains("not valid JSON"), "{error}");
}

#[tokio::test]
async fn openai_responses_sends_function_call_outputs_after_the_reasoning_item() {
    let reasoning =
        json!({"id": "rs_1", "type": "reasoning", "encrypted_content": "enc-1", "summary": []});
    let call = |id: &str, call_id: &str, name: &str, arguments: &str, status: &str| json!({"id": id, "type": "function_call", "status": status, "arguments": arguments, "call_id": call_id, "name": name});
    let first = sse(&[
        (
            None,
            json!({"type": "response.created", "response": {"id": "resp_1", "model": "m", "status": "in_progress", "output": []}}),
        ),
        (
            None,
            json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning}),
        ),
        (
            None,
            json!({"type": "response.output_item.done", "output_index": 0, "item": reasoning}),
        ),
        (
            None,
            json!({"type": "response.output_item.added", "output_index": 1, "item": call("fc_1", "call_add", "add", "", "in_progress")}),
        ),
        (
            None,
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 1, "delta": "{\"a\": 2, \"b\": 3}"}),
        ),
        (
            None,
            json!({"type": "response.output_item.done", "output_index": 1, "item": call("fc_1", "call_add", "add", "{\"a\": 2, \"b\": 3}", "completed")}),
        ),
        (
            None,
            json!({"type": "response.output_item.added", "output_index": 2, "item": call("fc_2", "call_echo", "echo", "", "in_progress")}),
        ),
        (
            None,
            json!({"type": "response.function_call_arguments.delta", "item_id": "fc_2", "output_index": 2, "delta": "{\"text\": \"hi"}),
        ),
        (
            None,
            json!({"type": "response.output_item.done", "output_index": 2, "item": call("fc_2", "call_echo", "echo", "{\"text\": \"hi", "completed")}),
        ),
        (
            None,
            json!({"type": "response.completed", "response": {"id": "resp_1", "model": "m", "status": "completed", "output": [], "usage": {"input_tokens": 10, "output_tokens": 5}}}),
        ),
    ]);
    let server = Server::start(move |request: &Recorded, index| {
        if index == 0 {
            return Reply::sse(first.clone()).cut(5, 30, std::time::Duration::ZERO);
        }
        let body = request.json();
        let results = body["input"].as_array().unwrap().iter().filter(|item| item["type"] == "function_call_output").count();
        let message = json!({"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": answer_text(results), "annotations": []}]});
        Reply::sse(sse(&[
            (None, json!({"type": "response.created", "response": {"id": "resp_2", "model": "m", "status": "in_progress", "output": []}})),
            (None, json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}})),
            (None, json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": answer_text(results)})),
            (None, json!({"type": "response.output_item.done", "output_index": 0, "item": message})),
            (None, json!({"type": "response.completed", "response": {"id": "resp_2", "model": "m", "status": "completed", "output": [], "usage": {"input_tokens": 20, "output_tokens": 5}}})),
        ]))
    })
    .await;
    let text =
        run(HttpProvider::openai_responses("m").base_url(format!("{}/v1", server.base))).await;
    assert_eq!(text, answer_text(2));
    let body = second_request(&server);
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": "Add 2 and 3, and echo hi."},
            {"id": "rs_1", "type": "reasoning", "encrypted_content": "enc-1", "summary": []},
            call("fc_1", "call_add", "add", "{\"a\": 2, \"b\": 3}", "completed"),
            call("fc_2", "call_echo", "echo", "{\"text\": \"hi", "completed"),
            {"type": "function_call_output", "call_id": "call_add", "output": "5"},
            {
                "type": "function_call_output",
                "call_id": "call_echo",
                "output": "Error [invalid_json_arguments]: The arguments for tool echo are not valid JSON: the arguments are not valid JSON: EOF while parsing a string at line 1 column 12"
            }
        ]),
        "{body:#}"
    );
}

#[tokio::test]
async fn anthropic_sends_tool_results_in_one_user_message_after_the_signed_thinking_block() {
    let first = sse(&[
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Two tools."}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-1"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (Some("ping"), json!({"type": "ping"})),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_add", "name": "add", "input": {}}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 2, \"b\": 3}"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_echo", "name": "echo", "input": {}}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"text\": \"hi"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 2}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 20}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ]);
    let server = Server::start(move |request: &Recorded, index| {
        if index == 0 {
            return Reply::sse(first.clone()).cut(11, 40, std::time::Duration::ZERO);
        }
        let body = request.json();
        let results = body["messages"].as_array().unwrap().iter().flat_map(|m| m["content"].as_array().cloned().unwrap_or_default()).filter(|block| block["type"] == "tool_result").count();
        Reply::sse(sse(&[
            (Some("message_start"), json!({"type": "message_start", "message": {"id": "msg_2", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": null, "usage": {"input_tokens": 30, "output_tokens": 1}}})),
            (Some("content_block_start"), json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
            (Some("content_block_delta"), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": answer_text(results)}})),
            (Some("content_block_stop"), json!({"type": "content_block_stop", "index": 0})),
            (Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 6}})),
            (Some("message_stop"), json!({"type": "message_stop"})),
        ]))
    })
    .await;
    let text = run(HttpProvider::anthropic("m").base_url(format!("{}/v1", server.base))).await;
    assert_eq!(text, answer_text(2));
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/messages");
    assert_eq!(requests[0].header("anthropic-version"), Some("2023-06-01"));
    let body = second_request(&server);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "Add 2 and 3, and echo hi."}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Two tools.", "signature": "sig-1"},
                {"type": "tool_use", "id": "toolu_add", "name": "add", "input": {"a": 2, "b": 3}},
                {"type": "tool_use", "id": "toolu_echo", "name": "echo", "input": {}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_add", "content": [{"type": "text", "text": "5"}]},
                {"type": "tool_result", "tool_use_id": "toolu_echo", "content": [{"type": "text", "text": "{\"code\":\"invalid_json_arguments\",\"message\":\"The arguments for tool echo are not valid JSON: the arguments are not valid JSON: EOF while parsing a string at line 1 column 12\",\"reason\":\"invalid_arguments\"}"}], "is_error": true}
            ]}
        ]),
        "{body:#}"
    );
}

#[tokio::test]
async fn gemini_sends_function_responses_with_the_thought_signature_on_its_call() {
    let first = sse(&[(
        None,
        json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}, "thoughtSignature": "sig-g"},
                {"functionCall": {"name": "echo", "args": {"text": 7}}}
            ]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "m", "responseId": "r1"
        }),
    )]);
    let server = Server::start(move |request: &Recorded, index| {
        if index == 0 {
            return Reply::sse(first.clone()).cut(13, 20, std::time::Duration::ZERO);
        }
        let body = request.json();
        let results = body["contents"].as_array().unwrap().iter().flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default()).filter(|part| part.get("functionResponse").is_some()).count();
        Reply::sse(sse(&[(None, json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": answer_text(results)}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 5, "totalTokenCount": 25},
            "modelVersion": "m", "responseId": "r2"
        }))]))
    })
    .await;
    let text = run(HttpProvider::gemini("m").base_url(format!("{}/v1beta", server.base))).await;
    assert_eq!(text, answer_text(2));
    let requests = server.requests();
    assert_eq!(
        requests[0].path,
        "/v1beta/models/m:streamGenerateContent?alt=sse"
    );
    let body = second_request(&server);
    assert_eq!(
        body["contents"],
        json!([
            {"role": "user", "parts": [{"text": "Add 2 and 3, and echo hi."}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "add", "args": {"a": 2, "b": 3}}, "thoughtSignature": "sig-g"},
                {"functionCall": {"name": "echo", "args": {"text": 7}}}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "add", "response": {"result": 5}}},
                {"functionResponse": {"name": "echo", "response": {"error": {
                    "code": "invalid_arguments",
                    "message": "Invalid arguments for tool `echo` at `text`: invalid type: integer `7`, expected a string",
                    "reason": "invalid_arguments"
                }}}}
            ]}
        ]),
        "{body:#}"
    );
}

const KEY: &str = "sk-proj-abcdef0123456789";

/// Runs a turn in which a tool echoes the provider's key, and hands back the tool result the
/// second request carries and the ledger's rows.
async fn echo_the_key(key: KeySource) -> (Value, Vec<prism::dispatch::ToolCallRecord>) {
    let call = json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_echo", "type": "function", "function": {"name": "echo", "arguments": format!("{{\"text\": \"my key is {KEY}\"}}")}}]}, "finish_reason": "tool_calls"}]});
    let done = json!({"id": "c2", "model": "m", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]});
    let server = Server::start(move |_, index| {
        let chunk = if index == 0 { &call } else { &done };
        Reply::sse(format!("data: {chunk}\n\ndata: [DONE]\n\n"))
    })
    .await;
    let provider = HttpProvider::openai_compatible(format!("{}/v1", server.base), "m")
        .key(key)
        .build()
        .unwrap();
    let ledger = prism::dispatch::InMemoryLedger::new();
    let dispatcher = Dispatcher::builder(registry())
        .ledger(ledger.clone())
        .build();
    let agent = Agent::new(dispatcher, provider);
    let mut session = agent.session("s");
    session
        .run("Echo my key.", RunOptions::new())
        .await
        .unwrap();
    let body = second_request(&server);
    assert_eq!(body["messages"][2]["role"], "tool", "{body:#}");
    (body["messages"][2].clone(), ledger.records())
}

fn assert_key_redacted(result: &Value, rows: &[prism::dispatch::ToolCallRecord]) {
    assert_eq!(result["content"], "\"my key is [REDACTED]\"", "{result:#}");
    assert!(!rows.is_empty());
    for row in rows {
        let row = format!("{row:?}");
        assert!(!row.contains(KEY), "{row}");
    }
}

/// The provider's key, echoed by a tool, is redacted before the result goes anywhere: the agent
/// added it to the dispatcher's redactor.
#[tokio::test]
async fn a_tool_that_echoes_the_key_has_it_redacted() {
    let key = prism::provider::http::ApiKey::new(KEY);
    let (result, rows) = echo_the_key(key.into()).await;
    assert_key_redacted(&result, &rows);
}

/// A host's secret source is asked per turn, so its key is not known when the agent is built:
/// the agent adds it to the redactor once the turn that fetched it ends, before any tool runs.
#[tokio::test]
async fn a_key_from_the_host_secret_source_is_redacted_too() {
    struct Vault;
    impl prism::provider::http::SecretSource for Vault {
        fn api_key(
            &self,
        ) -> prism::effects::BoxFuture<'_, Result<prism::provider::http::ApiKey, String>> {
            Box::pin(async { Ok(prism::provider::http::ApiKey::new(KEY)) })
        }
    }
    let (result, rows) = echo_the_key(KeySource::host(Vault)).await;
    assert_key_redacted(&result, &rows);
}
