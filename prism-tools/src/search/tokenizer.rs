//! [`Tokenizer`]: turns tool text and queries into the words the index matches on.
//!
//! Search quality comes mostly from here, so every step has a reason:
//!
//! - Words are found with the Unicode word-boundary rules (UAX #29), so accented and non-Latin
//!   text splits where a reader would split it, and punctuation never sticks to a word.
//! - Scripts written without spaces between words (Chinese, Japanese, Korean, Thai…) have no
//!   boundaries to find: a run of them yields each character and each overlapping pair of
//!   characters, so "天气预报" meets "天气" and "预报" without a dictionary.
//! - Identifiers are split as well: `getWeather`, `read_file`, `fs.read` and `mp3` also yield
//!   `get` + `weather`, `read` + `file`, `fs` + `read`, `mp` + `3`. The whole word is kept too, so
//!   a query that writes `youtube` still meets a description that writes `YouTube`.
//! - Everything is lowercased, then common English function words ("the", "can", "you"…) are
//!   dropped: they appear in every query and say nothing about which tool is wanted.
//! - Words are reduced to their Snowball stem, so "forecasts", "forecasting" and "forecast" meet.
//!   A word longer than 64 bytes (a token, a URL, no natural word) is kept whole instead: the
//!   stemmer's cost grows faster than a word's length.
//!   Clones of a tokenizer share a bounded memory of the stems they computed (see
//!   [`MAX_MEMO_WORDS`](super::MAX_MEMO_WORDS)), so re-indexing known words costs no stemming.
//! - A query word whose stem no tool uses may still match by a long shared prefix ("crypto" and
//!   "cryptocurrencies"), at a lower weight; the index does that lookup, this switch enables it.
//!
//! The same tokenizer must read both sides (tools and queries); [`ToolIndex`](super::ToolIndex)
//! keeps the one it was built with for that reason.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, LazyLock};

use super::stem_memo::Stemming;
use super::words::{for_each_unicode_word, identifier_parts, lower_into};
use foldhash::fast::RandomState;

/// English function words (the NLTK list), plus the words people use to phrase a request
/// ("could you please help me find…"): they appear in queries whatever the task is, so they only
/// add noise to a ranking of tools.
static ENGLISH_STOP_WORDS: LazyLock<HashSet<&'static str, RandomState>> = LazyLock::new(|| {
    stop_words::get("en")
        .iter()
        .chain(REQUEST_WORDS)
        .copied()
        .collect()
});

/// Words that phrase a request rather than name a task.
const REQUEST_WORDS: &[&str] = &[
    "also", "could", "find", "get", "give", "hey", "hi", "help", "know", "let", "like", "make",
    "may", "might", "must", "need", "please", "provide", "show", "tell", "thank", "thanks", "use",
    "using", "want", "would",
];

/// Splits text into lowercase search words, drops stop words and stems what remains.
///
/// ```
/// use prism::search::Tokenizer;
///
/// let tokenizer = Tokenizer::english();
/// let mut words = Vec::new();
/// tokenizer.for_each_word("Show the weatherForecast for Zürich", |word| words.push(word.to_owned()));
/// // "show", "the" and "for" say nothing about the task.
/// assert_eq!(words, ["weatherforecast", "weather", "forecast", "zürich"]);
/// assert_eq!(tokenizer.stem("forecasts"), "forecast");
///
/// let plain = Tokenizer::plain();
/// let mut words = Vec::new();
/// plain.for_each_word("Show the weatherForecast", |word| words.push(word.to_owned()));
/// assert_eq!(words, ["show", "the", "weatherforecast"]);
/// assert_eq!(plain.stem("forecasts"), "forecasts");
/// ```
#[derive(Clone)]
pub struct Tokenizer {
    stemmer: Option<Arc<Stemming>>,
    stop_words: bool,
    split_identifiers: bool,
    prefixes: bool,
}

impl Tokenizer {
    /// The default: identifier splitting, English stop words, English Snowball stemming and
    /// prefix matching.
    pub fn english() -> Self {
        Self {
            stemmer: Some(Arc::new(Stemming::english())),
            stop_words: true,
            split_identifiers: true,
            prefixes: true,
        }
    }

    /// Lowercased Unicode words and nothing else: no identifier splitting, no stop words, no
    /// stemming, no prefix matching. The baseline that the default is measured against.
    pub fn plain() -> Self {
        Self {
            stemmer: None,
            stop_words: false,
            split_identifiers: false,
            prefixes: false,
        }
    }

    /// Turns stemming on or off.
    pub fn with_stemming(mut self, stemming: bool) -> Self {
        self.stemmer = stemming.then(|| Arc::new(Stemming::english()));
        self
    }

    /// Turns stop-word removal on or off.
    pub fn with_stop_words(mut self, stop_words: bool) -> Self {
        self.stop_words = stop_words;
        self
    }

    /// Turns identifier splitting (`snake_case`, `camelCase`, dots, digits) on or off.
    pub fn with_identifier_splitting(mut self, split: bool) -> Self {
        self.split_identifiers = split;
        self
    }

    /// Turns prefix matching on or off: a query word whose stem no tool uses then also matches
    /// the indexed terms it shares a long prefix with (see
    /// [`ToolIndex::query`](super::ToolIndex::query)).
    pub fn with_prefix_matching(mut self, prefixes: bool) -> Self {
        self.prefixes = prefixes;
        self
    }

    /// True when prefix matching is on.
    pub fn matches_prefixes(&self) -> bool {
        self.prefixes
    }

    /// Calls `emit` with every lowercase word of `text` that is not a stop word, in order, before
    /// stemming. A split identifier emits the whole word first, then its parts.
    pub fn for_each_word(&self, text: &str, mut emit: impl FnMut(&str)) {
        self.for_each_lowered(text, &mut String::new(), |word| {
            if !self.is_stop_word(word) {
                emit(word);
            }
        });
    }

    /// Like [`for_each_word`](Self::for_each_word) but keeps stop words, for a caller that
    /// remembers which words are stop words (the index does, once per distinct word). `lowered`
    /// is scratch space, passed in so that a caller reading many texts allocates it once.
    pub(crate) fn for_each_lowered(
        &self,
        text: &str,
        lowered: &mut String,
        mut emit: impl FnMut(&str),
    ) {
        for_each_unicode_word(text, |word, plain| {
            // Most words are plain lowercase letters: nothing to lowercase or split.
            if plain {
                emit(word);
                return;
            }
            lower_into(word, lowered);
            emit(lowered);
            if !self.split_identifiers {
                return;
            }
            let mut parts = identifier_parts(word).peekable();
            let first = parts.next();
            // A word that is a single part was emitted whole already.
            if let (Some(first), Some(_)) = (first, parts.peek()) {
                for part in std::iter::once(first).chain(parts) {
                    lower_into(part, lowered);
                    emit(lowered);
                }
            }
        });
    }

    /// The stem of a lowercase word (the word itself when stemming is off or when the word is
    /// longer than 64 bytes).
    pub fn stem<'a>(&self, word: &'a str) -> Cow<'a, str> {
        match &self.stemmer {
            Some(stemmer) => stemmer.stem(word),
            None => Cow::Borrowed(word),
        }
    }

    /// The stemmer and its memory, when stemming is on.
    pub(crate) fn stemming(&self) -> Option<&Stemming> {
        self.stemmer.as_deref()
    }

    /// True when this tokenizer drops `word` (already lowercase).
    pub fn is_stop_word(&self, word: &str) -> bool {
        self.stop_words && ENGLISH_STOP_WORDS.contains(word)
    }
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self::english()
    }
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokenizer")
            .field("stemming", &self.stemmer.is_some())
            .field(
                "remembered_stems",
                &self
                    .stemmer
                    .as_ref()
                    .map_or(0, |stemming| stemming.remembered()),
            )
            .field("stop_words", &self.stop_words)
            .field("split_identifiers", &self.split_identifiers)
            .field("prefixes", &self.prefixes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(tokenizer: &Tokenizer, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokenizer.for_each_word(text, |word| out.push(word.to_owned()));
        out
    }

    #[test]
    fn whole_word_comes_before_its_parts_and_stop_parts_are_dropped() {
        let tokenizer = Tokenizer::english();
        assert_eq!(
            words(&tokenizer, "YouTube read_file"),
            ["youtube", "tube", "read_file", "read", "file"]
        );
    }

    #[test]
    fn non_latin_text_splits_into_words() {
        let tokenizer = Tokenizer::english();
        assert_eq!(
            words(&tokenizer, "Prévisions météo — Москва, 東京"),
            ["prévisions", "météo", "москва", "東", "東京", "京"]
        );
    }

    #[test]
    fn unspaced_scripts_give_characters_and_overlapping_pairs() {
        let tokenizer = Tokenizer::english();
        // Han and kana run on across the word boundaries the Unicode rules put between them.
        assert_eq!(
            words(&tokenizer, "東京の天気"),
            ["東", "東京", "京", "京の", "の", "の天", "天", "天気", "気"]
        );
        // A space ends a run; a Korean word is split into its syllables and their pairs.
        assert_eq!(
            words(&tokenizer, "날씨를 봐"),
            ["날", "날씨", "씨", "씨를", "를", "봐"]
        );
        // Thai vowel and tone marks stay with their consonant.
        assert_eq!(
            words(&tokenizer, "ค้นหา"),
            ["ค\u{e49}", "ค\u{e49}น", "น", "นห", "ห", "หา", "า"]
        );
        // Latin letters inside a word are a word of their own, lowercased and split as usual.
        assert_eq!(
            words(&tokenizer, "API키 readFile云盘"),
            ["api", "키", "readfile", "read", "file", "云", "云盘", "盘"]
        );
    }

    #[test]
    fn switches_turn_each_step_off() {
        let tokenizer = Tokenizer::english()
            .with_stop_words(false)
            .with_identifier_splitting(false)
            .with_stemming(false);
        assert_eq!(words(&tokenizer, "the readFile"), ["the", "readfile"]);
        assert_eq!(tokenizer.stem("running"), "running");
        assert_eq!(Tokenizer::english().stem("running"), "run");
    }
}
