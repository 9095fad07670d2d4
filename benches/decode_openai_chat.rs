//! Decoding a recorded Chat Completions stream against `serde_json` parsing the same events.
//!
//! `tool_calls`: openai-python's recording of two parallel calls streamed in argument
//! fragments (the largest tool-call stream in `../shared/data/llm-payloads/openai-python`),
//! `text`: the largest stream of all (181 text deltas). For each, `decoder` runs a fresh
//! `OpenAiChat` stream decoder over every event and finishes it; `serde_json_value` parses each
//! event's data into a `serde_json::Value`. The target is a decoder at most 1.5x the parse.
//! Events are framed once, outside the measurement. Without the data the bench prints
//! `SKIPPED: …` and measures nothing.
//!
//! Run with `cargo bench --bench decode_openai_chat`.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use prism::provider::openai_chat::OpenAiChat;
use prism::provider::wire::{PreparedTool, SseEvent, ToolTable, WireFormat};
use serde_json::{Value, json};

const RECORDINGS: [(&str, &str); 2] = [
    (
        "tool_calls",
        "f82268f2fefd5cfbc7eeb59c297688be2f6ca0849a6e4f17851b517310841d9b.bin",
    ),
    (
        "text",
        "d615580118391ee13492193e3a8bb74642d23ac1ca13fe37cb6e889b66f759f6.bin",
    ),
];

/// The `data:` payloads of a recording whose events are single `data:` lines, as OpenAI sends.
fn events(text: &str) -> Vec<String> {
    text.split("\n\n")
        .filter_map(|event| event.trim().strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

fn tools() -> Arc<ToolTable> {
    let object = json!({"type": "object"});
    Arc::new(
        ToolTable::new(vec![
            PreparedTool::new("GetWeatherArgs", object.clone()),
            PreparedTool::new("stocks.price", object).with_wire_name("get_stock_price"),
        ])
        .expect("distinct names"),
    )
}

fn decode(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/llm-payloads/openai-python/inline-snapshot-external");
    if !dir.is_dir() {
        eprintln!("SKIPPED: no recorded streams at {}", dir.display());
        return;
    }
    let tools = tools();
    for (label, file) in RECORDINGS {
        let text = std::fs::read_to_string(dir.join(file)).expect("a readable recording");
        let events = events(&text);
        let mut group = c.benchmark_group(format!("decode_openai_chat/{label}"));
        group.bench_function("decoder", |b| {
            b.iter(|| {
                let mut decoder = OpenAiChat::new().stream_decoder(Arc::clone(&tools));
                let mut out = Vec::with_capacity(64);
                for data in &events {
                    decoder
                        .feed(SseEvent::data(data), &mut out)
                        .expect("a well-formed event");
                }
                black_box(decoder.finish(&mut out).expect("a whole stream"));
                black_box(out);
            })
        });
        group.bench_function("serde_json_value", |b| {
            b.iter(|| {
                for data in &events {
                    if data != "[DONE]" {
                        black_box(serde_json::from_str::<Value>(data).expect("JSON"));
                    }
                }
            })
        });
        group.finish();
    }
}

criterion_group!(benches, decode);
criterion_main!(benches);
