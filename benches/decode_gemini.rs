//! Decoding a recorded Gemini stream against parsing the same events into `serde_json::Value`s.
//!
//! The stream is the largest recorded tool-call stream of the Gemini format (Vertex, 75 chunks
//! of streamed `partialArgs` for one nested call). `decode_gemini/wire_format` runs the format's
//! stream decoder over every event and finishes it; `decode_gemini/serde_value` only parses each
//! event's data into a `Value`. Target: the first at most 1.5x the second.
//!
//! Run with `cargo bench --bench decode_gemini`. Without `../shared/data` it says so and skips.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::Criterion;
use prism::provider::gemini::Gemini;
use prism::provider::wire::{SseEvent, ToolTable, WireFormat};
use serde_json::Value;

const STREAM: &str = "../shared/data/llm-payloads/vercel-ai/packages/google/src/__fixtures__/google-vertex-stream-tool-call-arguments-nested.1.chunks.txt";

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(STREAM);
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("SKIPPED: no recorded stream at {}", path.display());
        return;
    };
    let events: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let tools = Arc::new(ToolTable::default());
    let gemini = Gemini::new();
    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("decode_gemini");
    group.bench_function("wire_format", |b| {
        b.iter(|| {
            let mut decoder = gemini.stream_decoder(Arc::clone(&tools));
            let mut out = Vec::new();
            for data in &events {
                decoder.feed(SseEvent::data(data), &mut out).unwrap();
            }
            black_box(decoder.finish(&mut out).unwrap());
            black_box(out);
        })
    });
    group.bench_function("serde_value", |b| {
        b.iter(|| {
            for data in &events {
                black_box(serde_json::from_str::<Value>(data).unwrap());
            }
        })
    });
    group.finish();
    criterion.final_summary();
}
