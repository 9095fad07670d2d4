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
use std::sync::{Mutex, MutexGuard};

use rust_stemmers::{Algorithm, Stemmer};

use super::interner::{Interner, StringList};

/// The most words whose stems are remembered.
pub const MAX_MEMO_WORDS: usize = 65_536;

/// Remembered words, and their stems in the same order: a hit costs one hash lookup.
#[derive(Default)]
struct Memo {
    words: Interner,
    /// The stem of word `i` is string `i`.
    stems: StringList,
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
        if is_own_stem(word) {
            return Cow::Borrowed(word);
        }
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
    /// Takes room for about `words` new words at once when the memory is empty, as it is for a
    /// tokenizer's first index, instead of growing to them step by step.
    pub(crate) fn expect_first(&mut self, words: usize) {
        if self.memo.words.len() == 0 {
            let words = words.min(MAX_MEMO_WORDS);
            *self.memo = Memo {
                words: Interner::with_capacity(words, words * 8),
                stems: StringList::with_capacity(words, words * 8),
            };
        }
    }

    /// The stem of `word`, from the memory when it is there.
    pub(crate) fn stem<'a>(&'a mut self, word: &'a str) -> Cow<'a, str> {
        if is_own_stem(word) {
            return Cow::Borrowed(word);
        }
        let memo = &mut *self.memo;
        if let Some(known) = memo.words.get(word) {
            return Cow::Borrowed(memo.stems.get(known));
        }
        let stem = self.stemmer.stem(word);
        if memo.words.len() >= MAX_MEMO_WORDS {
            return stem;
        }
        // Both lists grow together, after the stemmer ran: a panic in it changes neither.
        let at = memo.stems.push(&stem);
        memo.words.intern(word);
        Cow::Borrowed(memo.stems.get(at))
    }
}

/// True for a word the English stemmer returns unchanged whatever it is, known without running
/// it. The algorithm leaves words of fewer than three characters alone, and every one of its
/// rules rewrites an ending made of ASCII letters or apostrophes, so a word that ends otherwise
/// ("mp3", "get_user_v2", "2024", "café") keeps its form, provided it has no leading apostrophe
/// (dropped) and no `Y` (lowercased on the way out). Numbers, short codes and versioned
/// identifiers are common in tool text, and each one skipped saves a full run of the stemmer.
fn is_own_stem(word: &str) -> bool {
    if word.len() < 3 {
        return true;
    }
    let ends_otherwise = word
        .chars()
        .next_back()
        .is_some_and(|last| !last.is_ascii_alphabetic() && last != '\'');
    ends_otherwise && !word.starts_with('\'') && !word.contains('Y')
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

    #[test]
    fn words_ending_in_neither_letter_nor_apostrophe_keep_their_form() {
        let stemmer = Stemmer::create(Algorithm::English);
        let endings = [
            "", "s", "ing", "ies", "ed", "ational", "'s", "y", "ly", "e", "l",
        ];
        let mut checked = 0;
        for stem in [
            "run", "crypto", "kaloymer", "yes", "gently", "sky", "news", "a", "", "é",
        ] {
            for ending in endings {
                for tail in ["", "2", "_v2", "3.14", "é", "ß", "東", "-", "'", "Y", "s'"] {
                    for head in ["", "'", "Y", "x_"] {
                        let word = format!("{head}{stem}{ending}{tail}");
                        if is_own_stem(&word) {
                            assert_eq!(stemmer.stem(&word), word.as_str(), "{word:?}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
        for stemmed in ["runs", "ran'", "'2s", "running's", "2Y2", "yes"] {
            assert!(!is_own_stem(stemmed), "{stemmed:?}");
        }
    }
}
