//! [`Stemming`]: a Snowball stemmer with a bounded memory of the stems it computed.
//!
//! Only words of at most [`MAX_STEMMED_WORD_BYTES`] bytes are stemmed; a longer word is its own
//! stem. The bound applies wherever a word is stemmed, so a tool's words and a query's words
//! always become the same terms.
//!
//! Stemming a word costs far more than looking it up, and an agent re-indexes the same
//! vocabulary again and again: every run takes a new snapshot, and snapshots of one host share
//! most of their words. So the stems are remembered by the [`Tokenizer`](super::Tokenizer) (all
//! its clones share one memory, hence every index built from one
//! [`SearchConfig`](super::SearchConfig)), up to [`MAX_MEMO_WORDS`] words of at most
//! [`MAX_STEMMED_WORD_BYTES`] bytes; past that, words are stemmed without being remembered, so
//! the memory stays small whatever the tools say.
//! Words that the stemmer would return unchanged and that can be recognised without running it
//! (see [`is_own_stem`]) are neither stemmed nor remembered.
//!
//! An index build holds the lock for its whole duration: builds are rare and short, and taking
//! it once is cheaper than taking it for every new word.

use std::borrow::Cow;
use std::sync::{Mutex, MutexGuard};

use rust_stemmers::{Algorithm, Stemmer};

use super::interner::{Interner, StringList};

/// The most words whose stems are remembered.
pub const MAX_MEMO_WORDS: usize = 65_536;

/// The longest word, in bytes, that is stemmed (and so remembered); a longer word is its own
/// stem. The Snowball stemmer's cost grows faster than a word's length (a 30,000-byte word of
/// "ay" repeated takes about 100 ms), and a word may be as long as a whole query or field (a
/// token of base64, a URL, a crafted message): with the bound, the stemming cost of a text grows
/// only with its length, and the memory never keeps such a word. The longest English words are
/// under 50 bytes, and an identifier long enough to pass the bound (`get_customer_billing_history`
/// is 28 bytes) is still matched by its parts, which are stemmed as usual.
const MAX_STEMMED_WORD_BYTES: usize = 64;

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
        if is_kept_whole(word) {
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
        if is_kept_whole(word) {
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

/// The last characters of every ending that a rule of the English stemmer rewrites or that
/// one of its whole-word exceptions ends with: `'`, `'s` and `s` endings, `-ed`, `-ing`, `-ly`,
/// `-y`, `-i` (as in `-enci`, `-li`), `-al`, `-ism`, `-ion`, `-er`, `-ate`, `-ic`, `-ent`, `-e`.
const STEMMED_ENDINGS: [char; 13] = [
    '\'', 'c', 'd', 'e', 'g', 'i', 'l', 'm', 'n', 'r', 's', 't', 'y',
];

/// True for a word that is its own stem here: one past [`MAX_STEMMED_WORD_BYTES`], or one the
/// stemmer would return unchanged anyway. Both ways of stemming ask this, so a tool's words and
/// a query's become the same terms.
fn is_kept_whole(word: &str) -> bool {
    word.len() > MAX_STEMMED_WORD_BYTES || is_own_stem(word)
}

/// True for a word the English stemmer returns unchanged, known without running it. The
/// algorithm leaves words of fewer than three characters alone, and each of its rules rewrites
/// a particular ending, so a word whose last character ends none of them ("mp3", "crypto",
/// "fax", "2024", "café") keeps its form, provided it has no leading apostrophe (dropped) and no
/// `Y` (lowercased on the way out). Each word skipped saves a full run of the stemmer, and a
/// good share of tool words qualify: numbers, codes, versioned identifiers, words in -a, -o, -k,
/// -p, -x, -h, -w.
fn is_own_stem(word: &str) -> bool {
    if word.len() < 3 {
        return true;
    }
    let ends_otherwise = word
        .chars()
        .next_back()
        .is_some_and(|last| !STEMMED_ENDINGS.contains(&last));
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
    fn long_words_do_not_fill_the_memory() {
        let stemming = Stemming::english();
        {
            let mut stems = stemming.remembering();
            for i in 0..64 {
                let word = format!("{}{i}ings", "x".repeat(8000));
                let direct = stemming.stem(&word).into_owned();
                assert_eq!(stems.stem(&word), direct);
            }
        }
        let kept = stemming.remembering().memo.words.bytes();
        assert!(kept <= 64 * 2 * MAX_STEMMED_WORD_BYTES, "{kept} bytes kept");
    }

    #[test]
    fn words_past_the_bound_are_not_stemmed() {
        let stemming = Stemming::english();
        // 64 bytes: stemmed, "-ing" goes.
        let at_bound = format!("{}aing", "ab".repeat(30));
        assert_eq!(at_bound.len(), MAX_STEMMED_WORD_BYTES);
        assert_eq!(stemming.stem(&at_bound), &at_bound[..61]);
        // One more byte and the word is its own term, with or without the memory, which keeps
        // nothing of it.
        let past = format!("{at_bound}s");
        assert_eq!(stemming.stem(&past), past);
        {
            let mut stems = stemming.remembering();
            assert_eq!(stems.stem(&past), past);
            assert_eq!(stems.stem(&at_bound), &at_bound[..61]);
        }
        assert_eq!(stemming.remembered(), 1);
        let crafted = "ay".repeat(15_000);
        assert_eq!(stemming.stem(&crafted), crafted);
    }

    /// Every word of up to three syllables from a few dozen, and common English words, each
    /// followed by every letter, a few suffixes and a few non-letters.
    fn vocabulary() -> Vec<String> {
        const SYLLABLES: [&str; 14] = [
            "ka", "lo", "mer", "ti", "vu", "ap", "ox", "qui", "ab", "ney", "sh", "ow", "ee", "iz",
        ];
        const ENGLISH: [&str; 24] = [
            "crypto", "weather", "gently", "sky", "news", "yes", "happy", "agree", "proceed",
            "running", "nation", "rational", "hopeful", "easily", "flying", "atlas", "inning",
            "generous", "communal", "arsenal", "dying", "cosmos", "café", "東京",
        ];
        let mut stems: Vec<String> = ENGLISH.map(String::from).to_vec();
        let mut longer: Vec<String> = SYLLABLES.map(String::from).to_vec();
        for _ in 0..2 {
            longer = longer
                .iter()
                .flat_map(|word| SYLLABLES.map(|syllable| format!("{word}{syllable}")))
                .collect();
            stems.extend_from_slice(&longer);
        }
        let mut endings: Vec<String> = ('a'..='z').map(String::from).collect();
        endings.extend(
            [
                "", "'", "'s", "ed", "ing", "ly", "ement", "alism", "iviti", "enci", "ation", "ic",
                "al", "ness", "2", "_v2", "3.14", "é", "ß", "Y", "-",
            ]
            .map(String::from),
        );
        let mut words = Vec::new();
        for stem in &stems {
            for ending in &endings {
                for head in ["", "'", "Y", "x_"] {
                    words.push(format!("{head}{stem}{ending}"));
                }
            }
        }
        words
    }

    #[test]
    fn words_known_to_be_their_own_stem_are() {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut own = 0;
        for word in vocabulary() {
            if is_own_stem(&word) {
                assert_eq!(stemmer.stem(&word), word.as_str(), "{word:?}");
                own += 1;
            }
        }
        assert!(own > 10_000, "{own}");
        for stemmed in ["runs", "ran'", "'2s", "running's", "2Y2", "happy", "agreed"] {
            assert!(!is_own_stem(stemmed), "{stemmed:?}");
        }
    }
}
