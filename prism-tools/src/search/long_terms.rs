//! [`LongTerms`]: the index terms too long to be looked up prefix by prefix, found as prefixes
//! of a query word in one pass over it.
//!
//! The index meets a query word with the terms that are a prefix of its stem by hashing each
//! prefix in turn, which costs the square of the longest prefix tried, so it stops at a bound.
//! A term past that bound (a word too long to be stemmed, kept whole) is found here instead:
//! each such term is stored under a hash of its text, and a word's prefixes are hashed by one
//! hasher fed a byte at a time, so trying every prefix costs one pass over the word. A hash that
//! matches is confirmed by comparing the text; the hasher is seeded at random, so a word cannot
//! be made to collide with many terms.

use std::hash::{BuildHasher, Hasher};

use foldhash::fast::RandomState;

use super::interner::Interner;
use super::posting::TermId;

/// The terms longer than a bound, by a hash of their text.
#[derive(Clone, Debug, Default)]
pub(crate) struct LongTerms {
    seed: RandomState,
    /// (hash of the text, term), in order of hash.
    by_hash: Vec<(u64, TermId)>,
    /// The length in bytes of the longest of them.
    longest: usize,
}

impl LongTerms {
    /// The terms of `terms` longer than `bound` bytes.
    pub(crate) fn new(terms: &Interner, bound: usize) -> Self {
        let mut long = Self::default();
        for term in 0..terms.len() as TermId {
            let text = terms.resolve(term);
            if text.len() > bound {
                let mut hasher = long.seed.build_hasher();
                text.bytes().for_each(|byte| hasher.write_u8(byte));
                long.by_hash.push((hasher.finish(), term));
                long.longest = long.longest.max(text.len());
            }
        }
        long.by_hash.sort_unstable();
        long
    }

    /// Calls `each` with every term held here that is a prefix of `word` (or `word` itself),
    /// shortest first, until it returns false. `terms` is the table these terms come from.
    pub(crate) fn for_each_prefix_of(
        &self,
        word: &str,
        terms: &Interner,
        mut each: impl FnMut(TermId) -> bool,
    ) {
        if self.by_hash.is_empty() {
            return;
        }
        let bytes = word.as_bytes();
        let mut hasher = self.seed.build_hasher();
        for (at, &byte) in bytes.iter().enumerate().take(self.longest) {
            hasher.write_u8(byte);
            let end = at + 1;
            if !word.is_char_boundary(end) {
                continue;
            }
            let hash = hasher.finish();
            let start = self.by_hash.partition_point(|&(known, _)| known < hash);
            for &(_, term) in self.by_hash[start..].iter().take_while(|(h, _)| *h == hash) {
                if terms.resolve(term).as_bytes() == &bytes[..end] && !each(term) {
                    return;
                }
            }
        }
    }
}
