//! The default clock: a cheap monotonic counter, anchored to the wall clock.
//!
//! Events and ledger rows carry wall-clock milliseconds, and an observed call reads the clock
//! twice. Asking the operating system (`SystemTime::now`, a vDSO `clock_gettime` on Linux) costs
//! some tens of nanoseconds; reading the CPU's counter through `quanta` costs about a third of
//! that. So a reading here is the counter, in nanoseconds, plus an offset: the wall time minus the
//! counter when the anchor was last taken, both kept in process-wide atomics. The fast path is two
//! relaxed atomic loads, the counter read and an add: no lock, no read-modify-write.
//!
//! The counter knows nothing of the wall clock's corrections, so the first reading to find the
//! anchor older than `REANCHOR_AFTER` (100 ms) renews it from `SystemTime`. That bounds the
//! disagreement: NTP slews a wall clock by at most 500 ppm, 50 µs in 100 ms, below the millisecond
//! these timestamps carry, and a step shows within 100 ms. Renewing costs one wall-clock reading
//! per 100 ms per process, which no call notices; a shorter interval would buy nothing visible.
//!
//! - **One renewer.** Readers that find the anchor stale race one compare-exchange on its claim
//!   time; the winner reads the wall clock, the others keep the old offset, still right to within
//!   microseconds. A renewal whose claim a later one overtook (its thread slept through a whole
//!   interval) is dropped, so an old wall reading does not replace a newer one (but for a window
//!   of a few instructions, whose worst case lasts until the next renewal). Relaxed ordering is
//!   enough: each atomic is whole on its own, and a reader that sees a new claim with the old
//!   offset reads through an offset still right to within microseconds.
//! - **Pairing.** The wall reading is bracketed by two counter readings, so that an interrupted
//!   thread does not pair it with a late counter reading (`paired_reading.rs`).
//! - **Backward.** A wall clock stepped back by `HOLD_BACKWARD` (1 ms) or more is followed, as
//!   `SystemTime` would be. A smaller backward correction (the counter ran a little fast, or
//!   pairing jitter) is held instead: the offset stays, so the clock runs at most that far ahead
//!   of the wall clock rather than showing the jitter as a millisecond going back.
//! - **Guarantee.** Readings never decrease, so a call's finished time is not before its started
//!   time, unless the wall clock steps back by a millisecond or more, or the counter's own drift
//!   against it adds up to a millisecond (at a few ppm, a step back of 1 ms every several
//!   minutes). That holds on one thread, and across threads as far as their cores' counters agree
//!   (an invariant TSC is synchronised across cores). A reading is at most 1 ms ahead of the wall
//!   clock and at most one interval's drift behind it.
//! - **Counter.** `quanta` reads the TSC when the CPU says it is invariant and otherwise the OS's
//!   monotonic clock: no faster than `SystemTime` then, but still correct. Its first use
//!   calibrates the TSC against the OS clock (about 0.6 ms; `quanta` stops at 200 ms). Building a
//!   dispatcher reads this clock (its effect-owner id), so dispatched calls do not pay for that.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{SystemTime, UNIX_EPOCH};

use super::Millis;
use super::paired_reading::PairedReading;

const NANOS_PER_MILLI: u64 = 1_000_000;

/// How old an anchor may get, in counter nanoseconds, before a reading renews it.
const REANCHOR_AFTER: u64 = 100 * NANOS_PER_MILLI;

/// Backward corrections smaller than this are held; larger ones are steps and are followed.
const HOLD_BACKWARD: u64 = NANOS_PER_MILLI;

/// The default clock's reading, in milliseconds since the Unix epoch.
pub(super) fn now_millis() -> Millis {
    static TIMEBASE: OnceLock<Timebase> = OnceLock::new();
    TIMEBASE.get_or_init(Timebase::start).now_nanos() / NANOS_PER_MILLI
}

/// The counter and the anchor that maps it onto the wall clock.
#[derive(Debug)]
struct Timebase {
    counter: Counter,
    anchor: Anchor,
}

impl Timebase {
    fn start() -> Self {
        let counter = Counter::start();
        let anchor = Anchor::new(PairedReading::read(|| counter.nanos(), wall_clock_nanos));
        Self { counter, anchor }
    }

    fn now_nanos(&self) -> u64 {
        let counter = self.counter.nanos();
        self.anchor.now_nanos(counter, || {
            PairedReading::read(|| self.counter.nanos(), wall_clock_nanos)
        })
    }
}

/// Nanoseconds from a monotonic counter, counted from when it was started.
#[derive(Debug)]
struct Counter {
    clock: quanta::Clock,
    origin: u64,
}

impl Counter {
    /// Calibrates the counter on the process's first call (`quanta` keeps the calibration).
    fn start() -> Self {
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        Self { clock, origin }
    }

    /// Zero if this core's counter reads behind the origin (`quanta` does not return negatives).
    fn nanos(&self) -> u64 {
        self.clock.delta_as_nanos(self.origin, self.clock.raw())
    }
}

/// The operating system's wall clock in milliseconds, read without the counter.
pub(super) fn operating_system_millis() -> Millis {
    wall_clock_nanos() / NANOS_PER_MILLI
}

/// The operating system's wall clock in nanoseconds since the Unix epoch; 0 before the epoch, as
/// the millisecond clock always read there.
fn wall_clock_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
        })
}

/// Wall time as counter plus offset, and when the offset was last claimed for renewal.
#[derive(Debug)]
struct Anchor {
    /// Wall nanoseconds minus counter nanoseconds, wrapping: only differences of it mean anything.
    offset: AtomicU64,
    /// The counter reading of the latest claim; the next claim is due `REANCHOR_AFTER` later.
    claimed_at: AtomicU64,
}

impl Anchor {
    fn new(pair: PairedReading) -> Self {
        Self {
            offset: AtomicU64::new(pair.offset()),
            claimed_at: AtomicU64::new(pair.counter),
        }
    }

    /// Wall nanoseconds at `counter`. A reader that finds the anchor stale and wins the claim
    /// renews it from `pair`, a fresh reading of both clocks; everyone else reads through the
    /// offset there is.
    fn now_nanos(&self, counter: u64, pair: impl FnOnce() -> PairedReading) -> u64 {
        let claimed_at = self.claimed_at.load(Relaxed);
        if is_stale(claimed_at, counter) && self.claim(claimed_at, counter) {
            return self.renew(counter, pair());
        }
        counter.wrapping_add(self.offset.load(Relaxed))
    }

    /// Whether this reader, having seen the claim `seen`, is the one to renew the anchor.
    fn claim(&self, seen: u64, counter: u64) -> bool {
        self.claimed_at
            .compare_exchange(seen, counter, Relaxed, Relaxed)
            .is_ok()
    }

    /// Installs `pair`'s offset, unless a later claim than `claim` took over meanwhile, and reads
    /// the time at `pair` through whichever offset stands.
    fn renew(&self, claim: u64, pair: PairedReading) -> u64 {
        let fresh = pair.offset();
        let standing = match self.offset.fetch_update(Relaxed, Relaxed, |held| {
            (self.claimed_at.load(Relaxed) == claim).then(|| next_offset(held, fresh))
        }) {
            Ok(held) => next_offset(held, fresh),
            Err(overtaken) => overtaken,
        };
        pair.counter.wrapping_add(standing)
    }
}

/// Whether an anchor claimed at counter reading `claimed_at` is due for renewal at `counter`. A
/// counter behind the claim (another core's, a few nanoseconds off) is not.
fn is_stale(claimed_at: u64, counter: u64) -> bool {
    counter.saturating_sub(claimed_at) >= REANCHOR_AFTER
}

/// The offset to keep when the anchor holds `held` and the wall clock now says `fresh`: the fresh
/// one, unless it would move time back by less than `HOLD_BACKWARD`.
fn next_offset(held: u64, fresh: u64) -> u64 {
    let backward = held.wrapping_sub(fresh);
    if (1..HOLD_BACKWARD).contains(&backward) {
        held
    } else {
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wall time in 2025, in nanoseconds.
    const WALL: u64 = 1_750_000_000_000 * NANOS_PER_MILLI;
    const HOUR: u64 = 3_600_000 * NANOS_PER_MILLI;

    fn anchored_at(counter: u64) -> Anchor {
        Anchor::new(PairedReading {
            wall: WALL,
            counter,
        })
    }

    /// For readers that must not renew: asking for a fresh reading fails the test.
    fn no_renewal() -> PairedReading {
        panic!("a reader renewed an anchor that was fresh or claimed by another")
    }

    #[test]
    fn a_fresh_anchor_adds_the_counter_to_the_wall_time_without_asking_the_wall_clock() {
        let anchor = anchored_at(5_000);
        assert_eq!(anchor.now_nanos(5_000, no_renewal), WALL);
        assert_eq!(anchor.now_nanos(5_042, no_renewal), WALL + 42);
        let last_fresh = 5_000 + REANCHOR_AFTER - 1;
        assert_eq!(
            anchor.now_nanos(last_fresh, no_renewal),
            WALL + REANCHOR_AFTER - 1
        );
    }

    #[test]
    fn a_stale_anchor_follows_a_wall_clock_stepped_forward_or_back_by_a_millisecond_or_more() {
        let unstepped = WALL + REANCHOR_AFTER;
        for stepped in [
            unstepped + HOUR,
            unstepped - HOLD_BACKWARD,
            unstepped - HOUR,
        ] {
            let anchor = anchored_at(0);
            let pair = || PairedReading {
                wall: stepped,
                counter: REANCHOR_AFTER,
            };
            assert_eq!(anchor.now_nanos(REANCHOR_AFTER, pair), stepped);
            assert_eq!(
                anchor.now_nanos(REANCHOR_AFTER + 7, no_renewal),
                stepped + 7
            );
        }
    }

    #[test]
    fn a_smaller_backward_correction_is_held_so_readings_do_not_go_back() {
        let anchor = anchored_at(0);
        let before = anchor.now_nanos(REANCHOR_AFTER - 1, no_renewal);
        let pair = || PairedReading {
            wall: WALL + REANCHOR_AFTER - (HOLD_BACKWARD - 1),
            counter: REANCHOR_AFTER,
        };
        let renewed = anchor.now_nanos(REANCHOR_AFTER, pair);
        assert_eq!(renewed, WALL + REANCHOR_AFTER);
        assert!(renewed > before);
    }

    #[test]
    fn held_corrections_never_put_the_clock_a_millisecond_ahead() {
        // A counter running fast: each renewal finds the wall clock 0.6 ms further behind.
        let drift = HOLD_BACKWARD * 6 / 10;
        let anchor = anchored_at(0);
        let renew_at = |round: u64| {
            let counter = round * REANCHOR_AFTER;
            let wall = WALL + counter - round * drift;
            (
                wall,
                anchor.now_nanos(counter, || PairedReading { wall, counter }),
            )
        };
        let (wall, read) = renew_at(1);
        assert_eq!(read - wall, drift, "the first correction is held");
        let (wall, read) = renew_at(2);
        assert_eq!(read, wall, "1.2 ms ahead is a step: followed");
    }

    #[test]
    fn only_one_of_the_readers_that_find_the_anchor_stale_renews_it() {
        let anchor = anchored_at(0);
        let seen = anchor.claimed_at.load(Relaxed);
        assert!(is_stale(seen, REANCHOR_AFTER));
        assert!(anchor.claim(seen, REANCHOR_AFTER));
        assert!(!anchor.claim(seen, REANCHOR_AFTER + 1));
    }

    #[test]
    fn a_reader_during_a_renewal_keeps_the_old_offset() {
        let anchor = anchored_at(0);
        let stepped = WALL + REANCHOR_AFTER + HOUR;
        let renewed = anchor.now_nanos(REANCHOR_AFTER, || {
            // Another thread reads while the renewer asks the wall clock.
            let meanwhile = anchor.now_nanos(REANCHOR_AFTER + 1, no_renewal);
            assert_eq!(meanwhile, WALL + REANCHOR_AFTER + 1);
            PairedReading {
                wall: stepped,
                counter: REANCHOR_AFTER + 2,
            }
        });
        assert_eq!(renewed, stepped);
        assert_eq!(
            anchor.now_nanos(REANCHOR_AFTER + 3, no_renewal),
            stepped + 1
        );
    }

    #[test]
    fn a_renewal_overtaken_by_a_later_claim_is_dropped() {
        let anchor = anchored_at(0);
        // One thread claims, then sleeps through a whole interval before reading the wall clock.
        let first = REANCHOR_AFTER;
        assert!(anchor.claim(0, first));
        // Another finds that claim stale, and renews after the wall clock stepped back an hour.
        let second = first + REANCHOR_AFTER;
        let stepped = WALL + second - HOUR;
        let pair = || PairedReading {
            wall: stepped,
            counter: second,
        };
        assert_eq!(anchor.now_nanos(second, pair), stepped);
        // The sleeper's reading, from before the step, does not undo it.
        let stale = PairedReading {
            wall: WALL + first,
            counter: first,
        };
        assert_eq!(anchor.renew(first, stale), stepped - REANCHOR_AFTER);
        assert_eq!(anchor.now_nanos(second + 1, no_renewal), stepped + 1);
    }

    #[test]
    fn a_counter_slightly_behind_the_claim_is_not_stale() {
        let anchor = anchored_at(1_000);
        assert_eq!(anchor.now_nanos(990, no_renewal), WALL - 10);
    }

    #[test]
    fn a_wall_clock_before_the_epoch_counts_from_zero() {
        let anchor = Anchor::new(PairedReading {
            wall: 0,
            counter: 5_000,
        });
        assert_eq!(anchor.now_nanos(5_042, no_renewal), 42);
    }
}
