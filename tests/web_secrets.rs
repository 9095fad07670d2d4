//! The web tools never let a secret through in a form the dispatcher's redactor cannot find: a
//! text they cut (a page, a title, a snippet) is redacted first, a backend's error body is quoted
//! whole, the Brave key is taken out of what the API says, and an encoded query is never quoted.

mod common;
mod web_support;

use std::sync::Arc;

use common::leaked_prefix;
use prism::dispatch::SecretRedactor;
use prism::tools::web::{
    BraveBackend, SearchBackend, UrlPolicy, WebFetcher, web_fetch, web_search,
};
use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};
use serde_json::json;

/// A backend's error body is quoted whole: the dispatcher redacts it before it cuts it.
#[tokio::test]
async fn a_search_backends_error_body_is_redacted_before_it_is_cut() {
    const SECRET: &str = "sk-live-0123456789abcdef";
    // The quote keeps 300 characters of the body: 290 of filler, then 10 of the secret.
    let body = format!("{}{SECRET} was in your request", "x".repeat(290));
    let address = web_support::serve("127.0.0.1", move |_| web_support::Reply::Bytes {
        status: 500,
        headers: vec![("Content-Type".into(), "text/plain".into())],
        body: body.clone().into_bytes(),
    })
    .await;
    let backend = BraveBackend::new("brave-key")
        .endpoint(&format!("http://{address}/res/v1/web/search"))
        .unwrap();
    let message = &search_error(
        backend,
        SecretRedactor::new([SECRET]),
        json!({"query": "tides"}),
    )
    .await;
    assert_eq!(
        leaked_prefix(message, SECRET),
        None,
        "the result sent to the model holds a cut secret: …{}",
        &message[message.len().saturating_sub(40)..]
    );
}

/// The Brave key the library holds never reaches the model, even when the API echoes it.
#[tokio::test]
async fn the_brave_key_is_taken_out_of_what_the_backend_echoes() {
    const KEY: &str = "BSA-brave-key-0123456789";
    let address = web_support::serve("127.0.0.1", move |_| {
        web_support::Reply::json(
            401,
            &json!({"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID",
                    "detail": format!("The subscription token {KEY} is invalid.")}}),
            &[],
        )
    })
    .await;
    let backend = BraveBackend::new(KEY)
        .endpoint(&format!("http://{address}/res/v1/web/search"))
        .unwrap();
    let message = &search_error(
        backend,
        SecretRedactor::default(),
        json!({"query": "tides"}),
    )
    .await;
    assert!(
        !message.contains(KEY),
        "the Brave key reached the result sent to the model: {message}"
    );
}

/// A failed search names the endpoint without its query: the library encodes the model's
/// words there, a secret among them, in a form the redactor cannot find.
#[tokio::test]
async fn a_network_error_never_quotes_the_encoded_query() {
    // An AWS-style secret key: base64, with `/` and `+`.
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY+EXAMPLEKEY";
    let port = closed_port();
    let backend = BraveBackend::new("brave-key")
        .endpoint(&format!("http://127.0.0.1:{port}/res/v1/web/search"))
        .unwrap();
    let message = &search_error(
        backend,
        SecretRedactor::new([SECRET]),
        json!({"query": format!("key {SECRET}")}),
    )
    .await;
    // `application/x-www-form-urlencoded`, as the backend writes `q=`.
    let encoded = SECRET.replace('/', "%2F").replace('+', "%2B");
    assert!(
        !message.contains(&encoded),
        "the secret reached the model percent-encoded by the library: {message}"
    );
}

/// A page cut to `max_chars` is redacted first, with the redactor the call's context carries.
#[tokio::test]
async fn web_fetch_redacts_a_page_before_it_cuts_it() {
    const SECRET: &str = "sk-live-0123456789abcdef";
    let body = format!("{}{SECRET} and more text after it", "x".repeat(90));
    let address = web_support::serve("127.0.0.2", move |_| {
        web_support::Reply::ok("text/plain; charset=utf-8", body.clone())
    })
    .await;
    let fetcher = WebFetcher::new(UrlPolicy::new().allow_ip("127.0.0.2".parse().unwrap())).unwrap();
    let tool = web_fetch(fetcher, 100);
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .redactor(SecretRedactor::new([SECRET]))
        .build();
    let call = ToolCall::new(
        "c1",
        "web_fetch",
        json!({"url": format!("http://{address}/page")}),
    );
    let result = dispatcher
        .dispatch(call, &ToolExecutionContext::new())
        .await
        .unwrap();
    let value = result.as_value().expect("a value").to_string();
    assert_eq!(
        leaked_prefix(&value, SECRET),
        None,
        "the result sent to the model holds a cut secret: {value}"
    );
}

/// A SearXNG instance behind basic authentication is configured with a URL that holds the
/// password; a failed search names the instance without it.
#[tokio::test]
async fn a_network_error_never_quotes_the_instances_password() {
    const PASSWORD: &str = "searx-pa55word-0123456789";
    let port = closed_port();
    let backend = prism::tools::web::SearxngBackend::new(&format!(
        "http://alice:{PASSWORD}@127.0.0.1:{port}/"
    ))
    .unwrap();
    let message = &search_error(
        backend,
        SecretRedactor::default(),
        json!({"query": "tides"}),
    )
    .await;
    assert!(
        !message.contains(PASSWORD),
        "the instance's password reached the model: {message}"
    );
    assert!(
        message.contains("127.0.0.1"),
        "the instance is named: {message}"
    );
}

/// The error message `web_search` on `backend` gives for `arguments`, through a dispatcher
/// with `redactor`.
async fn search_error(
    backend: impl SearchBackend,
    redactor: SecretRedactor,
    arguments: serde_json::Value,
) -> String {
    let tool = web_search(Arc::new(backend), UrlPolicy::new());
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool]))
        .redactor(redactor)
        .build();
    let call = ToolCall::new("c1", "web_search", arguments);
    let result = dispatcher
        .dispatch(call, &ToolExecutionContext::new())
        .await
        .unwrap();
    result
        .error_info()
        .expect("an error result")
        .message
        .clone()
}

/// A port nothing listens on: a request to it fails to connect.
fn closed_port() -> u16 {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    closed.local_addr().unwrap().port()
}
