//! [`Detached`]: the calls of tools with an effect that run on their own tasks (see
//! `calling.rs`), counted, so the server can wait for their outcomes before it stops: a host
//! that ends its program once the server stopped would otherwise drop a started effect before
//! it recorded its outcome.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// The calls running on their own tasks.
#[derive(Debug, Default)]
pub(super) struct Detached {
    running: AtomicUsize,
    idle: Notify,
}

/// One call counted as running until this is dropped (its task returned, panicked or was
/// dropped with the runtime).
pub(super) struct DetachedCall(Arc<Detached>);

impl Detached {
    /// Counts one more running call.
    pub(super) fn start(self: &Arc<Self>) -> DetachedCall {
        self.running.fetch_add(1, Ordering::AcqRel);
        DetachedCall(Arc::clone(self))
    }

    /// Returns once no call runs.
    pub(super) async fn finished(&self) {
        loop {
            let idle = self.idle.notified();
            let mut idle = std::pin::pin!(idle);
            // Listening before reading the count: a call ending in between still wakes us.
            idle.as_mut().enable();
            if self.running.load(Ordering::Acquire) == 0 {
                return;
            }
            idle.await;
        }
    }
}

impl Drop for DetachedCall {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn finished_waits_for_the_last_call() {
        let detached = Arc::new(Detached::default());
        detached.finished().await;
        let first = detached.start();
        let second = detached.start();
        let waiting = tokio::spawn({
            let detached = Arc::clone(&detached);
            async move { detached.finished().await }
        });
        drop(first);
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(second);
        tokio::time::timeout(std::time::Duration::from_secs(10), waiting)
            .await
            .expect("finished returns once no call runs")
            .unwrap();
    }
}
