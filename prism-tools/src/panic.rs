//! Catching panics in user code, so that no panic reaches the host and every call keeps its one
//! result.
//!
//! The default panic hook still prints the payload to stderr before the panic is caught here; a
//! host that considers payloads sensitive installs its own hook. Building with `panic = "abort"`
//! turns every caught panic back into a process abort: the guarantee needs unwinding.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

use futures_util::FutureExt;

/// Runs `f`, turning a panic into its message.
pub(crate) fn guarded<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(payload_message)
}

/// Creates a future with `make` and awaits it, turning a panic while creating, polling or dropping
/// it into its message. Stores do much of their work before they return a future, so creating it
/// is guarded too.
pub(crate) async fn guarded_future<F>(make: impl FnOnce() -> F) -> Result<F::Output, String>
where
    F: Future + Unpin,
{
    let mut future = AssertUnwindSafe(guarded(make)?).catch_unwind();
    let output = (&mut future).await.map_err(payload_message);
    drop_guarded(future);
    output
}

/// Drops `value`, swallowing a panic from its destructor.
pub(crate) fn drop_guarded<T>(value: T) {
    if let Err(message) = guarded(move || drop(value)) {
        tracing::error!(target: "prism_tools", panic = %message, "a value panicked while being dropped");
    }
}

/// The text of a panic payload (`&str` and `String` payloads; anything else is unnamed).
pub(crate) fn payload_message(payload: Box<dyn Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => match payload.downcast::<&'static str>() {
            Ok(message) => (*message).to_owned(),
            Err(_) => "a panic with a non-text payload".to_owned(),
        },
    }
}
