//! Waiting on host code (a provider turn, a narrowing callback, a round gate) only as long as the
//! run is not cancelled: such code may wait on anything, a person included, and a cancelled run
//! must end soon all the same. The abandoned future's destructor is the host's code too, so it
//! runs under the panic guard.

use std::future::Future;
use std::pin::pin;

use crate::context::CancellationToken;
use crate::panic::DropGuarded;

/// `work`'s output, or `None` when `cancellation` fired first (checked first on every wake-up).
pub(crate) async fn until_cancelled<F: Future>(
    cancellation: &CancellationToken,
    work: F,
) -> Option<F::Output> {
    let work = pin!(DropGuarded::new(work));
    tokio::select! {
        biased;
        () = cancellation.cancelled() => None,
        output = work => Some(output),
    }
}
