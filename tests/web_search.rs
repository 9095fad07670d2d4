//! The search adapters against a local server answering in each API's shape (results, errors,
//! rate limits), and `web_search`'s bounds and URL filtering.

mod web_support;

use std::sync::{Arc, Mutex};

use prism::tools::web::{
    BraveBackend, SearchBackend, SearchQuery, SearxngBackend, UrlPolicy, WebErrorKind, web_search,
};
use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};
use serde_json::{Value, json};
use web_support::{Reply, serve};

fn query(text: &str, count: usize) -> SearchQuery {
    SearchQuery {
        query: text.into(),
        count,
        language: Some("en".into()),
    }
}

/// A SearXNG answer as the instance sends it (fields beyond the three read are kept, as sent).
fn searxng_answer() -> Value {
    json!({
        "query": "rust tides",
        "number_of_results": 0,
        "results": [
            {"url": "https://example.org/tides", "title": "Tides explained", "content": "The moon pulls the sea.",
             "engine": "duckduckgo", "parsed_url": ["https", "example.org", "/tides", "", "", ""],
             "template": "default.html", "engines": ["duckduckgo", "brave"], "positions": [1, 2],
             "publishedDate": null, "score": 4.0, "category": "general"},
            {"url": "http://10.0.0.7/admin", "title": "Internal", "content": "should be dropped",
             "engine": "bing", "engines": ["bing"], "positions": [3], "score": 0.3, "category": "general"},
            {"url": "https://example.com/rust", "title": "Rust", "content": "A language.",
             "engine": "bing", "engines": ["bing"], "positions": [4], "score": 0.2, "category": "general"}
        ],
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": ["rust tide tables"],
        "unresponsive_engines": [["google", "timeout"]]
    })
}

/// A Brave web search answer in the API's shape.
fn brave_answer() -> Value {
    json!({
        "type": "search",
        "query": {"original": "rust tides", "show_strict_warning": false, "is_navigational": false,
                  "spellcheck_off": true, "country": "us", "bad_results": false},
        "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}], "top": [], "side": []},
        "web": {
            "type": "search",
            "results": [
                {"title": "Tides explained", "url": "https://example.org/tides", "is_source_local": false,
                 "is_source_both": false, "description": "The moon pulls the sea.", "page_age": "2024-05-01T00:00:00",
                 "profile": {"name": "Example", "url": "https://example.org/tides", "long_name": "example.org"},
                 "language": "en", "family_friendly": true, "type": "search_result", "subtype": "generic",
                 "meta_url": {"scheme": "https", "netloc": "example.org", "hostname": "example.org", "path": "› tides"}},
                {"title": "Rust", "url": "https://example.com/rust", "description": "A language.",
                 "type": "search_result", "language": "en", "family_friendly": true}
            ],
            "family_friendly": true
        }
    })
}

fn brave_error(status: u16, code: &str, detail: &str) -> Value {
    json!({
        "type": "ErrorResponse",
        "error": {"id": "9a1f6c", "status": status, "code": code, "detail": detail,
                  "meta": {"plan": "Free", "rate_limit": 1, "rate_current": 2}},
        "time": 1714560000
    })
}

#[tokio::test]
async fn searxng_results_errors_and_rate_limits() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let address = serve("127.0.0.1", move |request| {
        log.lock().unwrap().push(request.target.clone());
        if request.target.contains("q=limited") {
            Reply::Bytes {
                status: 429,
                headers: vec![("Retry-After".into(), "30".into())],
                body: b"Too Many Requests".to_vec(),
            }
        } else if request.target.contains("q=nojson") {
            Reply::Bytes {
                status: 403,
                headers: vec![("Content-Type".into(), "text/html".into())],
                body: b"<h1>403 Forbidden</h1>".to_vec(),
            }
        } else if request.target.contains("q=odd") {
            Reply::json(200, &json!({"query": "odd"}), &[])
        } else {
            Reply::json(200, &searxng_answer(), &[])
        }
    })
    .await;
    let backend = SearxngBackend::new(&format!("http://{address}/")).unwrap();
    let hits = backend.search(&query("rust tides", 10)).await.unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(
        (hits[0].title.as_str(), hits[0].url.as_str()),
        ("Tides explained", "https://example.org/tides")
    );
    assert_eq!(hits[0].snippet, "The moon pulls the sea.");
    assert_eq!(
        backend.search(&query("rust tides", 1)).await.unwrap().len(),
        1
    );
    let target = seen.lock().unwrap()[0].clone();
    assert!(
        target.starts_with("/search?q=rust+tides&format=json&language=en"),
        "{target}"
    );

    let limited = backend.search(&query("limited", 5)).await.unwrap_err();
    assert_eq!(limited.kind(), WebErrorKind::RateLimited);
    assert!(limited.message().contains("retry after 30"), "{limited}");
    let forbidden = backend.search(&query("nojson", 5)).await.unwrap_err();
    assert_eq!(forbidden.kind(), WebErrorKind::Backend);
    assert!(forbidden.message().contains("403"), "{forbidden}");
    let odd = backend.search(&query("odd", 5)).await.unwrap_err();
    assert!(odd.message().contains("results"), "{odd}");
}

#[tokio::test]
async fn brave_results_errors_and_rate_limits() {
    let heads = Arc::new(Mutex::new(Vec::new()));
    let log = heads.clone();
    let address = serve("127.0.0.1", move |request| {
        log.lock().unwrap().push(request.head.to_ascii_lowercase());
        if request.target.contains("q=limited") {
            Reply::json(
                429,
                &brave_error(429, "RATE_LIMITED", "Request rate limit exceeded for plan."),
                &[
                    ("X-RateLimit-Limit", "1, 2000"),
                    ("X-RateLimit-Remaining", "0, 1990"),
                    ("X-RateLimit-Reset", "1, 1419704"),
                ],
            )
        } else if request.target.contains("q=badkey") {
            Reply::json(
                422,
                &brave_error(
                    422,
                    "SUBSCRIPTION_TOKEN_INVALID",
                    "The provided subscription token is invalid.",
                ),
                &[],
            )
        } else if request.target.contains("q=images") {
            Reply::json(
                200,
                &json!({"type": "search", "query": {"original": "images"}}),
                &[],
            )
        } else {
            Reply::json(200, &brave_answer(), &[])
        }
    })
    .await;
    let backend = BraveBackend::new("key-123")
        .endpoint(&format!("http://{address}/res/v1/web/search"))
        .unwrap();
    let hits = backend.search(&query("rust tides", 5)).await.unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[1].url, "https://example.com/rust");
    assert_eq!(hits[0].snippet, "The moon pulls the sea.");
    let head = heads.lock().unwrap()[0].clone();
    assert!(head.contains("x-subscription-token: key-123"), "{head}");
    assert!(
        head.contains("count=5") && head.contains("text_decorations=false"),
        "{head}"
    );

    let limited = backend.search(&query("limited", 5)).await.unwrap_err();
    assert_eq!(limited.kind(), WebErrorKind::RateLimited);
    assert!(limited.message().contains("RATE_LIMITED"), "{limited}");
    let bad_key = backend.search(&query("badkey", 5)).await.unwrap_err();
    assert_eq!(bad_key.kind(), WebErrorKind::Backend);
    assert!(
        bad_key.message().contains("SUBSCRIPTION_TOKEN_INVALID"),
        "{bad_key}"
    );
    assert!(
        backend
            .search(&query("images", 5))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn the_tool_bounds_results_and_drops_urls_the_policy_refuses() {
    let address = serve("127.0.0.1", |request| {
        if request.target.contains("q=limited") {
            Reply::Bytes {
                status: 429,
                headers: vec![],
                body: Vec::new(),
            }
        } else {
            let mut answer = searxng_answer();
            answer["results"][0]["title"] = Value::from("T".repeat(1000));
            Reply::json(200, &answer, &[])
        }
    })
    .await;
    let backend = SearxngBackend::new(&format!("http://{address}")).unwrap();
    let tool = web_search(Arc::new(backend), UrlPolicy::new());
    assert!(tool.untrusted_output() && !tool.is_exclusive());
    assert_eq!(tool.annotations().idempotent, Some(true));
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool])).build();
    let ctx = ToolExecutionContext::new();
    let call = ToolCall::new(
        "s1",
        "web_search",
        json!({"query": "rust tides", "count": 50}),
    );
    let result = dispatcher.dispatch(call, &ctx).await.unwrap();
    assert!(result.is_untrusted());
    let value = result.as_value().unwrap();
    let results = value["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{value}");
    assert_eq!(value["dropped"], 1);
    assert!(
        results
            .iter()
            .all(|hit| !hit["url"].as_str().unwrap().contains("10.0.0.7"))
    );
    assert_eq!(results[0]["title"].as_str().unwrap().chars().count(), 200);
    assert_eq!(value["backend"], "searxng");

    let call = ToolCall::new("s2", "web_search", json!({"query": "limited"}));
    let result = dispatcher.dispatch(call, &ctx).await.unwrap();
    assert_eq!(result.error_info().unwrap().code.as_str(), "rate_limited");
    let call = ToolCall::new("s3", "web_search", json!({"query": "  "}));
    let result = dispatcher.dispatch(call, &ctx).await.unwrap();
    assert_eq!(
        result.error_info().unwrap().code.as_str(),
        "invalid_arguments"
    );
}

/// A backend's hit URL is only as long as a link can usefully be: a hit whose URL runs past
/// 4 KiB is left out and counted in `dropped`, not handed to the model whole.
#[tokio::test]
async fn a_hit_with_an_overlong_url_is_dropped() {
    let address = serve("127.0.0.1", |_| {
        let mut answer = searxng_answer();
        answer["results"][2]["url"] =
            Value::from(format!("https://example.com/{}", "a".repeat(100_000)));
        Reply::json(200, &answer, &[])
    })
    .await;
    let backend = SearxngBackend::new(&format!("http://{address}")).unwrap();
    let tool = web_search(Arc::new(backend), UrlPolicy::new());
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool])).build();
    let call = ToolCall::new("s1", "web_search", json!({"query": "rust tides"}));
    let result = dispatcher
        .dispatch(call, &ToolExecutionContext::new())
        .await
        .unwrap();
    let value = result.as_value().unwrap();
    let results = value["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{} results", results.len());
    assert_eq!(results[0]["url"], "https://example.org/tides");
    assert_eq!(value["dropped"], 2, "the internal address and the long URL");
}
