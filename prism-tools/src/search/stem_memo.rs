//! [`Stemming`]: a Snowball stemmer with a bounded memory of the stems it computed.
//!
//! Stemming a word costs far more than looking it up, and an agent re-indexes the same
//! vocabulary again and again: every run takes a new snapshot, and snapshots of one host share
//! most of their words. So the stems are remembered by the [`Tokenizer`](super::Tokenizer) (all
//! its clones share one memory, hence every index built from one
//! [`SearchConfig`](super::SearchConfig)), up to [`MAX_MEMO_WORDS`] words; past that, new words
//! are stemmed without being remembered, so the memory stays bounded whatever the tools say.
//!
//! An index build holds the lock for its whole duration: builds are rare and short, and taking
//! it once is cheaper than taking it for every new word.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use foldhash::fast::RandomState;
use rust_stemmers::{Algorithm, Stemmer};

/// The most words whose stems are remembered.
pub const MAX_MEMO_WORDS: usize = 65_536;

/// Words → position of their stem in `stems`: looking a word up yields a number, not a borrow,
/// so a hit costs one hash lookup.
#[derive(Default)]
struct Memo {
    words: HashMap<Box<str>, u32, RandomState>,
    stems: Vec<Box<str>>,
}

/// The English Snowball stemmer and its memory.
pub(crate) struct Stemming {
    stemmer: Stemmer,
    memo: Mutex<Memo>,
}

impl Stemming {
    pub(crate) fn english() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
            memo: Mutex::new(Memo::default()),
        }
    }

    /// Stems `word` without touching the memory.
    pub(crate) fn stem<'w>(&self, word: &'w str) -> Cow<'w, str> {
        self.stemmer.stem(word)
    }

    /// Opens the memory for a batch of words.
    pub(crate) fn remembering(&self) -> RememberedStems<'_> {
        RememberedStems {
            stemmer: &self.stemmer,
            // A panic while the lock was held can only have left a complete entry or none.
            memo: self
                .memo
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()),
        }
    }

    /// How many words are remembered.
    pub(crate) fn remembered(&self) -> usize {
        self.remembering().memo.words.len()
    }
}

/// The memory, open for one index build.
pub(crate) struct RememberedStems<'s> {
    stemmer: &'s Stemmer,
    memo: MutexGuard<'s, Memo>,
}

impl RememberedStems<'_> {
    /// The stem of `word`, from the memory when it is there.
    pub(crate) fn stem<'a>(&'a mut self, word: &'a str) -> Cow<'a, str> {
        let memo = &mut *self.memo;
        if let Some(&at) = memo.words.get(word) {
            return Cow::Borrowed(&memo.stems[at as usize]);
        }
        let stem = self.stemmer.stem(word);
        if memo.words.len() >= MAX_MEMO_WORDS {
            return stem;
        }
        memo.words.insert(Box::from(word), memo.stems.len() as u32);
        memo.stems.push(stem.into());
        Cow::Borrowed(&memo.stems[memo.stems.len() - 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_remembered_up_to_the_bound() {
        let stemming = Stemming::english();
        {
            let mut stems = stemming.remembering();
            assert_eq!(stems.stem("running"), "run");
            assert_eq!(stems.stem("running"), "run");
        }
        assert_eq!(stemming.remembered(), 1);
        {
            let mut stems = stemming.remembering();
            for i in 0..MAX_MEMO_WORDS + 10 {
                stems.stem(&format!("word{i}s"));
            }
            assert_eq!(stems.stem("jumping"), "jump");
        }
        assert_eq!(stemming.remembered(), MAX_MEMO_WORDS);
    }
}
