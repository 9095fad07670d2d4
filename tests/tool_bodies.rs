//! Tool bodies are stored inline when small and boxed when large or already boxed. Whatever the
//! storage, a body runs, its panics become `tool_panicked`, and its destructor runs exactly once
//! however the call ends, a panic in that destructor reaching no one.

mod common;

use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use common::*;
use prism::call::{BlockReason, ErrorCode};
use prism::context::CancellationToken;
use prism::definition::{NotPrepared, Prepared, ToolFuture, ToolHandler};
use prism::guard::before_execute_fn;
use prism::{
    Dispatcher, ToolCall, ToolDefinition, ToolError, ToolExecutionContext, ToolRegistry, ToolResult,
};
use serde_json::{Value, json};

/// Bytes a large body carries: well past the inline room.
const LARGE: usize = 4 * ToolFuture::INLINE_CAPACITY;

/// A body boxed and erased, as a handler might already have it.
type DynBody = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send>>;

/// How a body is stored.
#[derive(Clone, Copy, Debug)]
enum Storage {
    /// Small enough for the inline room.
    Inline,
    /// Too large for it: boxed by `ToolFuture::new`.
    Large,
    /// Boxed by the handler, then converted with `From`.
    BoxedByHandler,
}

/// How a call with that body ends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Ending {
    /// The body returns a value.
    Returns,
    /// The body panics when polled.
    Panics,
    /// The body cancels the run's token and waits.
    Cancelled,
    /// A before-execute policy refuses the call: the body is dropped unpolled.
    RefusedBeforeRun,
    /// The host drops the dispatch future while the body waits.
    Abandoned,
}

/// Counts its destructor's runs, and panics in it when armed.
struct Counted {
    drops: Arc<AtomicUsize>,
    explodes: bool,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.explodes {
            panic!("body destructor exploded");
        }
    }
}

/// A body carrying `PAD` bytes that ends as its `ending` says. Its guard is a field, so it is
/// dropped with the body, never by finishing or by a panic's unwinding.
struct Body<const PAD: usize> {
    padding: [u8; PAD],
    ending: Ending,
    cancellation: CancellationToken,
    _guard: Counted,
}

impl<const PAD: usize> Future for Body<PAD> {
    type Output = Result<Value, ToolError>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        match self.ending {
            // A refused body is never polled; were it, its value would show in the result.
            Ending::Returns | Ending::RefusedBeforeRun => {
                Poll::Ready(Ok(json!(self.padding.len())))
            }
            Ending::Panics => panic!("body exploded"),
            Ending::Cancelled => {
                self.cancellation.cancel();
                Poll::Pending
            }
            Ending::Abandoned => Poll::Pending,
        }
    }
}

fn body<const PAD: usize>(ending: Ending, ctx: &ToolExecutionContext, guard: Counted) -> Body<PAD> {
    Body {
        padding: [1; PAD],
        ending,
        cancellation: ctx.cancellation().clone(),
        _guard: guard,
    }
}

struct Handler {
    storage: Storage,
    ending: Ending,
    drops: Arc<AtomicUsize>,
    explodes: bool,
}

impl ToolHandler for Handler {
    fn prepare(&self, _: &Value, ctx: ToolExecutionContext) -> Result<Prepared, NotPrepared> {
        let guard = Counted {
            drops: Arc::clone(&self.drops),
            explodes: self.explodes,
        };
        let body: ToolFuture = match self.storage {
            Storage::Inline => ToolFuture::new(body::<0>(self.ending, &ctx, guard)),
            Storage::Large => ToolFuture::new(body::<LARGE>(self.ending, &ctx, guard)),
            Storage::BoxedByHandler => {
                let boxed: DynBody = Box::pin(body::<0>(self.ending, &ctx, guard));
                boxed.into()
            }
        };
        Ok(body.into())
    }
}

#[test]
fn small_bodies_fit_inline_and_large_ones_do_not() {
    let ctx = ctx();
    let guard = || Counted {
        drops: Arc::new(AtomicUsize::new(0)),
        explodes: false,
    };
    let small = body::<0>(Ending::Returns, &ctx, guard());
    assert!(ToolFuture::fits_inline(&small));
    let large = body::<LARGE>(Ending::Returns, &ctx, guard());
    assert!(!ToolFuture::fits_inline(&large));
    let boxed: DynBody = Box::pin(large);
    assert!(ToolFuture::fits_inline(&boxed), "a box is two words");
}

/// Dispatches one call to a tool whose body is stored and ends as asked; returns the result
/// (none when the call was abandoned) and how often the body's destructor ran.
async fn dispatch(storage: Storage, ending: Ending, explodes: bool) -> (Option<ToolResult>, usize) {
    let drops = Arc::new(AtomicUsize::new(0));
    let tool = ToolDefinition::builder("tool").handler(Handler {
        storage,
        ending,
        drops: Arc::clone(&drops),
        explodes,
    });
    let builder = Dispatcher::builder(ToolRegistry::from_iter([tool])).before_execute(
        before_execute_fn(move |_, _, _| match ending {
            Ending::RefusedBeforeRun => Err("not now".into()),
            _ => Ok(()),
        }),
    );
    let dispatcher = builder.build();
    let ctx = ctx();
    let call = ToolCall::new("c", "tool", json!({}));
    let result = if ending == Ending::Abandoned {
        let mut dispatching = pin!(dispatcher.dispatch(call, &ctx));
        let first = poll_fn(|cx| Poll::Ready(dispatching.as_mut().poll(cx))).await;
        assert!(first.is_pending(), "the body waits forever");
        None
    } else {
        Some(dispatcher.dispatch(call, &ctx).await.expect("no guardrail"))
    };
    (result, drops.load(Ordering::SeqCst))
}

#[tokio::test]
async fn every_body_ends_as_it_should_and_is_dropped_exactly_once() {
    let storages = [Storage::Inline, Storage::Large, Storage::BoxedByHandler];
    let endings = [
        Ending::Returns,
        Ending::Panics,
        Ending::Cancelled,
        Ending::RefusedBeforeRun,
        Ending::Abandoned,
    ];
    for storage in storages {
        for ending in endings {
            for explodes in [false, true] {
                let case = format!("{storage:?} body, {ending:?}, destructor panics: {explodes}");
                let (result, drops) = dispatch(storage, ending, explodes).await;
                assert_eq!(drops, 1, "{case}");
                match (ending, &result) {
                    (Ending::Abandoned, None) => {}
                    (Ending::Returns, Some(result)) => {
                        let padding = if matches!(storage, Storage::Large) {
                            LARGE
                        } else {
                            0
                        };
                        assert_eq!(result.as_value(), Some(&json!(padding)), "{case}");
                    }
                    (Ending::Panics, Some(result)) => {
                        let error = error_of(result);
                        assert_eq!(error.code, ErrorCode::ToolPanicked, "{case}");
                        assert!(error.message.contains("body exploded"), "{case}: {error:?}");
                    }
                    (Ending::Cancelled, Some(result)) => {
                        assert_eq!(error_of(result).code, ErrorCode::Cancelled, "{case}");
                    }
                    (Ending::RefusedBeforeRun, Some(result)) => {
                        let reason = result.block_reason();
                        assert_eq!(reason, Some(BlockReason::ExecutionDenied), "{case}");
                    }
                    (_, other) => panic!("{case}: unexpected result {other:?}"),
                }
            }
        }
    }
}
