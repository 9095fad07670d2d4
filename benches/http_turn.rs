//! One provider turn over HTTP against a local server (127.0.0.1), our `HttpProvider` against a
//! bare client, and the streaming throughput of the whole path.
//!
//! The server streams the same Chat Completions answer to both: 200 text deltas, then the
//! finish reason, usage and `[DONE]` (about 33 KB). `bare_reqwest_serde_json` posts the same
//! body with reqwest, frames the events with sse-stream (as the provider does) and parses each
//! one into a `serde_json::Value`, keeping the text: the least any client does. `http_provider` is a whole
//! turn of ours: tools prepared, the request encoded, the answer decoded into a
//! `ProviderResponse` with every event reported to an observer. The target is at most 1.1x.
//! `throughput` streams 5,000 deltas (about 800 KB) through the provider and reports MB/s.
//!
//! Run with `cargo bench --bench http_turn --features openai`.

#[path = "../tests/http_support/mod.rs"]
mod http_support;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use http_support::{Reply, Server};
use prism::provider::http::HttpProvider;
use prism::run::ProviderEvent;
use prism::{Message, Provider, ProviderRequest};
use serde_json::{Value, json};
use sse_stream::SseByteStream;

/// A Chat Completions stream of `deltas` text deltas.
fn stream(deltas: usize) -> Vec<u8> {
    let mut text = String::new();
    for index in 0..deltas {
        let chunk = json!({
            "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1_727_346_172,
            "model": "gpt-4o-mini", "system_fingerprint": "fp_bench",
            "choices": [{"index": 0, "delta": {"content": format!(" word{index}")}, "logprobs": null, "finish_reason": null}]
        });
        text.push_str(&format!("data: {chunk}\n\n"));
    }
    let end = json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": deltas, "total_tokens": deltas + 12}});
    text.push_str(&format!("data: {end}\n\ndata: [DONE]\n\n"));
    text.into_bytes()
}

async fn provider_turn(provider: &HttpProvider, transcript: &[Message]) -> usize {
    let metadata = http_support::turn_metadata();
    let observer = |event: &ProviderEvent| {
        black_box(event);
    };
    let request = ProviderRequest::new(transcript, &[], &metadata).with_observer(Some(&observer));
    let response = provider.complete(request).await.expect("the turn succeeds");
    response.text.len()
}

async fn bare_turn(client: &reqwest::Client, url: &str, body: &[u8]) -> usize {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await
        .expect("the server answers");
    let mut events = SseByteStream::new(response.bytes_stream());
    let mut text = String::new();
    while let Some(event) = events.next().await {
        let event = event.expect("a well-formed stream");
        let Some(data) = event.data else { continue };
        if data == "[DONE]" {
            break;
        }
        let value: Value = serde_json::from_str(&data).expect("JSON events");
        if let Some(delta) = value["choices"][0]["delta"]["content"].as_str() {
            text.push_str(delta);
        }
    }
    text.len()
}

fn turns(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let transcript = [Message::user("Count to two hundred.")];
    let (server, small, large) = runtime.block_on(async {
        let small = stream(200);
        let large = stream(5_000);
        let (s, l) = (small.clone(), large.clone());
        let server = Server::start(move |request, _| {
            if request.path.starts_with("/large/") {
                Reply::sse(l.clone())
            } else {
                Reply::sse(s.clone())
            }
        })
        .await;
        (server, small, large)
    });
    let provider = HttpProvider::openai_compatible(format!("{}/v1", server.base), "gpt-4o-mini")
        .build()
        .unwrap();
    // The body our provider sends, so the bare client sends the same bytes.
    let body = serde_json::to_vec(&json!({
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "Count to two hundred."}],
        "stream": true,
        "stream_options": {"include_usage": true}
    }))
    .unwrap();
    // reqwest is built without a crypto provider of its own (the HTTP provider hands it ring per
    // client): the bare client gets ring as the process default.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .unwrap();
    let url = format!("{}/v1/chat/completions", server.base);

    let mut group = c.benchmark_group("http_turn");
    group.sample_size(30);
    group.throughput(Throughput::Bytes(small.len() as u64));
    group.bench_function("bare_reqwest_serde_json", |b| {
        b.to_async(&runtime)
            .iter(|| bare_turn(&client, &url, &body));
    });
    group.bench_function("http_provider", |b| {
        b.to_async(&runtime)
            .iter(|| provider_turn(&provider, &transcript));
    });
    group.finish();

    let large_provider =
        HttpProvider::openai_compatible(format!("{}/large/v1", server.base), "gpt-4o-mini")
            .build()
            .unwrap();
    let mut group = c.benchmark_group("http_stream");
    group.sample_size(20);
    group.throughput(Throughput::Bytes(large.len() as u64));
    group.bench_function("throughput", |b| {
        b.to_async(&runtime)
            .iter(|| provider_turn(&large_provider, &transcript));
    });
    group.finish();
}

criterion_group!(benches, turns);
criterion_main!(benches);
