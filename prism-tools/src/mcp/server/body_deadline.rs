//! A request body that must have arrived whole by a deadline.
//!
//! The header timeout bounds how long a request's head may take, and the body bound how large
//! its body may be, but neither how slowly the body may come: a client sending a byte now and
//! then would hold its connection and a task for as long as it liked. Past the deadline the
//! body fails, which rmcp answers with an error status, and the connection is freed.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;
use tokio::time::{Sleep, sleep};

pin_project! {
    /// `body`, failing with [`TooSlow`] once the deadline passes before its end.
    pub(super) struct DeadlineBody<B> {
        #[pin]
        body: B,
        #[pin]
        deadline: Sleep,
        limit: Duration,
    }
}

impl<B> DeadlineBody<B> {
    /// `body`, which must end within `limit` from now.
    pub(super) fn new(body: B, limit: Duration) -> Self {
        Self {
            body,
            // `sleep` takes a limit too long to add to now as one that never ends.
            deadline: sleep(limit),
            limit,
        }
    }
}

/// Why a body failed: its own error, or the deadline.
#[derive(Debug)]
pub(super) enum BodyError<E> {
    /// The body's own error.
    Body(E),
    /// The body had not ended within the limit.
    TooSlow(Duration),
}

impl<E: fmt::Display> fmt::Display for BodyError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Body(error) => error.fmt(f),
            Self::TooSlow(limit) => write!(f, "the request body did not arrive within {limit:?}"),
        }
    }
}

impl<B: Body> Body for DeadlineBody<B> {
    type Data = B::Data;
    type Error = BodyError<B::Error>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        if let Poll::Ready(frame) = this.body.poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(BodyError::Body)));
        }
        match this.deadline.poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(BodyError::TooSlow(*this.limit)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
