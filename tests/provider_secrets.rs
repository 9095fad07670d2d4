//! Provider errors quote the server's error body cut to 500 bytes: every secret known to the
//! provider or the run is taken out first, so no cut leaves part of one behind.

mod common;
mod http_support;
mod provider_support;

use common::leaked_prefix;
use http_support::{Reply, Server};
use prism::RunError;
use prism::dispatch::SecretRedactor;
use prism::provider::http::{ApiKey, HttpProvider, KeySource, RetryPolicy};
use prism::{Agent, Dispatcher, Message, Provider, ProviderRequest, RunOptions, ToolRegistry};
use serde_json::json;

/// No retries, so each test makes one request.
fn no_retries() -> RetryPolicy {
    RetryPolicy::none()
}

/// A host key source's key is taken out of an error body before the body is cut to its
/// 500-byte quote, so no part of it is left at the cut.
#[tokio::test]
async fn a_host_sources_key_is_redacted_before_the_error_body_is_cut() {
    const KEY: &str = "vault-key-0123456789abcdef";
    struct Vault;
    impl prism::provider::http::SecretSource for Vault {
        fn api_key(&self) -> prism::effects::BoxFuture<'_, Result<ApiKey, String>> {
            Box::pin(async { Ok(ApiKey::new(KEY)) })
        }
    }
    // 490 bytes of text, then the key: the 500-byte quote cuts it after 10 bytes.
    let message = format!("{} {KEY} is revoked", "x".repeat(489));
    let server = Server::start(move |_, _| {
        http_support::Reply::json(403, &json!({"error": {"message": message}}))
    })
    .await;
    let provider = HttpProvider::openai_compatible(format!("{}/v1", server.base), "m")
        .key(KeySource::host(Vault))
        .retry(no_retries())
        .build()
        .unwrap();
    let transcript = [Message::user("Hello")];
    let metadata = http_support::turn_metadata();
    let request = ProviderRequest::new(&transcript, &[], &metadata);
    let error = provider.complete(request).await.unwrap_err();
    let text = error.to_string();
    assert_eq!(
        leaked_prefix(&text, KEY),
        None,
        "the host key leaked cut short in the error returned to the host: …{}",
        &text[text.len().saturating_sub(40)..]
    );
}

/// A secret of the agent's dispatcher in a provider's error body is taken out before the body
/// is cut to its quote.

#[tokio::test]
async fn a_dispatcher_secret_is_redacted_before_the_error_body_is_cut() {
    const SECRET: &str = "db-password-0123456789abcdef";
    let message = format!("{} {SECRET} is not allowed", "x".repeat(489));
    let server =
        Server::start(move |_, _| Reply::json(400, &json!({"error": {"message": message}}))).await;
    let provider = HttpProvider::openai_compatible(format!("{}/v1", server.base), "m")
        .key(KeySource::None)
        .retry(no_retries())
        .build()
        .unwrap();
    let dispatcher = Dispatcher::builder(ToolRegistry::new())
        .redactor(SecretRedactor::new([SECRET]))
        .build();
    let agent = Agent::new(dispatcher, provider);
    let mut session = agent.session("s");
    let error = session.run("Hello", RunOptions::new()).await.unwrap_err();
    assert!(matches!(error, RunError::Provider { .. }), "{error:?}");
    let text = error.to_string();
    assert_eq!(
        leaked_prefix(&text, SECRET),
        None,
        "a dispatcher secret leaked cut short in the run's error: …{}",
        &text[text.len().saturating_sub(40)..]
    );
}

/// A partial answer's tool call names are the model's text, as its arguments are: a provider
/// error hands both back redacted.
#[test]
fn a_partial_answers_call_names_are_redacted() {
    use prism::{ProviderError, ProviderResponse, ToolCall};

    const SECRET: &str = "sk-live-name-0123456789";
    let partial = ProviderResponse::calls([ToolCall::new(
        "c1",
        format!("run_{SECRET}"),
        json!({"key": SECRET}),
    )]);
    let error = ProviderError::new("the stream broke")
        .with_partial(partial)
        .redacted(&SecretRedactor::new([SECRET]));
    let shown = format!("{error:?}");
    assert!(!shown.contains(SECRET), "{shown}");
    let call = &error.partial().expect("the partial answer").tool_calls[0];
    assert_eq!(call.name, "run_[REDACTED]");
}

/// The model's unreadable argument text is kept in its call's replay state, and a Responses
/// answer keeps its output items (argument text included) as the message's: a provider error's
/// partial answer hands both back redacted, as it does the parsed arguments.
#[test]
fn a_partial_answers_replay_state_is_redacted() {
    use prism::provider::openai_chat::OpenAiChat;
    use prism::provider::openai_responses::OpenAiResponses;
    use prism::provider::wire::{PreparedTool, ToolTable};
    use provider_support::{Sse, decode};
    use std::sync::Arc;

    const SECRET: &str = "sk-live-replay-0123456789";
    let tools = Arc::new(
        ToolTable::new(vec![PreparedTool::new("login", json!({"type": "object"}))]).unwrap(),
    );
    let sse = |data: serde_json::Value| Sse {
        event: None,
        data: data.to_string(),
    };
    // Chat: a call whose arguments do not parse, finished, then the stream breaks off.
    let chat = [
        sse(
            json!({"id": "r1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "id": "c1", "function": {"name": "login", "arguments": format!("{{\"key\": \"{SECRET}")}}]}}]}),
        ),
        sse(
            json!({"id": "r1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ),
    ];
    // Responses: a finished call item, then the stream breaks off.
    let responses = [
        sse(json!({"type": "response.created", "response": {"id": "r2"}})),
        sse(
            json!({"type": "response.output_item.done", "output_index": 0, "item": {
            "type": "function_call", "id": "fc_1", "call_id": "c1", "name": "login",
            "arguments": format!("{{\"key\": \"{SECRET}\"}}")}}),
        ),
    ];
    let redactor = SecretRedactor::new([SECRET]);
    for (format, events) in [
        (
            &OpenAiChat::new() as &dyn prism::provider::wire::WireFormat,
            &chat[..],
        ),
        (&OpenAiResponses, &responses[..]),
    ] {
        let (_, end) = decode(format, &tools, events);
        let error = end.expect_err("the stream was cut").redacted(&redactor);
        assert!(error.partial().is_some(), "{error:?}");
        let shown = format!("{error:?}");
        assert!(!shown.contains(SECRET), "{}: {shown}", format.name());
    }
}
