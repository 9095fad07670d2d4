//! The default clock against the operating system's wall clock it is anchored to: it agrees with
//! it, and on one thread it does not go back, across several renewals of its anchor and with
//! other threads renewing it too.

use std::sync::Barrier;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prism_tools::{Clock, Millis, SystemClock};

/// Far wider than the clock's real disagreement (a millisecond): only a wall clock stepped while
/// the test runs could reach it.
const TOLERANCE_MILLIS: Millis = 5_000;

/// Long enough to cross several 100 ms anchor renewals, measured on the operating system's clock
/// so that the loop ends even if ours stood still.
const SPAN: Duration = Duration::from_millis(350);

const THREADS: usize = 2;

fn wall_millis() -> Millis {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the test machine's clock is after 1970");
    Millis::try_from(since.as_millis()).expect("milliseconds fit in u64")
}

/// Reads the clock for `SPAN`, checking every reading against the wall clock read around it and
/// against the previous reading. Returns how many readings it took.
fn read_for_a_span() -> u64 {
    let end = SystemTime::now() + SPAN;
    let mut previous = SystemClock.now_millis();
    let mut readings = 1;
    while SystemTime::now() < end {
        let before = wall_millis();
        let now = SystemClock.now_millis();
        let after = wall_millis();
        assert!(
            before.saturating_sub(TOLERANCE_MILLIS) <= now && now <= after + TOLERANCE_MILLIS,
            "SystemClock read {now} between wall-clock readings {before} and {after}"
        );
        assert!(
            now >= previous,
            "SystemClock went back from {previous} to {now}"
        );
        previous = now;
        readings += 1;
    }
    readings
}

#[test]
fn the_system_clock_agrees_with_the_wall_clock_and_does_not_go_back_on_one_thread() {
    assert!(read_for_a_span() > 1);
}

#[test]
fn threads_renewing_the_anchor_together_each_read_a_steady_clock() {
    let start = Barrier::new(THREADS);
    thread::scope(|scope| {
        let readers: Vec<_> = (0..THREADS)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    read_for_a_span()
                })
            })
            .collect();
        for reader in readers {
            assert!(reader.join().expect("a reader panicked") > 1);
        }
    });
}
