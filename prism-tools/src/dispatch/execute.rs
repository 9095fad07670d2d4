//! Step 11: running the tool's body, relaying its progress and watching the cancellation token,
//! with every poll and the body's destructor guarded against panics.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use futures_util::FutureExt;
use futures_util::future::CatchUnwind;

use super::observe::Observe;
use super::span::InSpan;
use crate::call::ToolOutput;
use crate::context::ToolExecutionContext;
use crate::definition::ToolFuture;
use crate::error::ToolError;
use crate::panic::{DropGuarded, payload_message};
use crate::progress::ProgressReceiver;

pub(super) enum Executed {
    Returned(Result<ToolOutput, ToolError>),
    Panicked(String),
    Cancelled,
}

/// A prepared body as the pipeline holds it: its panics caught when it is polled, its destructor
/// guarded. Pinned where the pipeline keeps it (an inline body may not move once polled), it is
/// never moved again.
pub(super) type GuardedBody = DropGuarded<CatchUnwind<AssertUnwindSafe<ToolFuture>>>;

pub(super) fn guard_body(body: ToolFuture) -> GuardedBody {
    DropGuarded::new(AssertUnwindSafe(body).catch_unwind())
}

pub(super) async fn execute(
    mut body: Pin<&mut GuardedBody>,
    ctx: &ToolExecutionContext,
    progress: Option<ProgressReceiver>,
    observe: &mut Observe<'_>,
    name: &Arc<str>,
) -> Executed {
    // Most tools finish on their first poll; those need no race with the cancellation token.
    let finished = match std::future::poll_fn(|cx| {
        let _entered = observe.span().map(tracing::Span::enter);
        Poll::Ready(body.as_mut().poll(cx))
    })
    .await
    {
        Poll::Ready(finished) => Some(finished),
        // Boxed: only tools that wait pay for the room the race takes in the future.
        Poll::Pending => Box::pin(race(body.as_mut(), ctx, progress.as_ref(), observe, name)).await,
    };
    // Updates sent before the tool returned are still reported; closing the queue makes later
    // sends (from tasks the tool spawned) fail instead of arriving after the end. The call's
    // terminal event and row count the updates that were dropped.
    if let Some(progress) = progress {
        let updates = progress.close();
        for update in updates.queued {
            observe.progress(name, update, ctx.progress_listener());
        }
        observe.set_progress_dropped(updates.dropped);
    }
    // Whether it finished, panicked or was cancelled, the body's destructor is user code too.
    body.discard();
    match finished {
        Some(Ok(returned)) => Executed::Returned(returned),
        Some(Err(payload)) => Executed::Panicked(payload_message(payload)),
        None => Executed::Cancelled,
    }
}

/// Waits for the body, relaying progress, until it finishes (`Some`) or the run is cancelled
/// (`None`). The body is polled first, so a body and a cancellation that are both ready finish;
/// the cancellation before the progress queue, so progress that keeps arriving cannot keep a
/// cancelled call running (what is queued is still relayed when the queue closes).
async fn race<F: Future>(
    body: Pin<&mut F>,
    ctx: &ToolExecutionContext,
    progress: Option<&ProgressReceiver>,
    observe: &Observe<'_>,
    name: &Arc<str>,
) -> Option<F::Output> {
    let cancellation = ctx.cancellation();
    let mut body = std::pin::pin!(InSpan::new(body, observe.span()));
    match progress {
        None => tokio::select! {
            biased;
            finished = body.as_mut() => Some(finished),
            () = cancellation.cancelled() => None,
        },
        Some(progress) => loop {
            tokio::select! {
                biased;
                finished = body.as_mut() => break Some(finished),
                () = cancellation.cancelled() => break None,
                update = progress.recv() => observe.progress(name, update, ctx.progress_listener()),
            }
        },
    }
}
