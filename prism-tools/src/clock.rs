//! Time, injectable so that tests and replays are deterministic.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, as written into events, ledger rows and effect leases.
pub type Millis = u64;

/// A source of the current time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> Millis;
}

/// `clock`'s time. A clock is host code: if it panics, the system clock answers instead, so the
/// event, row or call that needed the time still gets it.
pub(crate) fn now_or_system(clock: &dyn Clock) -> Millis {
    crate::panic::guarded(|| clock.now_millis()).unwrap_or_else(|panic| {
        tracing::error!(target: "prism_tools", %panic, "the clock panicked; using the system clock");
        SystemClock.now_millis()
    })
}

/// The operating system's clock: the default.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> Millis {
        // Whole seconds and the millisecond within, in `u64`: `as_millis` divides a `u128`.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|elapsed| elapsed.as_secs() * 1000 + Millis::from(elapsed.subsec_millis()))
            .unwrap_or(0)
    }
}

/// A clock that only moves when told to. Clones share one time.
///
/// ```
/// use prism_tools::{Clock, ManualClock};
///
/// let clock = ManualClock::new(1_000);
/// clock.advance(500);
/// assert_eq!(clock.now_millis(), 1_500);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// A clock standing at `millis`.
    pub fn new(millis: Millis) -> Self {
        Self(Arc::new(AtomicU64::new(millis)))
    }

    /// Moves the clock forward.
    pub fn advance(&self, millis: Millis) {
        self.0.fetch_add(millis, Ordering::SeqCst);
    }

    /// Sets the clock.
    pub fn set(&self, millis: Millis) {
        self.0.store(millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> Millis {
        self.0.load(Ordering::SeqCst)
    }
}
