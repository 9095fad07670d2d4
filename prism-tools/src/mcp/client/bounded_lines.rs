//! [`BoundedLines`]: a child server's standard output, ended at the first line over the bound
//! on one message, and [`LineOverflow`], which tells the session's calls why it ended.
//!
//! Left to itself, the SDK drops an over-long line and reads on, so the request it answered
//! waits out its whole timeout. Which request that is cannot be told without reading the whole
//! line (a server may write the `id` after the result), and a guess could fail the wrong call
//! and leave the right one waiting: so the stream ends there instead. The SDK then fails every
//! waiting call at once, as for a server that died, and each one's error says why; a call
//! beside the over-long one loses an answer that may still have come, but is told so at once
//! rather than left to wait. The next call opens a new session (see `sessions`).
//! Nothing past the bound is kept.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, ready};

use rmcp::service::ServiceError;
use tokio::io::{AsyncRead, ReadBuf};

/// Whether a session ended at a message over the bound, and that bound; one per session,
/// shared by its reader and its calls.
#[derive(Clone, Debug, Default)]
pub(crate) struct LineOverflow(Arc<OnceLock<usize>>);

impl LineOverflow {
    /// Why the session ended, when it ended at a message over the bound: e.g. "the server
    /// sent a message over 1114112 bytes, the bound for one message, so the session was
    /// closed".
    pub(crate) fn cause(&self) -> Option<String> {
        self.0.get().map(|bound| {
            format!(
                "the server sent a message over {bound} bytes, the bound for one message, so \
                 the session was closed"
            )
        })
    }

    /// Why a request failed with `error`, when the session ended at a message over the bound:
    /// the SDK itself only sees the stream end (closed, or a write that found it closed).
    pub(crate) fn cause_of(&self, error: &ServiceError) -> Option<String> {
        match error {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => self.cause(),
            _ => None,
        }
    }

    fn error(bound: usize) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a message over {bound} bytes: the stream is ended there"),
        )
    }
}

/// `inner` (a server's standard output, one JSON-RPC message a line) until a line reaches
/// `bound` bytes without its newline: the read that finds it gives none of its bytes and fails,
/// as does every read after it, and the overflow is recorded first.
pub(crate) struct BoundedLines<R> {
    inner: R,
    /// The longest line, its newline included: the SDK's own line bound.
    bound: usize,
    /// Bytes read since the last newline.
    run: usize,
    overflow: LineOverflow,
}

impl<R> BoundedLines<R> {
    pub(crate) fn new(inner: R, bound: usize, overflow: LineOverflow) -> Self {
        Self {
            inner,
            bound,
            run: 0,
            overflow,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.overflow.0.get().is_some() {
            return Poll::Ready(Err(LineOverflow::error(this.bound)));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let mut lines = buf.filled()[before..].split(|byte| *byte == b'\n');
        // The first piece goes on the line already begun; each later one starts a line.
        let mut run = this.run + lines.next().map_or(0, <[u8]>::len);
        let mut longest = run;
        for line in lines {
            run = line.len();
            longest = longest.max(run);
        }
        // A line of `bound` bytes before its newline is over the bound once the newline counts.
        if longest >= this.bound {
            buf.set_filled(before);
            let _ = this.overflow.0.set(this.bound);
            return Poll::Ready(Err(LineOverflow::error(this.bound)));
        }
        this.run = run;
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// What reading `input` 4 bytes at a time (so lines cross reads) gives under `bound`: the
    /// bytes, how it ended, and the overflow.
    async fn read_all(input: &[u8], bound: usize) -> (Vec<u8>, io::Result<()>, LineOverflow) {
        let overflow = LineOverflow::default();
        let mut reader = BoundedLines::new(input, bound, overflow.clone());
        let mut read = Vec::new();
        let mut chunk = [0_u8; 4];
        let end = loop {
            match reader.read(&mut chunk).await {
                Ok(0) => break Ok(()),
                Ok(n) => read.extend_from_slice(&chunk[..n]),
                Err(error) => break Err(error),
            }
        };
        (read, end, overflow)
    }

    #[tokio::test]
    async fn lines_within_the_bound_pass_whole() {
        // 9 bytes with the newline, under a bound of 9; a last line without one.
        let input = b"12345678\n\n1234567\n12345678";
        let (read, end, overflow) = read_all(input, 9).await;
        assert_eq!(read, input);
        assert!(end.is_ok());
        assert_eq!(overflow.cause(), None);
    }

    #[tokio::test]
    async fn a_line_over_the_bound_ends_the_stream_before_its_last_bytes() {
        let input = b"first\n123456789\nafter\n";
        let (read, end, overflow) = read_all(input, 9).await;
        // The read that takes the line to 9 bytes before its newline gives nothing.
        assert_eq!(read, b"first\n123456");
        assert!(end.unwrap_err().to_string().contains("over 9 bytes"));
        let cause = overflow.cause().unwrap();
        assert!(cause.contains("sent a message over 9 bytes"), "{cause}");

        let mut reader = BoundedLines::new(&b"more\n"[..], 9, overflow);
        assert!(reader.read(&mut [0_u8; 4]).await.is_err(), "ended for good");
    }
}
