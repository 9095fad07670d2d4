//! The web tools under what real servers and pages do: host lists written as people write hosts
//! (internationalised names, IPv6 in full), pages cut inside a character, pages without a
//! declared type, backends that send more hits than asked, and pages nested deep enough to
//! overflow a recursive converter.
#![cfg(feature = "web")]

mod web_support;

use std::sync::Arc;

use prism::tools::web::{
    FetchLimits, SearchBackend, SearchFuture, SearchHit, SearchQuery, UrlPolicy, WebFetcher,
    web_extract, web_fetch, web_search,
};
use prism::{Dispatcher, ToolCall, ToolExecutionContext, ToolRegistry};
use serde_json::json;
use web_support::{Reply, serve};

const SERVER_IP: &str = "127.0.0.2";

fn fetcher(max_bytes: usize) -> WebFetcher {
    WebFetcher::with_limits(
        UrlPolicy::new().allow_ip(SERVER_IP.parse().unwrap()),
        FetchLimits {
            max_bytes,
            ..FetchLimits::default()
        },
    )
    .unwrap()
}

/// A UTF-8 page longer than the byte limit, cut inside a multi-byte character, is still decoded
/// as the UTF-8 it declares.
#[tokio::test]
async fn a_utf8_page_cut_inside_a_character_stays_utf8() {
    // "Привет " is 13 bytes; 1025 = 78 * 13 + 11, so the cut falls inside `т`.
    let text = "Привет ".repeat(200);
    let address = serve(SERVER_IP, move |_| {
        Reply::ok("text/plain; charset=utf-8", text.clone())
    })
    .await;
    let page = fetcher(1025)
        .fetch(&format!("http://{address}/ru"))
        .await
        .unwrap();
    assert!(page.truncated);
    assert!(
        page.body.starts_with("Привет Привет"),
        "charset {} ({}), note {:?}, body starts {:?}",
        page.charset,
        page.charset_source,
        page.charset_note,
        page.body.chars().take(20).collect::<String>()
    );
}

/// The same through the tool, for an HTML page with `<meta charset="utf-8">` and no header
/// charset: what the model reads.
#[tokio::test]
async fn a_truncated_utf8_html_page_reaches_the_model_as_utf8() {
    let mut html =
        String::from("<html><head><meta charset=\"utf-8\"><title>Новости</title></head><body>");
    while html.len() < 4000 {
        html.push_str("<p>Привет, мир. Ещё один абзац текста.</p>");
    }
    html.push_str("</body></html>");
    let address = serve(SERVER_IP, move |_| Reply::ok("text/html", html.clone())).await;
    // Find a limit that cuts inside a two-byte character.
    let body_bytes = {
        let mut h =
            String::from("<html><head><meta charset=\"utf-8\"><title>Новости</title></head><body>");
        while h.len() < 4000 {
            h.push_str("<p>Привет, мир. Ещё один абзац текста.</p>");
        }
        h.into_bytes()
    };
    let limit = (3000..3100)
        .find(|&n| (body_bytes[n] & 0xC0) == 0x80)
        .unwrap();
    let value = call(
        web_fetch(fetcher(limit), 100_000),
        "web_fetch",
        json!({"url": format!("http://{address}/"), "format": "text"}),
    )
    .await;
    assert_eq!(value["truncated"], true);
    let content = value["content"].as_str().unwrap();
    assert_eq!(value["title"], "Новости", "charset {}", value["charset"]);
    assert!(
        content.contains("Привет, мир."),
        "charset {}: {}",
        value["charset"],
        &content[..content.len().min(200)]
    );
}

/// A host list entry written as people write it (an internationalised name) names the host a
/// URL's punycode form names.
#[test]
fn a_denied_internationalised_host_is_refused() {
    let policy = UrlPolicy::new().deny_host("bücher.example");
    let result = policy.check_url("https://bücher.example/");
    assert!(result.is_err(), "denied host passed: {result:?}");
}

#[test]
fn an_allowed_internationalised_host_is_allowed() {
    let policy = UrlPolicy::new().allow_host("bücher.example");
    let result = policy.check_url("https://bücher.example/");
    assert!(result.is_ok(), "allowed host refused: {result:?}");
}

/// The same for an address entry written in full rather than in its compressed form.
#[test]
fn a_denied_ipv6_host_written_in_full_is_refused() {
    let policy = UrlPolicy::new()
        .allow_addresses(prism::tools::web::AddressClass::UniqueLocal)
        .deny_host("fd00:0:0:0:0:0:0:5");
    let result = policy.check_url("http://[fd00::5]/admin");
    assert!(result.is_err(), "denied host passed: {result:?}");
}

/// A host that fetches only HTML (`media_types(["text/html"])`) gets no page served without a
/// Content-Type that reads as something else.
#[tokio::test]
async fn a_page_without_content_type_obeys_the_media_type_list() {
    let address = serve(SERVER_IP, |_| Reply::Bytes {
        status: 200,
        headers: vec![],
        body: b"id,password\n1,hunter2\n".to_vec(),
    })
    .await;
    let fetcher = fetcher(1 << 20).media_types(["text/html"]);
    let result = fetcher.fetch(&format!("http://{address}/export")).await;
    match result {
        Err(error) => assert_eq!(
            error.kind(),
            prism::tools::web::WebErrorKind::UnsupportedContent
        ),
        Ok(page) => panic!(
            "fetched as {} although only text/html is allowed: {:?}",
            page.media_type, page.body
        ),
    }
}

/// A backend that returns more hits than asked (a host's own backend may).
struct Generous;

impl SearchBackend for Generous {
    fn name(&self) -> &str {
        "generous"
    }
    fn search<'a>(&'a self, _query: &'a SearchQuery) -> SearchFuture<'a> {
        Box::pin(async move {
            Ok((0..10)
                .map(|i| SearchHit {
                    title: format!("Hit {i}"),
                    url: format!("https://example.org/{i}"),
                    snippet: String::new(),
                })
                .collect())
        })
    }
}

/// `dropped` counts the hits the policy refused, not those past `count`.
#[tokio::test]
async fn dropped_counts_only_refused_hits() {
    let tool = web_search(Arc::new(Generous), UrlPolicy::new());
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool])).build();
    let call = ToolCall::new("s1", "web_search", json!({"query": "x", "count": 3}));
    let result = dispatcher
        .dispatch(call, &ToolExecutionContext::new())
        .await
        .unwrap();
    let value = result.as_value().unwrap();
    assert_eq!(value["results"].as_array().unwrap().len(), 3);
    assert_eq!(value["dropped"], 0, "{value}");
}

/// `depth` nested `<div>`s around one word.
fn nested_page(depth: usize) -> String {
    let mut html = String::from("<html><head><title>Deep</title></head><body>");
    html.push_str(&"<div>".repeat(depth));
    html.push_str("bottom");
    html.push_str(&"</div>".repeat(depth));
    html.push_str("</body></html>");
    html
}

async fn call(
    tool: prism::ToolDefinition,
    name: &str,
    args: serde_json::Value,
) -> serde_json::Value {
    let dispatcher = Dispatcher::builder(ToolRegistry::from_iter([tool])).build();
    let result = dispatcher
        .dispatch(
            ToolCall::new("c1", name, args),
            &ToolExecutionContext::new(),
        )
        .await
        .unwrap();
    match result.as_value() {
        Some(value) => value.clone(),
        None => json!({"error": format!("{:?}", result.error_info())}),
    }
}

/// 10,000 nested `<div>`s (about 110 KB, far under the byte limit) fetched as markdown: a
/// converter that recursed once per level would overflow the stack and abort the process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deeply_nested_page_is_fetched_as_markdown_without_crashing() {
    let page = nested_page(10_000);
    let address = serve(SERVER_IP, move |_| {
        Reply::ok("text/html; charset=utf-8", page.clone())
    })
    .await;
    let value = call(
        web_fetch(fetcher(FetchLimits::default().max_bytes), 10_000),
        "web_fetch",
        json!({"url": format!("http://{address}/")}),
    )
    .await;
    // Any bounded answer will do (the text, or a clear error): the process must survive.
    assert!(value.is_object(), "{value}");
}

/// 200,000 nested `<div>`s (1.2 MB): building their tree takes time growing with the square of
/// the depth, hours for this page, on a thread the host cannot stop. The fetch gives up at the
/// parse limit instead, with `not_readable`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_too_deep_to_parse_in_time_is_not_readable() {
    let page = nested_page(200_000);
    let address = serve(SERVER_IP, move |_| {
        Reply::ok("text/html; charset=utf-8", page.clone())
    })
    .await;
    let value = call(
        web_fetch(fetcher(2 << 20), 10_000),
        "web_fetch",
        json!({"url": format!("http://{address}/")}),
    )
    .await;
    let error = value["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("not_readable") && error.contains("nest too deep"),
        "{value:.300}"
    );
}

/// A text document served as UTF-16LE (declared in the header, no byte order mark) is decoded,
/// not refused as binary for its NUL bytes.
#[tokio::test]
async fn a_declared_utf16_text_is_decoded_not_refused_as_binary() {
    let body: Vec<u8> = "hello, wide world"
        .encode_utf16()
        .flat_map(|unit| unit.to_le_bytes())
        .collect();
    let address = serve(SERVER_IP, move |_| {
        Reply::ok("text/plain; charset=utf-16le", body.clone())
    })
    .await;
    let page = fetcher(1 << 20)
        .fetch(&format!("http://{address}/"))
        .await
        .unwrap();
    assert_eq!(page.body, "hello, wide world");
}

/// The same page handed to `web_extract` as HTML: the article extractor recursed once per level
/// and aborted the process; it is now no readable article, while a page nested as deep as the
/// limit is still read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deeply_nested_page_is_refused_by_web_extract_without_crashing() {
    let tool = web_extract(fetcher(FetchLimits::default().max_bytes), 10_000);
    let deep = call(
        tool.clone(),
        "web_extract",
        json!({"html": nested_page(10_000)}),
    )
    .await;
    let error = deep["error"].as_str().unwrap_or_default();
    assert!(error.contains("not_readable"), "{deep}");
    let at_limit = call(tool, "web_extract", json!({"html": nested_page(250)})).await;
    assert!(
        at_limit.get("content").is_some() || at_limit.get("error").is_some(),
        "{at_limit}"
    );
}

/// A page whose title and description run to 100,000 characters: the tools' metadata is cut like
/// their text, so the answer stays near `max_chars` instead of carrying the page whole.
#[tokio::test]
async fn a_page_with_a_huge_title_gives_bounded_metadata() {
    let long = "T".repeat(100_000);
    let page = format!(
        "<html><head><title>{long}</title><meta name='description' content='{long}'>\
         <meta name='author' content='{long}'></head><body><article><h1>Head</h1>\
         <p>{}</p></article></body></html>",
        "A sentence of the article, long enough to be read as one. ".repeat(20)
    );
    let address = serve(SERVER_IP, move |_| {
        Reply::ok("text/html; charset=utf-8", page.clone())
    })
    .await;
    let url = format!("http://{address}/");
    let fetched = call(
        web_fetch(fetcher(1 << 20), 2_000),
        "web_fetch",
        json!({"url": url}),
    )
    .await;
    assert!(
        fetched.to_string().len() < 10_000,
        "{}",
        fetched.to_string().len()
    );
    let extracted = call(
        web_extract(fetcher(1 << 20), 2_000),
        "web_extract",
        json!({"url": url}),
    )
    .await;
    assert!(extracted.get("content").is_some(), "{extracted}");
    assert!(
        extracted.to_string().len() < 10_000,
        "{}",
        extracted.to_string().len()
    );
}
