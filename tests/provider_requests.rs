//! Requests the HTTP providers build and what they make of a misbehaving server: names every
//! API accepts for past calls, no key header across a redirect, bounded error messages, the gap
//! timeout, and request shapes each API refuses (a `tool_choice` without tools, an empty part).

mod http_support;

use std::time::Duration;

use http_support::{Reply, Server};
use prism::provider::http::{
    ApiKey, HttpProvider, HttpProviderBuilder, KeySource, RetryPolicy, Timeouts,
};
use prism::provider::names::NameRule;
use prism::provider::openai_chat::OpenAiChat;
use prism::provider::wire::{ModelSettings, ToolTable, WireFormat};
use prism::{
    Agent, Dispatcher, Message, Provider, ProviderError, ProviderRequest, RunOptions, ToolCall,
    ToolError, ToolRegistry, ToolResult, tool,
};
use serde_json::json;

/// A hang guard only: generous, never a timing assertion.
const GUARD: Duration = Duration::from_secs(60);

/// The error `provider` ends a turn of "Hello" with, offering no tools.
async fn hello(provider: &HttpProvider) -> ProviderError {
    let transcript = [Message::user("Hello")];
    let metadata = http_support::turn_metadata();
    let request = ProviderRequest::new(&transcript, &[], &metadata);
    tokio::time::timeout(GUARD, provider.complete(request))
        .await
        .expect("the turn ends")
        .expect_err("the turn fails")
}

/// Whether `name` follows OpenAI's and Anthropic's tool name rule.
fn openai_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Refunds an order.
#[tool(name = "billing.refund")]
fn refund(order: i64) -> Result<i64, ToolError> {
    Ok(order)
}

/// Says the text back.
#[tool(read_only)]
fn echo(text: String) -> String {
    text
}

// ---------------------------------------------------------------------------------------------
// A call in the history to a tool this turn does not offer goes out under a name the API
// accepts (OpenAI refuses `billing.refund` in `messages[1].tool_calls[0].function.name`).
// ---------------------------------------------------------------------------------------------

#[test]
fn a_past_call_to_a_tool_not_offered_is_sent_under_a_valid_name() {
    let call = ToolCall::new("call_1", "billing.refund", json!({"order": 7}));
    let transcript = vec![
        Message::user("Refund order 7."),
        Message::assistant("", vec![call.clone()]),
        Message::tool(ToolResult::value(
            call.id.clone(),
            "billing.refund",
            json!(7),
        )),
        Message::user("Thanks. Now just chat."),
    ];
    let metadata = http_support::turn_metadata();
    // This turn describes no tools (the run's grant, the turn's narrowing or the disclosure
    // left the refund tool out).
    let request = ProviderRequest::new(&transcript, &[], &metadata);
    let table = ToolTable::default().with_name_rule(NameRule::OpenAi);
    let encoded = OpenAiChat::new()
        .encode_request(&request, &table, &ModelSettings::new("m"))
        .unwrap();
    let name = encoded.body["messages"][1]["tool_calls"][0]["function"]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        openai_name(&name),
        "the history's call is sent as `{name}`, which OpenAI refuses: {:#}",
        encoded.body["messages"][1]
    );
}

/// The same at the run level: a session's second run grants other tools; its first request
/// carries the first run's call under the registered, dotted name.
#[tokio::test]
async fn a_second_run_with_another_grant_sends_past_calls_under_valid_names() {
    let server = Server::start(|_, index| {
        let chunk = if index == 0 {
            json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_r", "type": "function", "function": {"name": "billing_refund", "arguments": "{\"order\": 7}"}}]}, "finish_reason": "tool_calls"}]})
        } else {
            json!({"id": "c2", "model": "m", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]})
        };
        Reply::sse(format!("data: {chunk}\n\ndata: [DONE]\n\n"))
    })
    .await;
    let provider = HttpProvider::openai_compatible(format!("{}/v1", server.base), "m")
        .key(KeySource::None)
        .build()
        .unwrap();
    let registry = ToolRegistry::from_iter([refund::definition(), echo::definition()]);
    let agent = Agent::new(Dispatcher::builder(registry).build(), provider);
    let mut session = agent.session("s");
    tokio::time::timeout(GUARD, session.run("Refund order 7.", RunOptions::new()))
        .await
        .unwrap()
        .unwrap();
    tokio::time::timeout(
        GUARD,
        session.run("Echo hi.", RunOptions::new().tool_names(["echo"])),
    )
    .await
    .unwrap()
    .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let body = requests[2].json();
    for message in body["messages"].as_array().unwrap() {
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let name = call["function"]["name"].as_str().unwrap();
            assert!(
                openai_name(name),
                "the second run's request names a past call `{name}`, which OpenAI refuses with \
                 400 (invalid 'messages[1].tool_calls[0].function.name')"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A redirect is not followed: the Anthropic and Gemini key headers are not ones reqwest strips
// on the way to another host.
// ---------------------------------------------------------------------------------------------

/// Whether the key header `header` of a provider `make` builds for a base URL reached another
/// host that the provider's host redirected to (with `status`); the error the call ended with.
async fn redirected(
    make: impl FnOnce(String) -> HttpProviderBuilder,
    base_path: &str,
    status: u16,
    header: &str,
) -> (bool, String) {
    // The other host: records what it is sent and answers with an error.
    let other =
        Server::start(|_, _| Reply::json(400, &json!({"error": {"message": "nope"}}))).await;
    let target = format!("{}/elsewhere", other.base);
    let first = Server::start(move |_, _| Reply {
        status,
        headers: vec![("location".into(), target.clone())],
        steps: vec![],
    })
    .await;
    let provider = make(format!("{}{base_path}", first.base))
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let error = hello(&provider).await;
    let leaked = other
        .requests()
        .iter()
        .any(|recorded| recorded.header(header).is_some());
    (leaked, error.to_string())
}

#[tokio::test]
async fn a_redirect_never_carries_a_key_header_to_another_host() {
    type Make = fn(String) -> HttpProviderBuilder;
    let cases: [(Make, &str, u16, &str); 2] = [
        (
            |base| {
                HttpProvider::anthropic("m")
                    .base_url(base)
                    .key(ApiKey::new("sk-ant-review-0123456789"))
            },
            "/v1",
            307,
            "x-api-key",
        ),
        (
            |base| {
                HttpProvider::gemini("m")
                    .base_url(base)
                    .key(ApiKey::new("AIza-review-0123456789"))
            },
            "/v1beta",
            308,
            "x-goog-api-key",
        ),
    ];
    for (make, base_path, status, header) in cases {
        let (leaked, error) = redirected(make, base_path, status, header).await;
        assert!(!leaked, "another host was sent the `{header}` key");
        assert!(error.contains(&status.to_string()), "{error}");
    }
}

// ---------------------------------------------------------------------------------------------
// A provider error that arrives inside the stream is bounded like an HTTP error body.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn an_error_event_in_the_stream_is_bounded() {
    let huge = "x".repeat(4 << 20);
    let event = json!({"type": "error", "error": {"type": "overloaded_error", "message": huge}});
    let body = format!("event: error\ndata: {event}\n\n");
    let server = Server::start(move |_, _| Reply::sse(body.clone())).await;
    let provider = HttpProvider::anthropic("m")
        .base_url(format!("{}/v1", server.base))
        .key(KeySource::None)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let error = hello(&provider).await;
    assert!(
        error.message().len() <= 64 << 10,
        "the provider's in-stream error is quoted whole: {} bytes (an HTTP error body is cut to \
         500)",
        error.message().len()
    );
}

#[tokio::test]
async fn an_openai_error_chunk_in_the_stream_is_bounded() {
    let huge = "y".repeat(4 << 20);
    let chunk = json!({"error": {"message": huge, "type": "server_error"}});
    let body = format!("data: {chunk}\n\n");
    let server = Server::start(move |_, _| Reply::sse(body.clone())).await;
    let provider = HttpProvider::openai_compatible(format!("{}/v1", server.base), "m")
        .key(KeySource::None)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let error = hello(&provider).await;
    assert!(
        error.message().len() <= 64 << 10,
        "the provider's in-stream error is quoted whole: {} bytes",
        error.message().len()
    );
}

// ---------------------------------------------------------------------------------------------
// An error body over 64 KiB is quoted from its start, not taken for no message.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_large_error_body_is_quoted_from_its_start() {
    // A proxy's error page, or a JSON error quoting a long parameter: over 64 KiB.
    let body = format!(
        "upstream connect error or disconnect/reset before headers. reset reason: overflow\n{}",
        "<!-- padding -->\n".repeat(6000)
    );
    assert!(body.len() > 64 << 10);
    let server = Server::start(move |_, _| Reply {
        status: 502,
        headers: vec![("content-type".into(), "text/html".into())],
        steps: vec![http_support::Step::Send(body.clone().into_bytes())],
    })
    .await;
    let provider = HttpProvider::openai_compatible(format!("{}/v1", server.base), "m")
        .key(KeySource::None)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let error = hello(&provider).await;
    assert!(
        error.message().contains("upstream connect error"),
        "the server's message is lost: {error}"
    );
}

// ---------------------------------------------------------------------------------------------
// SSE blocks without data (`id:` or `retry:` only) are no events: they do not restart the gap
// timeout, so a stream that sends no event is cut off by it.
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn blocks_without_data_do_not_keep_a_stalled_stream_alive() {
    let first =
        json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": "Hel"}}]});
    let mut steps = vec![http_support::Step::Send(
        format!("data: {first}\n\n").into_bytes(),
    )];
    // 40 s of `id:` blocks, one every 200 ms: never an event.
    for n in 0..200 {
        steps.push(http_support::Step::Sleep(Duration::from_millis(200)));
        steps.push(http_support::Step::Send(
            format!("id: {n}\n\n").into_bytes(),
        ));
    }
    let server = Server::start(move |_, _| Reply {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        steps: steps.clone(),
    })
    .await;
    let provider = HttpProvider::openai_compatible(format!("{}/v1", server.base), "m")
        .key(KeySource::None)
        .retry(RetryPolicy::none())
        .timeouts(
            Timeouts::default()
                .with_first_byte(Duration::from_secs(5))
                .with_gap(Duration::from_secs(2))
                .with_turn(Duration::from_secs(12)),
        )
        .build()
        .unwrap();
    let error = hello(&provider).await;
    assert!(
        error
            .message()
            .contains("no event from the provider within"),
        "the gap timeout never fired; the turn ran to its own limit: {error}"
    );
}

// ---------------------------------------------------------------------------------------------
// Anthropic: `parallel_tool_calls = false` on a turn with no tools sends no `tool_choice`, which
// the API refuses without `tools` ("tool_choice may only be specified while providing tools").
// ---------------------------------------------------------------------------------------------

#[test]
fn anthropic_sends_no_tool_choice_without_tools() {
    let transcript = vec![Message::user("Hello")];
    let metadata = http_support::turn_metadata();
    let request =
        ProviderRequest::new(&transcript, &[], &metadata).with_parallel_tool_calls(Some(false));
    let encoded = prism::provider::anthropic::Anthropic
        .encode_request(&request, &ToolTable::default(), &ModelSettings::new("m"))
        .unwrap();
    assert!(
        encoded.body.get("tools").is_some() || encoded.body.get("tool_choice").is_none(),
        "a tool_choice is sent with no tools: {:#}",
        encoded.body
    );
}

// ---------------------------------------------------------------------------------------------
// Gemini: an empty user row is left out, as the Anthropic encoder does: a part with empty text
// is refused ("parts[0].data: required oneof field 'data' must have one initialized field"),
// and kept in the session it would break every later turn.
// ---------------------------------------------------------------------------------------------

#[test]
fn gemini_leaves_an_empty_user_row_out() {
    let transcript = vec![
        Message::user(""),
        Message::assistant("How can I help?", vec![]),
        Message::user("What is the weather?"),
    ];
    let metadata = http_support::turn_metadata();
    let request = ProviderRequest::new(&transcript, &[], &metadata);
    let encoded = prism::provider::gemini::Gemini::new()
        .encode_request(&request, &ToolTable::default(), &ModelSettings::new("m"))
        .unwrap();
    for (index, content) in encoded.body["contents"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        for part in content["parts"].as_array().unwrap() {
            let empty = part.as_object().unwrap().len() == 1 && part["text"] == "";
            assert!(
                !empty,
                "contents[{index}] has a part with only empty text, which Gemini refuses: {:#}",
                encoded.body["contents"]
            );
        }
    }
}
