//! Reading a response body under a byte limit that holds for the bytes on the wire and for the
//! bytes after gzip or deflate decoding, so a compression bomb stops at the limit.
//!
//! A gzip body may hold several members one after another (RFC 1952; concatenated gzip files
//! are one), and all of them are decoded.

use std::io::{self, Write};
use std::time::Duration;

use flate2::write::{MultiGzDecoder, ZlibDecoder};

use super::error::{WebError, WebErrorKind};

/// A body cut at the byte limit.
pub(crate) struct BoundedBody {
    /// Decoded bytes, at most the limit.
    pub bytes: Vec<u8>,
    /// The body went on past the limit (on the wire or decoded).
    pub truncated: bool,
}

/// A sink that takes bytes up to its limit and then fails, which stops a decoder mid-chunk
/// instead of letting it inflate the rest of a bomb only to drop it.
struct LimitedSink {
    bytes: Vec<u8>,
    limit: usize,
    full: bool,
}

impl Write for LimitedSink {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let room = self.limit - self.bytes.len();
        if data.len() > room {
            self.bytes.extend_from_slice(&data[..room]);
            self.full = true;
            return Err(io::Error::other("byte limit reached"));
        }
        self.bytes.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Decoder {
    Identity(LimitedSink),
    Gzip(MultiGzDecoder<LimitedSink>),
    Deflate(ZlibDecoder<LimitedSink>),
}

impl Decoder {
    fn for_coding(coding: Option<&str>, sink: LimitedSink) -> Result<Self, WebError> {
        match coding.map(|c| c.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("identity") => Ok(Decoder::Identity(sink)),
            Some("gzip") | Some("x-gzip") => Ok(Decoder::Gzip(MultiGzDecoder::new(sink))),
            Some("deflate") => Ok(Decoder::Deflate(ZlibDecoder::new(sink))),
            Some(other) => Err(WebError::new(
                WebErrorKind::Decode,
                format!("content coding `{other}` is not supported (gzip, deflate, identity)"),
            )),
        }
    }

    fn write(&mut self, chunk: &[u8]) -> io::Result<()> {
        match self {
            Decoder::Identity(sink) => sink.write_all(chunk),
            Decoder::Gzip(decoder) => decoder.write_all(chunk),
            Decoder::Deflate(decoder) => decoder.write_all(chunk),
        }
    }

    fn sink(&self) -> &LimitedSink {
        match self {
            Decoder::Identity(sink) => sink,
            Decoder::Gzip(decoder) => decoder.get_ref(),
            Decoder::Deflate(decoder) => decoder.get_ref(),
        }
    }

    fn sink_mut(&mut self) -> &mut LimitedSink {
        match self {
            Decoder::Identity(sink) => sink,
            Decoder::Gzip(decoder) => decoder.get_mut(),
            Decoder::Deflate(decoder) => decoder.get_mut(),
        }
    }

    fn finish(self) -> io::Result<LimitedSink> {
        match self {
            Decoder::Identity(sink) => Ok(sink),
            Decoder::Gzip(decoder) => decoder.finish(),
            Decoder::Deflate(decoder) => decoder.finish(),
        }
    }
}

/// Reads `response` until its end, `max_bytes` (wire or decoded), or an error; waits at most
/// `idle` for each chunk.
pub(crate) async fn read_bounded(
    mut response: reqwest::Response,
    max_bytes: usize,
    idle: Duration,
) -> Result<BoundedBody, WebError> {
    let coding = response
        .headers()
        .get(reqwest::header::CONTENT_ENCODING)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let expected = response.content_length().unwrap_or(0) as usize;
    let sink = LimitedSink {
        bytes: Vec::with_capacity(expected.min(max_bytes)),
        limit: max_bytes,
        full: false,
    };
    let mut decoder = Decoder::for_coding(coding.as_deref(), sink)?;
    let mut wire = 0usize;
    let mut truncated = false;
    loop {
        let chunk = match tokio::time::timeout(idle, response.chunk()).await {
            Err(_) => {
                return Err(WebError::timeout(
                    "waiting for the next chunk of the body",
                    idle,
                ));
            }
            Ok(Err(error)) => {
                return Err(WebError::new(
                    WebErrorKind::Network,
                    format!("the body broke off: {error}"),
                ));
            }
            Ok(Ok(None)) => break,
            Ok(Ok(Some(chunk))) => chunk,
        };
        let room = max_bytes.saturating_sub(wire);
        let take = &chunk[..chunk.len().min(room)];
        wire += take.len();
        if let Err(error) = decoder.write(take) {
            if decoder.sink().full {
                truncated = true;
                break;
            }
            return Err(WebError::new(
                WebErrorKind::Decode,
                format!("the compressed body is corrupt: {error}"),
            ));
        }
        if take.len() < chunk.len() {
            truncated = true;
            break;
        }
    }
    if truncated || decoder.sink().full {
        // Cut at the limit: the decoder would only complain that the stream's end is missing.
        return Ok(BoundedBody {
            bytes: std::mem::take(&mut decoder.sink_mut().bytes),
            truncated: true,
        });
    }
    if wire == 0 {
        // An empty body marked compressed (servers send one for an empty answer) is empty, not
        // a stream cut before its header.
        return Ok(BoundedBody {
            bytes: Vec::new(),
            truncated: false,
        });
    }
    let sink = decoder.finish().map_err(|error| {
        WebError::new(
            WebErrorKind::Decode,
            format!("the compressed body is corrupt or cut short: {error}"),
        )
    })?;
    Ok(BoundedBody {
        bytes: sink.bytes,
        truncated: false,
    })
}
