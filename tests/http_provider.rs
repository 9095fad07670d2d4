//! The HTTP provider against a local server (127.0.0.1, started by each test): the recorded
//! streams of `../shared/data/llm-payloads/` replayed with chunk boundaries at random places and
//! slow chunks, then every way a turn can fail: a dropped connection, 429 and 500 answers that
//! succeed on retry, a 401 carrying the key, an oversized answer, a stalled stream, and a run
//! cancelled mid-stream.

mod http_support;
mod provider_support;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_support::{Reply, Server, Step};
use prism::provider::anthropic::Anthropic;
use prism::provider::gemini::Gemini;
use prism::provider::http::{
    ApiKey, HttpProvider, HttpProviderBuilder, KeySource, RetryPolicy, Timeouts,
};
use prism::provider::openai_chat::OpenAiChat;
use prism::provider::openai_responses::OpenAiResponses;
use prism::provider::wire::{ToolTable, WireFormat};
use prism::run::{ProviderErrorKind, ProviderEvent};
use prism::{Message, Provider, ProviderError, ProviderRequest, ProviderResponse};
use provider_support::{decode, frame_sse, payloads, read};
use serde_json::json;

/// The four APIs, as the tests name them.
#[derive(Clone, Copy, Debug)]
enum Api {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

impl Api {
    fn builder(self, server: &Server) -> HttpProviderBuilder {
        let base = format!("{}/v1", server.base);
        let builder = match self {
            Api::Chat => return HttpProvider::openai_compatible(base, "test-model"),
            Api::Responses => HttpProvider::openai_responses("test-model"),
            Api::Anthropic => HttpProvider::anthropic("test-model"),
            Api::Gemini => HttpProvider::gemini("test-model"),
        };
        builder.base_url(base).key(KeySource::None)
    }

    fn format(self) -> Box<dyn WireFormat> {
        match self {
            Api::Chat => Box::new(OpenAiChat::new()),
            Api::Responses => Box::new(OpenAiResponses),
            Api::Anthropic => Box::new(Anthropic),
            Api::Gemini => Box::new(Gemini::new()),
        }
    }
}

/// Asks `provider` one turn, collecting the events it reports.
async fn ask(
    provider: &HttpProvider,
) -> (Vec<ProviderEvent>, Result<ProviderResponse, ProviderError>) {
    let transcript = [Message::user("Hello")];
    let metadata = http_support::turn_metadata();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let observer = move |event: &ProviderEvent| sink.lock().unwrap().push(event.clone());
    let request = ProviderRequest::new(&transcript, &[], &metadata).with_observer(Some(&observer));
    let answer = provider.complete(request).await;
    let events = events.lock().unwrap().clone();
    (events, answer)
}

/// Each recording as the bytes a server sends: real SSE files as they are, JSON-lines files as
/// one `data:` event per line.
fn recordings(dir: &Path) -> Vec<(Api, String, Vec<u8>)> {
    let mut all = Vec::new();
    let mut listed = |api: Api, folder: &str, suffix: &str, lines: bool| {
        let mut names: Vec<String> = std::fs::read_dir(dir.join(folder))
            .unwrap_or_else(|error| panic!("{folder}: {error}"))
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(suffix))
            .collect();
        names.sort();
        for name in names {
            let relative = format!("{folder}/{name}");
            let bytes = read(dir, &relative);
            let bytes = if lines {
                String::from_utf8(bytes)
                    .unwrap()
                    .lines()
                    .filter(|line| !line.trim().is_empty())
                    .map(|line| format!("data: {line}\n\n"))
                    .collect::<String>()
                    .into_bytes()
            } else {
                bytes
            };
            all.push((api, relative, bytes));
        }
    };
    listed(
        Api::Chat,
        "openai-python/inline-snapshot-external",
        ".bin",
        false,
    );
    listed(
        Api::Responses,
        "vercel-ai/packages/openai/src/responses/__fixtures__",
        ".chunks.txt",
        true,
    );
    listed(
        Api::Anthropic,
        "anthropic-sdk-python/tests/lib/streaming/fixtures",
        ".txt",
        false,
    );
    listed(
        Api::Anthropic,
        "vercel-ai/packages/anthropic/src/__fixtures__",
        ".chunks.txt",
        true,
    );
    listed(
        Api::Gemini,
        "vercel-ai/packages/google/src/__fixtures__",
        ".chunks.txt",
        true,
    );
    all
}

/// Every recording, served in randomly cut pieces (some of them slow), gives the same events
/// and the same end as the format's decoder on the whole recording.
#[test]
fn recorded_streams_arrive_whole_whatever_the_chunking() {
    let Some(dir) = payloads() else { return };
    let recordings = recordings(&dir);
    assert!(
        recordings.len() >= 40,
        "only {} recordings",
        recordings.len()
    );
    let tools = Arc::new(ToolTable::default());
    let expected: Vec<_> = recordings
        .iter()
        .map(|(api, _, bytes)| decode(&*api.format(), &tools, &frame_sse(bytes, &[])))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for (index, ((api, name, bytes), (expected_events, expected))) in
            recordings.into_iter().zip(expected).enumerate()
        {
            let seed = index as u64;
            // Every fifth recording comes slowly, a millisecond before each piece.
            let pause = if index % 5 == 0 {
                Duration::from_millis(1)
            } else {
                Duration::ZERO
            };
            let cuts = 1 + (index * 7) % 40;
            let server =
                Server::start(move |_, _| Reply::sse(bytes.clone()).cut(seed, cuts, pause)).await;
            let provider = api.builder(&server).build().unwrap();
            let (events, answer) = ask(&provider).await;
            assert_eq!(events, expected_events, "{name} (seed {seed}): events");
            assert_eq!(answer, expected, "{name} (seed {seed}): the end");
            assert_eq!(server.requests().len(), 1, "{name}: one request");
        }
    });
}

/// A short OpenAI Chat stream: a text answer in three events.
fn chat_stream() -> Vec<u8> {
    let mut text = String::new();
    for delta in ["Hel", "lo", "!"] {
        let chunk = json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": delta}}]});
        text.push_str(&format!("data: {chunk}\n\n"));
    }
    let end = json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    text.push_str(&format!("data: {end}\n\ndata: [DONE]\n\n"));
    text.into_bytes()
}

/// A server that sends the first event of [`chat_stream`], then SSE comments every 20 ms: the
/// connection stays busy but no event comes.
async fn stalled_after_first_event() -> Server {
    let stream = chat_stream();
    let first_event = stream.iter().position(|&b| b == b'\n').unwrap() + 2;
    Server::start(move |_, _| Reply {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        steps: vec![
            Step::Send(stream[..first_event].to_vec()),
            Step::Idle(Duration::from_millis(20)),
        ],
    })
    .await
}

fn fast_retries() -> RetryPolicy {
    RetryPolicy::default().with_backoff(Duration::from_millis(5), Duration::from_millis(10))
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_is_a_truncated_stream_and_not_retried() {
    let stream = chat_stream();
    let half = stream.len() / 2;
    let server = Server::start(move |_, _| Reply {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        steps: vec![
            Step::Send(stream[..half].to_vec()),
            Step::Sleep(Duration::from_millis(50)),
            Step::Drop,
        ],
    })
    .await;
    let provider = Api::Chat
        .builder(&server)
        .retry(fast_retries())
        .build()
        .unwrap();
    let (events, answer) = ask(&provider).await;
    let error = answer.unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::TruncatedStream, "{error}");
    let partial = error.partial().expect("what was complete is kept");
    assert!(partial.text.starts_with("Hel"), "{:?}", partial.text);
    assert!(
        events
            .iter()
            .any(|event| matches!(event, ProviderEvent::TextDelta { .. }))
    );
    assert_eq!(
        server.requests().len(),
        1,
        "nothing is retried once the body began"
    );
}

#[tokio::test]
async fn a_429_with_retry_after_waits_as_told_then_succeeds() {
    let stream = chat_stream();
    let server = Server::start(move |_, index| match index {
        0 => Reply::json(
            429,
            &json!({"error": {"message": "Rate limit reached", "type": "requests"}}),
        )
        .header("retry-after", "0.2"),
        _ => Reply::sse(stream.clone()),
    })
    .await;
    let provider = Api::Chat.builder(&server).build().unwrap();
    let (events, answer) = ask(&provider).await;
    assert_eq!(answer.unwrap().text, "Hello!");
    let retries: Vec<_> = events
        .iter()
        .filter(|event| matches!(event, ProviderEvent::Retrying { .. }))
        .collect();
    assert_eq!(
        retries,
        [&ProviderEvent::Retrying {
            attempt: 1,
            wait_ms: 200,
            reason: "rate_limited".into(),
            status: Some(429),
        }]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The wait was honoured: the second request came no sooner than the server asked.
    assert!(requests[1].at - requests[0].at >= Duration::from_millis(200));
    assert_eq!(
        requests[0].body, requests[1].body,
        "the same request is sent again"
    );
}

#[tokio::test]
async fn a_500_is_retried_with_backoff_and_x_should_retry_false_is_not() {
    let stream = chat_stream();
    let server = Server::start(move |_, index| match index {
        0 => Reply::json(500, &json!({"error": {"message": "boom"}})),
        _ => Reply::sse(stream.clone()),
    })
    .await;
    let provider = Api::Chat
        .builder(&server)
        .retry(fast_retries())
        .build()
        .unwrap();
    let (events, answer) = ask(&provider).await;
    assert_eq!(answer.unwrap().text, "Hello!");
    let retry = events.iter().find_map(|event| match event {
        ProviderEvent::Retrying {
            attempt,
            wait_ms,
            reason,
            status,
        } => Some((*attempt, *wait_ms, reason.clone(), *status)),
        _ => None,
    });
    let (attempt, wait_ms, reason, status) = retry.expect("one retry event");
    assert_eq!(
        (attempt, reason.as_str(), status),
        (1, "overloaded", Some(500))
    );
    assert!(
        wait_ms <= 5,
        "the configured backoff, jittered down: {wait_ms}"
    );
    assert_eq!(server.requests().len(), 2);

    let server = Server::start(|_, _| {
        Reply::json(503, &json!({"error": {"message": "no"}})).header("x-should-retry", "false")
    })
    .await;
    let provider = Api::Chat
        .builder(&server)
        .retry(fast_retries())
        .build()
        .unwrap();
    let (_, answer) = ask(&provider).await;
    assert_eq!(answer.unwrap_err().status(), Some(503));
    assert_eq!(server.requests().len(), 1);

    // Always 500: the first attempt and two retries, then the error.
    let server =
        Server::start(|_, _| Reply::json(500, &json!({"error": {"message": "down"}}))).await;
    let provider = Api::Chat
        .builder(&server)
        .retry(fast_retries())
        .build()
        .unwrap();
    let (events, answer) = ask(&provider).await;
    assert_eq!(
        answer.unwrap_err().to_string(),
        "overloaded (HTTP 500): down"
    );
    assert_eq!(server.requests().len(), 3);
    assert_eq!(events.len(), 2, "{events:?}");
}

#[tokio::test]
async fn a_401_is_an_authentication_error_with_the_key_redacted_and_no_retry() {
    const KEY: &str = "sk-test-0123456789abcdef";
    for api in [Api::Chat, Api::Responses, Api::Anthropic, Api::Gemini] {
        let server = Server::start(|_, _| {
            Reply::json(
                401,
                &json!({"error": {"message": format!("Incorrect API key provided: {KEY}."), "type": "invalid_request_error"}}),
            )
        })
        .await;
        let provider = api
            .builder(&server)
            .key(ApiKey::new(KEY))
            .retry(fast_retries())
            .build()
            .unwrap();
        let (events, answer) = ask(&provider).await;
        let error = answer.unwrap_err();
        assert_eq!(error.kind(), ProviderErrorKind::Authentication, "{api:?}");
        assert_eq!(
            error.to_string(),
            "authentication (HTTP 401): invalid_request_error: Incorrect API key provided: [REDACTED].",
            "{api:?}"
        );
        assert!(events.is_empty(), "{api:?}: {events:?}");
        let requests = server.requests();
        assert_eq!(requests.len(), 1, "{api:?}: not retried");
        // The key went where the API expects it, and nowhere a reader of the provider sees it.
        let sent = match api {
            Api::Chat | Api::Responses => requests[0].header("authorization").map(str::to_owned),
            Api::Anthropic => requests[0]
                .header("x-api-key")
                .map(|key| format!("Bearer {key}")),
            Api::Gemini => requests[0]
                .header("x-goog-api-key")
                .map(|key| format!("Bearer {key}")),
        };
        assert_eq!(
            sent.as_deref(),
            Some(format!("Bearer {KEY}").as_str()),
            "{api:?}"
        );
        assert!(!format!("{provider:?}").contains(KEY));
    }
}

#[tokio::test]
async fn a_host_source_key_is_asked_per_turn_and_redacted_too() {
    struct Vault;
    impl prism::provider::http::SecretSource for Vault {
        fn api_key(&self) -> prism::effects::BoxFuture<'_, Result<ApiKey, String>> {
            Box::pin(async { Ok(ApiKey::new("vault-key-42-abcdef")) })
        }
    }
    let server = Server::start(|_, _| {
        Reply::json(
            403,
            &json!({"error": {"message": "key vault-key-42-abcdef is revoked"}}),
        )
    })
    .await;
    let provider = Api::Chat
        .builder(&server)
        .key(KeySource::host(Vault))
        .build()
        .unwrap();
    let (_, answer) = ask(&provider).await;
    let error = answer.unwrap_err();
    assert_eq!(error.message(), "key [REDACTED] is revoked");
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some("Bearer vault-key-42-abcdef")
    );
}

#[tokio::test]
async fn an_oversized_answer_is_cut_off_with_a_clear_error() {
    let chunk = json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": "x".repeat(500)}}]});
    let body: String = (0..20).map(|_| format!("data: {chunk}\n\n")).collect();
    let server =
        Server::start(move |_, _| Reply::sse(body.clone()).cut(7, 20, Duration::ZERO)).await;
    let provider = Api::Chat
        .builder(&server)
        .max_response_bytes(4096)
        .retry(fast_retries())
        .build()
        .unwrap();
    let (_, answer) = ask(&provider).await;
    let error = answer.unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::InvalidResponse);
    assert_eq!(
        error.message(),
        "the answer is larger than 4096 bytes; the rest was not read"
    );
    assert_eq!(server.requests().len(), 1);
}

/// The first-byte limit runs from the request to the first event: a head that comes late
/// leaves the first event only what is left of it.
#[tokio::test]
async fn the_first_byte_limit_covers_the_head_and_the_first_event_together() {
    let stream = chat_stream();
    let server = Server::start(move |_, _| {
        let late = Reply::sse(stream.clone());
        let wait = Duration::from_millis(400);
        Reply {
            steps: [vec![Step::HeadAfter(wait), Step::Sleep(wait)], late.steps].concat(),
            ..late
        }
    })
    .await;
    let provider = Api::Chat
        .builder(&server)
        .timeouts(Timeouts::default().with_first_byte(Duration::from_millis(600)))
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let (_, answer) = ask(&provider).await;
    let error = answer.expect_err("the first event came 800 ms after the request");
    assert_eq!(error.kind(), ProviderErrorKind::Transport, "{error}");
    assert!(error.message().contains("within 600ms"), "{error}");
}

#[tokio::test]
async fn a_stalled_stream_hits_the_gap_timeout() {
    let server = stalled_after_first_event().await;
    let timeouts = Timeouts::default().with_gap(Duration::from_millis(300));
    let provider = Api::Chat
        .builder(&server)
        .timeouts(timeouts)
        .retry(fast_retries())
        .build()
        .unwrap();
    let (events, answer) = ask(&provider).await;
    let error = answer.unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::Transport);
    assert_eq!(error.message(), "no event from the provider within 300ms");
    assert_eq!(
        events,
        [
            ProviderEvent::ResponseStarted {
                id: Some("c1".into()),
                model: Some("m".into())
            },
            ProviderEvent::TextDelta { text: "Hel".into() }
        ]
    );
    assert_eq!(
        server.requests().len(),
        1,
        "not retried once the body began"
    );
    assert!(server.wait_closed().await, "the connection is closed");
}

#[tokio::test]
async fn the_turn_timeout_bounds_retries_too() {
    let server = Server::start(|_, _| {
        Reply::json(429, &json!({"error": {"message": "slow down"}})).header("retry-after", "30")
    })
    .await;
    let timeouts = Timeouts::default().with_turn(Duration::from_millis(300));
    let provider = Api::Chat
        .builder(&server)
        .timeouts(timeouts)
        .build()
        .unwrap();
    let (events, answer) = ask(&provider).await;
    let error = answer.unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::Transport);
    assert_eq!(error.message(), "the turn took longer than 300ms");
    assert!(matches!(
        events[..],
        [ProviderEvent::Retrying {
            wait_ms: 30_000,
            ..
        }]
    ));
}

#[tokio::test]
async fn a_server_that_is_not_there_is_a_transport_error_after_the_retries() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let provider = HttpProvider::openai_compatible(base, "m")
        .retry(fast_retries())
        .build()
        .unwrap();
    let (events, answer) = ask(&provider).await;
    let error = answer.unwrap_err();
    assert_eq!(error.kind(), ProviderErrorKind::Transport, "{error}");
    assert!(
        error.message().starts_with("the request could not be sent"),
        "{error}"
    );
    assert_eq!(events.len(), 2, "two retries: {events:?}");
}

#[test]
fn bad_settings_are_refused_when_built() {
    let error = HttpProvider::openai_compatible("not a url", "m")
        .build()
        .unwrap_err();
    assert!(
        error
            .message()
            .starts_with("the request URL `not a url/chat/completions` is not valid"),
        "{error}"
    );
    // A URL that does not parse cannot be taken apart: one that may hold a password or a
    // token is not quoted at all.
    let error = HttpProvider::openai_compatible("https://me:pa ss-secret@proxy:99999/v1", "m")
        .build()
        .unwrap_err();
    assert!(!error.message().contains("secret"), "{error}");
    assert!(error.message().contains("is not valid"), "{error}");
    let error = HttpProvider::openai_compatible("https://proxy:99999/v1?key=tok-secret", "m")
        .build()
        .unwrap_err();
    assert!(!error.message().contains("secret"), "{error}");
    let error = HttpProvider::openai_compatible("http://localhost/v1", " ")
        .build()
        .unwrap_err();
    assert_eq!(error.message(), "the model name is empty");
    let error = HttpProvider::openai_chat("m")
        .key(KeySource::env("PRISM_SURELY_UNSET_KEY_VARIABLE"))
        .build()
        .unwrap_err();
    assert_eq!(
        error.message(),
        "the environment variable PRISM_SURELY_UNSET_KEY_VARIABLE is not set"
    );
}

#[tokio::test]
async fn cancelling_a_run_mid_stream_closes_the_connection_and_the_run_reports_cancelled() {
    use prism::context::CancellationToken;
    use prism::run::AgentConfig;
    use prism::{Agent, Dispatcher, RunError, RunOptions, ToolRegistry};

    let server = stalled_after_first_event().await;
    let provider = Api::Chat.builder(&server).build().unwrap();
    let token = CancellationToken::new();
    let fire = token.clone();
    let config = AgentConfig::new().provider_events(move |event| {
        if matches!(event, ProviderEvent::TextDelta { .. }) {
            fire.cancel();
        }
    });
    let agent =
        Agent::new(Dispatcher::builder(ToolRegistry::new()).build(), provider).with_config(config);
    let mut session = agent.session("s");
    let error = session
        .run("Hi", RunOptions::new().cancellation(token))
        .await
        .unwrap_err();
    assert!(matches!(error, RunError::Cancelled), "{error}");
    assert!(server.wait_closed().await, "the connection is closed");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_whole_answer_is_decoded_and_reported_as_events_when_streaming_is_off() {
    let body = json!({
        "id": "chatcmpl-9", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Whole."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    });
    let server = Server::start(move |_, _| Reply::json(200, &body).cut(1, 5, Duration::ZERO)).await;
    let provider = Api::Chat.builder(&server).without_stream().build().unwrap();
    let (events, answer) = ask(&provider).await;
    let answer = answer.unwrap();
    assert_eq!(answer.text, "Whole.");
    assert_eq!(events, answer.to_events());
    let request = &server.requests()[0];
    assert_eq!(request.json()["stream"], json!(null), "{}", request.json());
    assert_eq!(request.header("accept"), Some("application/json"));
}

/// A server that answers a stream request with a JSON body (an error sent with 200, as some
/// gateways do, or a whole answer from a server that ignores `stream`) is read as that body, not
/// reported as a stream cut before its first event.
#[tokio::test]
async fn a_json_answer_to_a_stream_request_is_read_as_json() {
    let chat_once = |server: &Server| {
        Api::Chat
            .builder(server)
            .retry(RetryPolicy::none())
            .build()
            .unwrap()
    };
    let server = Server::start(|_, _| {
        Reply::json(
            200,
            &json!({"error": {"message": "the model is warming up", "type": "server_error"}}),
        )
    })
    .await;
    let provider = chat_once(&server);
    let (_, answer) = ask(&provider).await;
    let error = answer.unwrap_err();
    assert!(error.message().contains("warming up"), "{error}");
    assert_eq!(error.kind(), ProviderErrorKind::Overloaded, "{error}");

    let completion = json!({"id": "c1", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Hi."}, "finish_reason": "stop"}]});
    let server = Server::start(move |_, _| Reply::json(200, &completion)).await;
    let provider = chat_once(&server);
    let (events, answer) = ask(&provider).await;
    assert_eq!(answer.unwrap().text, "Hi.");
    assert!(!events.is_empty());
}

/// A server that keeps the connection open after its end marker (`[DONE]`, `message_stop`,
/// `response.completed`) has still answered: the answer is taken at the marker, with no wait
/// for a close that does not come, and the connection is let go.
#[tokio::test]
async fn an_answer_is_taken_at_its_end_marker_even_if_the_connection_stays_open() {
    let event = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
    let responses = [
        event("response.created", json!({"type": "response.created", "response": {"id": "r1", "model": "m", "status": "in_progress", "output": []}})),
        event("response.output_item.added", json!({"type": "response.output_item.added", "output_index": 0, "item": {"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []}})),
        event("response.output_text.delta", json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Hello!"})),
        event("response.completed", json!({"type": "response.completed", "response": {"id": "r1", "model": "m", "status": "completed", "output": []}})),
    ]
    .concat();
    let anthropic = [
        event("message_start", json!({"type": "message_start", "message": {"id": "m1", "type": "message", "role": "assistant", "model": "m", "content": [], "usage": {"input_tokens": 1, "output_tokens": 0}}})),
        event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
        event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello!"}})),
        event("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 2}})),
        event("message_stop", json!({"type": "message_stop"})),
    ]
    .concat();
    let cases = [
        (Api::Chat, chat_stream()),
        (Api::Responses, responses.into_bytes()),
        (Api::Anthropic, anthropic.into_bytes()),
    ];
    for (api, stream) in cases {
        let server = Server::start(move |_, _| Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            steps: vec![
                Step::Send(stream.clone()),
                Step::Idle(Duration::from_millis(20)),
            ],
        })
        .await;
        let provider = api
            .builder(&server)
            .timeouts(Timeouts::default().with_gap(Duration::from_secs(600)))
            .retry(RetryPolicy::none())
            .build()
            .unwrap();
        let (_, answer) = tokio::time::timeout(Duration::from_secs(60), ask(&provider))
            .await
            .unwrap_or_else(|_| panic!("{api:?}: still waiting after the end marker"));
        let answer = answer.unwrap_or_else(|error| panic!("{api:?}: {error}"));
        assert_eq!(answer.text, "Hello!", "{api:?}");
        assert!(
            server.wait_closed().await,
            "{api:?}: the connection is let go"
        );
    }
}
