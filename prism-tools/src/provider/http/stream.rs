//! Reading an answer's body: server-sent events into a [`StreamDecoder`], or a whole body into
//! [`WireFormat::decode_response`], under the gap timeout and the size bound.
//!
//! Events are framed by `sse-stream` (which reads each piece once: eventsource-stream copies the
//! rest of its buffer after every line, which made a large piece cost quadratic time); each one
//! is decoded as it arrives and every
//! [`ProviderEvent`] it completes goes to the request's observer at once. A connection that drops
//! mid-stream ends the decoder early, which answers with a
//! [`TruncatedStream`](ProviderErrorKind::TruncatedStream) error holding what was complete.
//! Once the decoder has seen the end marker, the reader waits at most [`AFTER_END`] for the
//! connection to close: a server that keeps it open still answers at once, and a second
//! response sent right behind the first still reaches the decoder, which refuses it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use sse_stream::SseByteStream;
use tokio::time::{Instant, timeout, timeout_at};

use crate::provider::wire::{SseEvent, StreamDecoder, ToolTable, WireFormat};
use crate::run::{ProviderError, ProviderErrorKind, ProviderRequest, ProviderResponse};

/// Why a body could not be read to its end.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// More bytes than the bound.
    TooLarge(u64),
    /// The connection failed.
    Http(reqwest::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooLarge(limit) => write!(f, "the answer is larger than {limit} bytes"),
            Self::Http(error) => write!(f, "the connection failed: {}", error_chain(error)),
        }
    }
}

impl std::error::Error for ReadError {}

/// The body's pieces, counted into `received` and cut off past `limit` bytes.
pub(crate) fn bounded_body<'r>(
    response: reqwest::Response,
    limit: u64,
    received: &'r AtomicU64,
) -> impl Stream<Item = Result<Bytes, ReadError>> + Send + 'r {
    response.bytes_stream().map(move |piece| {
        let piece = piece.map_err(ReadError::Http)?;
        let total = received.fetch_add(piece.len() as u64, Ordering::Relaxed) + piece.len() as u64;
        if total > limit {
            return Err(ReadError::TooLarge(limit));
        }
        Ok(piece)
    })
}

/// How a stream ended when it could not be decoded to its end.
pub(crate) fn transport(message: impl Into<String>) -> ProviderError {
    ProviderError::with_kind(ProviderErrorKind::Transport, message)
}

/// The first-byte limit of one attempt: it runs from sending the request to the answer's head
/// and on to its first event (or first piece of a whole body), one wait rather than one for
/// each.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FirstByte {
    /// The limit, as configured, for messages.
    pub(crate) limit: Duration,
    /// When it runs out.
    pub(crate) deadline: Instant,
}

impl FirstByte {
    /// The limit, starting now.
    pub(crate) fn starting_now(limit: Duration) -> Self {
        Self {
            limit,
            deadline: after(limit),
        }
    }
}

/// The instant `wait` from now, or one too far off to matter when `wait` cannot be added.
fn after(wait: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 60 * 60))
}

/// How long the reader waits, after the end marker, for the server to close the stream.
const AFTER_END: Duration = Duration::from_secs(1);

/// Reads a streamed answer: each event decoded and observed as it arrives.
pub(crate) async fn read_stream(
    body: impl Stream<Item = Result<Bytes, ReadError>> + Send,
    mut decoder: Box<dyn StreamDecoder>,
    request: &ProviderRequest<'_>,
    first_byte: FirstByte,
    gap: Duration,
) -> Result<ProviderResponse, ProviderError> {
    let events = SseByteStream::new(body);
    futures_util::pin_mut!(events);
    let mut out = Vec::new();
    let mut wait = first_byte.limit;
    // A deadline, not a timeout per read: a block that is no event (only an id or a retry
    // time) must not restart the wait for the next event.
    let mut deadline = first_byte.deadline;
    let mut done = false;
    loop {
        let next = match timeout_at(deadline, events.next()).await {
            Ok(next) => next,
            // The answer is whole; the server only kept the connection open.
            Err(_) if done => break,
            Err(_) => {
                return Err(transport(format!(
                    "no event from the provider within {wait:?}"
                )));
            }
        };
        let event = match next {
            None => break,
            Some(Ok(event)) => event,
            Some(Err(sse_stream::Error::Body(error))) => {
                if let Some(ReadError::TooLarge(limit)) = error.downcast_ref::<ReadError>() {
                    return Err(too_large(*limit));
                }
                // A dropped connection: the decoder says what was complete (a truncated
                // stream), or that the answer was whole after all.
                break;
            }
            Some(Err(error)) => {
                return Err(ProviderError::with_kind(
                    ProviderErrorKind::InvalidResponse,
                    format!("the stream cannot be read as server-sent events: {error}"),
                ));
            }
        };
        // A block without data (only an id or a retry time) is not an event.
        let Some(data) = &event.data else { continue };
        if !done {
            wait = gap;
            deadline = after(wait);
        }
        let name = event
            .event
            .as_deref()
            .filter(|name| !name.is_empty() && *name != "message");
        let fed = decoder.feed(SseEvent { event: name, data }, &mut out);
        for event in out.drain(..) {
            request.observe(&event);
        }
        fed?;
        if !done && decoder.is_done() {
            done = true;
            deadline = after(AFTER_END.min(gap));
        }
    }
    let end = decoder.finish(&mut out);
    for event in out.drain(..) {
        request.observe(&event);
    }
    end
}

/// A failed answer's body, as far as `limit` bytes: a longer one is cut there (its start says
/// what went wrong), and one that breaks off or stalls for `gap` is kept as far as it came.
pub(crate) async fn read_error_body(
    response: reqwest::Response,
    limit: u64,
    gap: Duration,
) -> Vec<u8> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let body = response.bytes_stream();
    futures_util::pin_mut!(body);
    let mut bytes = Vec::new();
    while bytes.len() < limit {
        let Ok(Some(Ok(piece))) = timeout(gap, body.next()).await else {
            break;
        };
        let room = limit - bytes.len();
        bytes.extend_from_slice(&piece[..piece.len().min(room)]);
    }
    bytes
}

/// Reads a whole answer (no stream) and decodes it; its events are reported when it is done.
pub(crate) async fn read_whole(
    body: impl Stream<Item = Result<Bytes, ReadError>> + Send,
    format: &dyn WireFormat,
    tools: &ToolTable,
    request: &ProviderRequest<'_>,
    first_byte: FirstByte,
    gap: Duration,
) -> Result<ProviderResponse, ProviderError> {
    let bytes = read_all(body, first_byte, gap).await?;
    let response = format.decode_response(&bytes, tools)?;
    for event in response.to_events() {
        request.observe(&event);
    }
    Ok(response)
}

/// The whole body, under the timeouts and the bound.
pub(crate) async fn read_all(
    body: impl Stream<Item = Result<Bytes, ReadError>> + Send,
    first_byte: FirstByte,
    gap: Duration,
) -> Result<Vec<u8>, ProviderError> {
    futures_util::pin_mut!(body);
    let mut bytes = Vec::new();
    let mut wait = first_byte.limit;
    let mut deadline = first_byte.deadline;
    loop {
        match timeout_at(deadline, body.next()).await {
            Err(_) => {
                return Err(transport(format!("the provider sent nothing for {wait:?}")));
            }
            Ok(None) => return Ok(bytes),
            Ok(Some(Ok(piece))) => bytes.extend_from_slice(&piece),
            Ok(Some(Err(ReadError::TooLarge(limit)))) => return Err(too_large(limit)),
            Ok(Some(Err(error))) => return Err(transport(error.to_string())),
        }
        wait = gap;
        deadline = after(wait);
    }
}

fn too_large(limit: u64) -> ProviderError {
    ProviderError::with_kind(
        ProviderErrorKind::InvalidResponse,
        format!("the answer is larger than {limit} bytes; the rest was not read"),
    )
}

/// An error and its causes, joined: reqwest's own message alone says little ("error sending
/// request").
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
