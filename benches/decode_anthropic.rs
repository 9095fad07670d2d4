//! Criterion benchmark: decoding the largest recorded Anthropic tool-call stream (the first
//! response of vercel-ai's programmatic tool calling recording: a server tool's code streamed as
//! `input_json_delta`s, then a call of ours) with the `anthropic` stream decoder, against
//! `serde_json` parsing the same events' data into `Value`s. Target: at most 1.5x.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use prism::provider::anthropic::Anthropic;
use prism::provider::wire::{SseEvent, ToolTable, WireFormat};
use serde_json::Value;

const RECORDING: &str = "vercel-ai/packages/anthropic/src/__fixtures__/anthropic-programmatic-tool-calling.1.chunks.txt";

/// The events of the recording's first response, or `None` (said aloud) when the data is absent.
fn events() -> Option<Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/llm-payloads")
        .join(RECORDING);
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("SKIPPED: no recording at {}", path.display());
        return None;
    };
    let mut events = Vec::new();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        events.push(line.to_owned());
        if line.contains(r#""type":"message_stop""#) {
            break;
        }
    }
    Some(events)
}

fn decode_stream(c: &mut Criterion) {
    let Some(events) = events() else { return };
    let bytes: usize = events.iter().map(String::len).sum();
    let tools = Arc::new(ToolTable::default());
    let decode = || {
        let mut decoder = Anthropic.stream_decoder(Arc::clone(&tools));
        let mut out = Vec::with_capacity(events.len());
        for data in &events {
            decoder
                .feed(SseEvent::data(black_box(data)), &mut out)
                .unwrap();
        }
        (decoder.finish(&mut out).unwrap(), out)
    };
    let (response, _) = decode();
    assert_eq!(response.tool_calls.len(), 1, "the recording's call of ours");
    eprintln!("{} events, {bytes} bytes of data", events.len());

    let mut group = c.benchmark_group("decode_anthropic");
    group.throughput(criterion::Throughput::Bytes(bytes as u64));
    group.bench_function("stream_decoder", |b| b.iter(decode));
    group.bench_function("serde_json_values", |b| {
        b.iter(|| {
            events
                .iter()
                .map(|data| serde_json::from_str::<Value>(black_box(data)).unwrap())
                .collect::<Vec<_>>()
        })
    });
    group.finish();
}

criterion_group!(benches, decode_stream);
criterion_main!(benches);
