//! One wall-clock reading paired with the counter reading taken at the same moment.
//!
//! The anchor that maps the counter onto the wall clock is only as good as this pairing: a thread
//! interrupted between the two reads would pair the wall time with a counter reading from
//! milliseconds later, and every reading until the next renewal would be off by that much. So the
//! wall reading is bracketed by two counter readings, paired with their middle, and read again
//! when the bracket is too wide to trust.

/// Counter readings around a wall reading further apart than this were interrupted. Uninterrupted
/// they are some tens of nanoseconds apart; an interruption costs microseconds at least.
const TRUSTED_BRACKET: u64 = 20_000;

/// How many brackets to try before settling for the narrowest.
const BRACKET_TRIES: usize = 3;

/// A wall-clock reading and the counter reading taken with it, both in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PairedReading {
    pub(super) wall: u64,
    pub(super) counter: u64,
}

impl PairedReading {
    /// Reads `wall` between two readings of `counter`, trying again while the bracket is too wide
    /// to trust, and keeps the narrowest.
    pub(super) fn read(mut counter: impl FnMut() -> u64, mut wall: impl FnMut() -> u64) -> Self {
        let mut bracket = || {
            let before = counter();
            let wall = wall();
            let width = counter().saturating_sub(before);
            let pair = PairedReading {
                wall,
                counter: before + width / 2,
            };
            (width, pair)
        };
        let (mut width, mut pair) = bracket();
        for _ in 1..BRACKET_TRIES {
            if width <= TRUSTED_BRACKET {
                break;
            }
            let (next_width, next_pair) = bracket();
            if next_width < width {
                (width, pair) = (next_width, next_pair);
            }
        }
        pair
    }

    /// Wall minus counter, wrapping: added to a later counter reading, the wall time then.
    pub(super) fn offset(self) -> u64 {
        self.wall.wrapping_sub(self.counter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wall time in 2025, in nanoseconds.
    const WALL: u64 = 1_750_000_000_000_000_000;

    #[test]
    fn the_wall_reading_pairs_with_the_middle_of_its_bracket() {
        let mut counter = [100, 140].into_iter();
        let pair = PairedReading::read(|| counter.next().expect("two counter readings"), || WALL);
        assert_eq!(
            pair,
            PairedReading {
                wall: WALL,
                counter: 120
            }
        );
    }

    #[test]
    fn an_interrupted_bracket_is_tried_again_and_the_narrowest_kept() {
        let wide = TRUSTED_BRACKET + 1;
        let mut counter = [0, 3 * wide, 10 * wide, 11 * wide, 20 * wide, 22 * wide].into_iter();
        let mut walls = [WALL, WALL + 1, WALL + 2].into_iter();
        let pair = PairedReading::read(
            || counter.next().expect("three brackets"),
            || walls.next().expect("three wall readings"),
        );
        let narrowest = PairedReading {
            wall: WALL + 1,
            counter: 10 * wide + wide / 2,
        };
        assert_eq!(pair, narrowest);
    }

    #[test]
    fn a_trusted_bracket_ends_the_tries() {
        let wide = TRUSTED_BRACKET + 1;
        // Only two brackets' worth of readings: a third try would run out and fail the test.
        let mut counter = [0, wide, 2 * wide, 2 * wide + 40].into_iter();
        let mut walls = [WALL, WALL + 1].into_iter();
        let pair = PairedReading::read(
            || counter.next().expect("two brackets"),
            || walls.next().expect("two wall readings"),
        );
        let trusted = PairedReading {
            wall: WALL + 1,
            counter: 2 * wide + 20,
        };
        assert_eq!(pair, trusted);
    }
}
