//! Catching panics in user code, so that no panic reaches the host and every call keeps its one
//! result.
//!
//! The default panic hook still prints the payload to stderr before the panic is caught here; a
//! host that considers payloads sensitive installs its own hook. Building with `panic = "abort"`
//! turns every caught panic back into a process abort: the guarantee needs unwinding.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::{Pin, pin};
use std::task::{Context, Poll};

use futures_util::FutureExt;
use pin_project_lite::pin_project;

/// Runs `f`, turning a panic into its message.
pub(crate) fn guarded<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(payload_message)
}

/// Creates a future with `make` and awaits it, turning a panic while creating, polling or dropping
/// it into its message. Stores do much of their work before they return a future, so creating it
/// is guarded too. The future is dropped under the guard even when the future awaiting it is
/// dropped first (a host's timeout around a dispatch waiting on a store).
pub(crate) async fn guarded_future<F>(make: impl FnOnce() -> F) -> Result<F::Output, String>
where
    F: Future + Unpin,
{
    let mut future = pin!(DropGuarded::new(
        AssertUnwindSafe(guarded(make)?).catch_unwind()
    ));
    let output = future.as_mut().await.map_err(payload_message);
    future.discard();
    output
}

/// Logs that a destructor panicked, without its message: nothing redacts this log, and the
/// message could quote a secret (the panic hook has printed it already, see the module docs).
fn log_drop_panic(dropped: Result<(), String>) {
    if dropped.is_err() {
        tracing::error!(target: "prism_tools", "a value panicked while being dropped");
    }
}

pin_project! {
    /// A future whose destructor, user code too, runs under the panic guard. A future that was
    /// polled may not move, so it is dropped in place, by [`discard`](Self::discard) or whenever
    /// it goes out of scope: also when the future awaiting it is dropped mid-await.
    pub(crate) struct DropGuarded<F> {
        // `None` once discarded.
        #[pin]
        future: Option<F>,
    }

    impl<F> PinnedDrop for DropGuarded<F> {
        fn drop(this: Pin<&mut Self>) {
            this.discard();
        }
    }
}

impl<F> DropGuarded<F> {
    pub(crate) fn new(future: F) -> Self {
        Self {
            future: Some(future),
        }
    }

    /// Drops the future now, in place, swallowing a panic from its destructor. Polled again, it
    /// stays pending.
    pub(crate) fn discard(self: Pin<&mut Self>) {
        let mut future = self.project().future;
        if future.is_some() {
            log_drop_panic(guarded(move || future.set(None)));
        }
    }
}

impl<F: Future> Future for DropGuarded<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        match self.project().future.as_pin_mut() {
            Some(future) => future.poll(cx),
            None => Poll::Pending,
        }
    }
}

/// The text of a panic payload (`&str` and `String` payloads; anything else is unnamed).
pub(crate) fn payload_message(payload: Box<dyn Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(message) => (*message).to_owned(),
            Err(payload) => {
                drop_payload(payload);
                "a panic with a non-text payload".to_owned()
            }
        },
    }
}

/// Drops a payload of a type of the user's (`panic_any`), whose destructor may panic too. That
/// second payload is leaked rather than dropped: its destructor could panic again.
fn drop_payload(payload: Box<dyn Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}
