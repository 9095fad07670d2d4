//! Reading a response body under a byte limit that holds for the bytes on the wire and for the
//! bytes after gzip or deflate decoding, so a compression bomb stops at the limit.
//!
//! A gzip body may hold several members one after another (RFC 1952; concatenated gzip files
//! are one), and all of them are decoded. Bytes after a complete member that do not make a
//! valid member (padding, a stray newline, a member cut short) are ignored, as browsers ignore
//! them; only a corrupt first member makes the body corrupt.

use std::io::{self, Write};
use std::time::Duration;

use flate2::write::{GzDecoder, ZlibDecoder};

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

impl LimitedSink {
    /// Moves the bytes out, leaving a sink that takes nothing (for a decoder about to be dropped).
    fn take(&mut self) -> LimitedSink {
        std::mem::replace(
            self,
            LimitedSink {
                bytes: Vec::new(),
                limit: 0,
                full: false,
            },
        )
    }
}

/// Gzip members one after another, each decoded by its own `GzDecoder` so the end of a
/// complete member is known and what follows it can be judged on its own.
struct GzipMembers {
    member: GzDecoder<LimitedSink>,
    /// Compressed bytes the current member has taken.
    fed: usize,
    /// Members decoded whole and checked against their CRC.
    complete: usize,
    /// Decoded length at the end of the last complete member.
    kept: usize,
    /// What followed a complete member was not a valid member: the rest of the body is ignored.
    ignoring: bool,
}

impl GzipMembers {
    fn new(sink: LimitedSink) -> Self {
        GzipMembers {
            member: GzDecoder::new(sink),
            fed: 0,
            complete: 0,
            kept: 0,
            ignoring: false,
        }
    }

    fn write(&mut self, mut chunk: &[u8]) -> io::Result<()> {
        while !chunk.is_empty() && !self.ignoring {
            match self.member.write(chunk) {
                // The member ended (trailer included) and takes no more: the next one starts.
                Ok(0) => self.next_member()?,
                Ok(taken) => {
                    self.fed += taken;
                    chunk = &chunk[taken..];
                }
                Err(error) => self.give_up(error)?,
            }
        }
        Ok(())
    }

    fn next_member(&mut self) -> io::Result<()> {
        if let Err(error) = self.member.try_finish() {
            return self.give_up(error);
        }
        self.complete += 1;
        let sink = self.member.get_mut().take();
        self.kept = sink.bytes.len();
        self.member = GzDecoder::new(sink);
        self.fed = 0;
        Ok(())
    }

    /// A failure at the byte limit or in the first member is the body's; one after a complete
    /// member only ends the body there, dropping what the broken member decoded.
    fn give_up(&mut self, error: io::Error) -> io::Result<()> {
        if self.member.get_ref().full || self.complete == 0 {
            return Err(error);
        }
        let mut sink = self.member.get_mut().take();
        sink.bytes.truncate(self.kept);
        self.member = GzDecoder::new(sink);
        self.ignoring = true;
        Ok(())
    }

    fn finish(mut self) -> io::Result<LimitedSink> {
        if !self.ignoring && (self.fed > 0 || self.complete == 0) {
            self.member
                .try_finish()
                .or_else(|error| self.give_up(error))?;
        }
        Ok(self.member.get_mut().take())
    }
}

enum Decoder {
    Identity(LimitedSink),
    Gzip(GzipMembers),
    Deflate(ZlibDecoder<LimitedSink>),
}

impl Decoder {
    fn for_coding(coding: Option<&str>, sink: LimitedSink) -> Result<Self, WebError> {
        match coding.map(|c| c.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("identity") => Ok(Decoder::Identity(sink)),
            Some("gzip") | Some("x-gzip") => Ok(Decoder::Gzip(GzipMembers::new(sink))),
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
            Decoder::Gzip(members) => members.write(chunk),
            Decoder::Deflate(decoder) => decoder.write_all(chunk),
        }
    }

    fn sink(&self) -> &LimitedSink {
        match self {
            Decoder::Identity(sink) => sink,
            Decoder::Gzip(members) => members.member.get_ref(),
            Decoder::Deflate(decoder) => decoder.get_ref(),
        }
    }

    fn sink_mut(&mut self) -> &mut LimitedSink {
        match self {
            Decoder::Identity(sink) => sink,
            Decoder::Gzip(members) => members.member.get_mut(),
            Decoder::Deflate(decoder) => decoder.get_mut(),
        }
    }

    fn finish(self) -> io::Result<LimitedSink> {
        match self {
            Decoder::Identity(sink) => Ok(sink),
            Decoder::Gzip(members) => members.finish(),
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
