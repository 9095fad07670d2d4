//! Time, injectable so that tests and replays are deterministic.
//!
//! The default, [`SystemClock`], reads a cheap monotonic counter anchored to the operating
//! system's wall clock and renewed from it every 100 ms, because the dispatcher reads the clock
//! twice per observed call and asking the operating system each time costs about three counter
//! readings. See `wall_anchor.rs` for how the anchor is kept and what the readings guarantee.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

mod paired_reading;
mod wall_anchor;

/// Milliseconds since the Unix epoch, as written into events, ledger rows and effect leases.
pub type Millis = u64;

/// A source of the current time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> Millis;
}

/// `clock`'s time. A clock is host code: if it panics, the operating system's clock answers
/// instead, so the event, row or call that needed the time still gets it. That is read directly,
/// not through [`SystemClock`], which may be the clock that panicked.
pub(crate) fn now_or_system(clock: &dyn Clock) -> Millis {
    // The panic's text is not logged: nothing redacts this log.
    crate::panic::guarded(|| clock.now_millis()).unwrap_or_else(|_| {
        tracing::error!(target: "prism_tools", "the clock panicked; using the system clock");
        wall_anchor::operating_system_millis()
    })
}

/// The operating system's wall clock, read through a cheap counter: the default.
///
/// Readings follow the wall clock to within a millisecond, its steps within 100 ms. On one
/// thread they never decrease unless the wall clock steps back by a millisecond or more (or,
/// rarely, the counter's drift against it adds up to that much). The first reading in a process
/// calibrates the counter (about half a millisecond); building a dispatcher takes that reading.
///
/// ```
/// use prism::dispatch::{Clock, SystemClock};
///
/// let millis = SystemClock.now_millis();
/// assert!(millis > 1_577_836_800_000, "later than 2020");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> Millis {
        wall_anchor::now_millis()
    }
}

/// A clock that only moves when told to. Clones share one time.
///
/// ```
/// use prism::dispatch::{Clock, ManualClock};
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
