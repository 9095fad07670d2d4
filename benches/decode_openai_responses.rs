//! Decoding a recorded OpenAI Responses stream against `serde_json` parsing the same events into
//! `Value`s (target: at most 1.5x). The stream is the largest recorded one with tool calls: four
//! turns of one run, with encrypted reasoning, streamed call arguments and text, each turn
//! decoded by a fresh decoder.
//!
//! The recording lives outside the repository (`../shared/data` from the workspace root); when it
//! is missing the bench says so and measures nothing.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use prism::provider::openai_responses::OpenAiResponses;
use prism::provider::wire::{PreparedTool, SseEvent, ToolTable, WireFormat};
use serde_json::{Value, json};

const RECORDING: &str = "../shared/data/llm-payloads/vercel-ai/packages/openai/src/responses/__fixtures__/openai-reasoning-encrypted-content.1.chunks.txt";

fn decode(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RECORDING);
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("SKIPPED: no recording at {}", path.display());
        return;
    };
    let events: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let tools = Arc::new(
        ToolTable::new(vec![PreparedTool::new(
            "calculator",
            json!({"type": "object"}),
        )])
        .unwrap(),
    );
    let format = OpenAiResponses;
    let decode_all = || {
        let mut responses = Vec::with_capacity(4);
        let mut out = Vec::with_capacity(64);
        let mut decoder = format.stream_decoder(Arc::clone(&tools));
        for (index, data) in events.iter().enumerate() {
            // A new turn begins at each `response.created`.
            if index > 0 && data.starts_with(r#"{"type":"response.created""#) {
                let done =
                    std::mem::replace(&mut decoder, format.stream_decoder(Arc::clone(&tools)));
                responses.push(done.finish(&mut out).expect("a complete turn"));
            }
            decoder
                .feed(SseEvent::data(data), &mut out)
                .expect("a readable event");
        }
        responses.push(decoder.finish(&mut out).expect("a complete turn"));
        (responses, out)
    };
    let (responses, _) = decode_all();
    assert_eq!(responses.len(), 4);
    assert_eq!(
        responses.iter().map(|r| r.tool_calls.len()).sum::<usize>(),
        3
    );

    let mut group = c.benchmark_group("decode_openai_responses");
    group.bench_function("wire_format_decoder", |b| {
        b.iter(|| black_box(decode_all()))
    });
    group.bench_function("serde_json_values", |b| {
        b.iter(|| {
            let values: Vec<Value> = events
                .iter()
                .map(|data| serde_json::from_str(black_box(data)).unwrap())
                .collect();
            black_box(values)
        })
    });
    group.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
