//! Text in scripts written without spaces between words (Chinese, Japanese, Korean, Thai, Lao,
//! Khmer, Myanmar), read as single characters and overlapping pairs of characters.
//!
//! The Unicode word-boundary rules cannot find words in such text without a dictionary: they
//! cut Han and kana into single characters, keep a Korean word together with its particles
//! ("날씨를", weather as an object) and cut Thai into letters. Single characters match too much
//! (two texts on unrelated tasks share a few), whole Korean words too little. Overlapping
//! pairs (bigrams) are the usual answer that needs no dictionary: "天气预报" gives "天气",
//! "气预" and "预报", and a text holding the same words holds the same pairs, so word order and
//! particles do not matter while scattered characters no longer rank high.
//!
//! Each character is kept as well, so a one-character query ("雨") still finds a text holding
//! that character inside a longer run. Pairs are rarer than characters, so where they match
//! they weigh more in the ranking than the characters do. A "character" is a grapheme cluster:
//! a Thai consonant keeps its vowel and tone marks.

use unicode_script::{Script, UnicodeScript};
use unicode_segmentation::UnicodeSegmentation;

/// The scripts read as characters and pairs.
const UNSPACED: [Script; 8] = [
    Script::Han,
    Script::Hiragana,
    Script::Katakana,
    Script::Hangul,
    Script::Thai,
    Script::Lao,
    Script::Khmer,
    Script::Myanmar,
];

/// True when `c` is written in a script without spaces between words.
pub(crate) fn is_unspaced(c: char) -> bool {
    // Every such script lies above U+0E00: Latin, Greek, Cyrillic and the rest skip the lookup.
    if u32::from(c) < 0x0E00 {
        return false;
    }
    if UNSPACED.contains(&c.script()) {
        return true;
    }
    // A letter shared by several scripts counts when it belongs to these ("ー", the kana length
    // mark); shared punctuation ("。") is part of no word.
    let scripts = c.script_extension();
    c.is_alphanumeric()
        && !(scripts.is_common() || scripts.is_inherited())
        && UNSPACED
            .iter()
            .any(|&script| scripts.contains_script(script))
}

/// Splits a word found by the word-boundary rules into its pieces of unspaced script and its
/// other pieces, in order, calling `each` with the piece's byte offset in `word`, the piece and
/// whether it is unspaced. A piece starts where the first character of a grapheme changes kind.
pub(crate) fn for_each_piece<'w>(word: &'w str, mut each: impl FnMut(usize, &'w str, bool)) {
    let mut start = 0;
    let mut kind = None;
    for (at, grapheme) in word.grapheme_indices(true) {
        let unspaced = grapheme.chars().next().is_some_and(is_unspaced);
        match kind {
            Some(previous) if previous != unspaced => {
                each(start, &word[start..at], previous);
                start = at;
            }
            _ => {}
        }
        kind = Some(unspaced);
    }
    if let Some(unspaced) = kind {
        each(start, &word[start..], unspaced);
    }
}

/// Calls `each` with every character of `run` and every pair of neighbouring characters, in
/// order of their start: the first character, the first pair, the second character, and so on.
pub(crate) fn for_each_gram<'t>(run: &'t str, mut each: impl FnMut(&'t str)) {
    let mut graphemes = run.grapheme_indices(true).peekable();
    while let Some((at, grapheme)) = graphemes.next() {
        each(grapheme);
        if let Some(&(next_at, next)) = graphemes.peek() {
            each(&run[at..next_at + next.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_without_spaces_are_told_apart_from_the_rest() {
        for c in ['天', 'の', 'カ', 'ー', '날', 'ก', 'ກ', 'ក', 'က'] {
            assert!(is_unspaced(c), "{c}");
        }
        for c in ['a', 'é', 'ж', 'ع', '1', '。', '-'] {
            assert!(!is_unspaced(c), "{c}");
        }
    }

    #[test]
    fn a_word_splits_where_the_script_changes() {
        let mut pieces = Vec::new();
        for_each_piece("API키v2", |at, piece, unspaced| {
            pieces.push((at, piece, unspaced))
        });
        assert_eq!(
            pieces,
            [(0, "API", false), (3, "키", true), (6, "v2", false)]
        );
    }

    #[test]
    fn a_run_gives_characters_and_pairs_and_one_character_gives_itself() {
        let mut grams = Vec::new();
        for_each_gram("天气预", |gram| grams.push(gram));
        assert_eq!(grams, ["天", "天气", "气", "气预", "预"]);
        grams.clear();
        for_each_gram("雨", |gram| grams.push(gram));
        assert_eq!(grams, ["雨"]);
    }
}
