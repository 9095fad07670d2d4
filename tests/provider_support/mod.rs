//! Helpers shared by the wire-format tests: where the recorded payloads are (a loud skip when
//! they are missing, a failure under `PRISM_REQUIRE_DATA=1`), framing recorded bytes into
//! server-sent events with a real SSE parser (optionally cut at given byte positions), and
//! running a stream decoder over them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::StreamExt;
use prism::provider::wire::{SseEvent, ToolTable, WireFormat};
use prism::run::ProviderEvent;
use prism::{ProviderError, ProviderResponse};

/// `../shared/data/llm-payloads`, or `None` after printing why the test skips. Under
/// `PRISM_REQUIRE_DATA=1` a missing folder fails the test instead.
pub fn payloads() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/llm-payloads");
    if dir.is_dir() {
        return Some(dir);
    }
    let why = format!("no recorded provider payloads at {}", dir.display());
    if std::env::var("PRISM_REQUIRE_DATA").as_deref() == Ok("1") {
        panic!("{why}, and PRISM_REQUIRE_DATA=1");
    }
    eprintln!("SKIPPED: {why}");
    None
}

/// One framed event, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sse {
    pub event: Option<String>,
    pub data: String,
}

impl Sse {
    pub fn as_event(&self) -> SseEvent<'_> {
        SseEvent {
            event: self.event.as_deref(),
            data: &self.data,
        }
    }
}

/// Frames raw SSE bytes (as sent over HTTP) into events, feeding the parser the pieces between
/// `cuts` (sorted byte positions; empty: one piece).
pub fn frame_sse(bytes: &[u8], cuts: &[usize]) -> Vec<Sse> {
    let mut pieces = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for &cut in cuts {
        let cut = cut.clamp(start, bytes.len());
        pieces.push(Ok::<_, std::convert::Infallible>(
            bytes[start..cut].to_vec(),
        ));
        start = cut;
    }
    pieces.push(Ok(bytes[start..].to_vec()));
    let stream = eventsource_stream::Eventsource::eventsource(futures_util::stream::iter(pieces));
    let events: Vec<_> = futures_executor_block_on(stream.collect::<Vec<_>>());
    events
        .into_iter()
        .map(|event| {
            let event = event.expect("the recording frames as SSE");
            Sse {
                event: (!event.event.is_empty() && event.event != "message").then_some(event.event),
                data: event.data,
            }
        })
        .collect()
}

/// A recording with one JSON event per line (the `*.chunks.txt` files), as unnamed events.
pub fn json_lines(text: &str) -> Vec<Sse> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| Sse {
            event: None,
            data: line.to_owned(),
        })
        .collect()
}

/// Runs a fresh decoder of `format` over `events`: what it emitted, and how the stream ended.
pub fn decode(
    format: &dyn WireFormat,
    tools: &Arc<ToolTable>,
    events: &[Sse],
) -> (Vec<ProviderEvent>, Result<ProviderResponse, ProviderError>) {
    let mut decoder = format.stream_decoder(Arc::clone(tools));
    let mut out = Vec::new();
    for event in events {
        if let Err(error) = decoder.feed(event.as_event(), &mut out) {
            return (out, Err(error));
        }
    }
    let end = decoder.finish(&mut out);
    (out, end)
}

/// Reads a file of the payloads folder.
pub fn read(dir: &Path, relative: &str) -> Vec<u8> {
    let path = dir.join(relative);
    std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn futures_executor_block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime")
        .block_on(future)
}
