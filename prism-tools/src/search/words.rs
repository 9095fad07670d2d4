//! Finding words: Unicode word boundaries, identifier seams, lowercasing.
//!
//! Words are found with the Unicode word-boundary rules (UAX #29) of the `unicode-segmentation`
//! crate, so accented and non-Latin text splits where a reader would split it; text in scripts
//! written without spaces is read as characters and pairs instead (`unspaced.rs`). Inside a
//! word, identifier seams (`getWeather`, `read_file`, `mp3`) are found here too.
//!
//! Tool text is nearly always ASCII, and finding words is most of the cost of reading it, so
//! ASCII text takes a fast path: one pass over the bytes that applies the same rules (a test
//! checks it against the crate on every short string of the characters that matter) and notes,
//! on the way, whether a word is plain lowercase letters, which then need neither lowercasing
//! nor splitting.

use unicode_segmentation::UnicodeSegmentation;

use super::unspaced::{for_each_gram, for_each_piece, is_unspaced};

/// Calls `each` with every word of `text`, in order, by the Unicode word-boundary rules, and
/// whether the word is plain: it needs neither lowercasing nor splitting (lowercase ASCII
/// letters only, or a character or pair of a script written without spaces).
///
/// A run of such a script is read as its characters and overlapping pairs (see
/// [`unspaced`](super::unspaced)); the run goes on across the boundaries the rules put between
/// Han and kana characters, and ends at anything else, a space included.
pub(crate) fn for_each_unicode_word<'t>(text: &'t str, mut each: impl FnMut(&'t str, bool)) {
    if text.is_ascii() {
        for_each_ascii_word(text, each);
        return;
    }
    // The byte range of the run of unspaced script being read, until something else ends it.
    let mut run: Option<(usize, usize)> = None;
    let end_run = |run: &mut Option<(usize, usize)>, each: &mut dyn FnMut(&'t str, bool)| {
        if let Some((start, end)) = run.take() {
            for_each_gram(&text[start..end], |gram| each(gram, true));
        }
    };
    for (at, word) in text.unicode_word_indices() {
        if !word.chars().any(is_unspaced) {
            end_run(&mut run, &mut each);
            each(word, is_plain(word));
            continue;
        }
        for_each_piece(word, |offset, piece, unspaced| {
            let (start, end) = (at + offset, at + offset + piece.len());
            match &mut run {
                Some((_, run_end)) if unspaced && *run_end == start => *run_end = end,
                _ => {
                    end_run(&mut run, &mut each);
                    if unspaced {
                        run = Some((start, end));
                    } else {
                        each(piece, is_plain(piece));
                    }
                }
            }
        });
    }
    end_run(&mut run, &mut each);
}

/// True when `word` is lowercase ASCII letters only.
fn is_plain(word: &str) -> bool {
    word.bytes().all(|b| b.is_ascii_lowercase())
}

/// Bits of [`ASCII_CLASS`]: what an ASCII byte is to the word rules.
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 4;
/// `_` joins letters and digits into one word (an "ExtendNumLet"), but is not one by itself.
const JOINER: u8 = 8;

/// The class of each ASCII byte; 0 for anything that is not part of a word.
const ASCII_CLASS: [u8; 128] = {
    let mut classes = [0u8; 128];
    let mut byte = 0;
    while byte < 128 {
        classes[byte] = match byte as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            b'_' => JOINER,
            _ => 0,
        };
        byte += 1;
    }
    classes
};

/// [`for_each_unicode_word`] for ASCII text. A word is a run of letters, digits and `_`, which
/// also takes in a `.`, `'` or `:` between two letters ("e.g", "don't") and a `.`, `,`, `;` or
/// `'` between two digits ("1,000", "3.14"); a run without a letter or digit is not a word.
fn for_each_ascii_word<'t>(text: &'t str, mut each: impl FnMut(&'t str, bool)) {
    let bytes = text.as_bytes();
    let class = |at: usize| ASCII_CLASS[usize::from(bytes[at] & 0x7f)];
    let mut at = 0;
    while at < bytes.len() {
        let mut seen = class(at);
        if seen == 0 {
            at += 1;
            continue;
        }
        let start = at;
        at += 1;
        while at < bytes.len() {
            let current = class(at);
            if current != 0 {
                seen |= current;
            } else if at + 1 < bytes.len() && joins(bytes[at - 1], bytes[at], bytes[at + 1]) {
                // A mark is neither a letter nor a digit: it makes the word not plain.
                seen |= JOINER;
            } else {
                break;
            }
            at += 1;
        }
        if seen & (LOWER | UPPER | DIGIT) != 0 {
            each(&text[start..at], seen == LOWER);
        }
    }
}

/// True when `mark` between `before` and `after` keeps them in one word.
fn joins(before: u8, mark: u8, after: u8) -> bool {
    match mark {
        b'.' | b',' | b';' | b'\'' if before.is_ascii_digit() && after.is_ascii_digit() => true,
        b'.' | b':' | b'\'' => before.is_ascii_alphabetic() && after.is_ascii_alphabetic(),
        _ => false,
    }
}

/// Writes `word` lowercased into `buffer`, with a fast path for ASCII.
pub(crate) fn lower_into(word: &str, buffer: &mut String) {
    buffer.clear();
    if word.is_ascii() {
        buffer.push_str(word);
        buffer.make_ascii_lowercase();
    } else {
        buffer.extend(word.chars().flat_map(char::to_lowercase));
    }
}

/// The kind of character, for finding the seams inside an identifier.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Upper,
    Lower,
    Digit,
    Separator,
}

fn class(c: char) -> Class {
    if c.is_uppercase() {
        Class::Upper
    } else if c.is_numeric() {
        Class::Digit
    } else if c.is_alphabetic() {
        Class::Lower
    } else {
        // `_`, `.`, `'` and any other joiner the word rules kept inside a word.
        Class::Separator
    }
}

/// The parts of an identifier-like word: split at separators, at a lowercase-to-uppercase step
/// (`getWeather`), before the last capital of a capital run followed by lowercase (`HTTPServer`
/// gives `HTTP` + `Server`), and between letters and digits.
///
/// The word is read by grapheme, each classed by its first character: a combining accent or a
/// virama is neither a letter nor a digit, and read alone it would cut `re\u{301}sume\u{301}`
/// into `re` + `sume`.
pub(crate) fn identifier_parts(word: &str) -> impl Iterator<Item = &str> {
    // ASCII has no marks: its characters are its graphemes, found without the Unicode rules.
    let mut ascii = word.is_ascii().then(|| word.char_indices());
    let mut graphemes = ascii.is_none().then(|| word.grapheme_indices(true));
    let mut chars = std::iter::from_fn(move || match (&mut ascii, &mut graphemes) {
        (Some(chars), _) => chars.next(),
        (None, Some(graphemes)) => graphemes
            .next()
            .and_then(|(at, grapheme)| Some((at, grapheme.chars().next()?))),
        (None, None) => None,
    })
    .peekable();
    let mut start: Option<usize> = None;
    let mut previous = Class::Separator;
    std::iter::from_fn(move || {
        while let Some((at, c)) = chars.next() {
            let current = class(c);
            let next = chars.peek().map(|&(_, c)| class(c));
            if current == Class::Separator {
                previous = current;
                if let Some(begin) = start.take() {
                    return Some(&word[begin..at]);
                }
                continue;
            }
            let seam = match (previous, current) {
                (Class::Separator, _) => false,
                (Class::Lower, Class::Upper) => true,
                (Class::Upper, Class::Upper) => next == Some(Class::Lower),
                (Class::Digit, Class::Digit) => false,
                (Class::Digit, _) | (_, Class::Digit) => true,
                _ => false,
            };
            previous = current;
            match start {
                Some(begin) if seam => {
                    start = Some(at);
                    return Some(&word[begin..at]);
                }
                Some(_) => {}
                None => start = Some(at),
            }
        }
        start.take().map(|begin| &word[begin..])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The characters that the ASCII word rules treat differently, and one that they don't.
    const ALPHABET: &[u8] = b"aZ7_.,;':\" \r\n-";

    fn unicode_words(text: &str) -> Vec<(&str, bool)> {
        text.unicode_words()
            .map(|word| (word, word.bytes().all(|b| b.is_ascii_lowercase())))
            .collect()
    }

    fn ascii_words(text: &str) -> Vec<(&str, bool)> {
        let mut words = Vec::new();
        for_each_ascii_word(text, |word, plain| words.push((word, plain)));
        words
    }

    #[test]
    fn ascii_fast_path_agrees_with_the_unicode_rules_on_every_short_string() {
        let mut text = Vec::new();
        let mut checked = 0;
        for length in 0..=5u32 {
            for mut number in 0..ALPHABET.len().pow(length) {
                text.clear();
                for _ in 0..length {
                    text.push(ALPHABET[number % ALPHABET.len()]);
                    number /= ALPHABET.len();
                }
                let text = std::str::from_utf8(&text).expect("ASCII");
                assert_eq!(ascii_words(text), unicode_words(text), "{text:?}");
                checked += 1;
            }
        }
        assert!(checked > 100_000);
    }

    #[test]
    fn ascii_fast_path_agrees_with_the_unicode_rules_on_long_text() {
        let text = "Get the 3.14-day forecast (e.g. Lyon's) at 1,000 ft: read_file2, \
                    HTTPServer __init__ mp3; don't stop\r\n_ _9_ a.b.c 1;2;3 x:y ok.";
        assert_eq!(ascii_words(text), unicode_words(text));
        let mut found = Vec::new();
        for_each_unicode_word("Prévisions météo à Zürich", |word, plain| {
            found.push((word, plain))
        });
        assert_eq!(
            found,
            [
                ("Prévisions", false),
                ("météo", false),
                ("à", false),
                ("Zürich", false)
            ]
        );
    }

    fn parts(word: &str) -> Vec<&str> {
        identifier_parts(word).collect()
    }

    #[test]
    fn identifiers_split_at_every_seam() {
        assert_eq!(parts("getWeather"), ["get", "Weather"]);
        assert_eq!(parts("read_file"), ["read", "file"]);
        assert_eq!(parts("fs.read_file2"), ["fs", "read", "file", "2"]);
        assert_eq!(parts("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(parts("ChatOCR"), ["Chat", "OCR"]);
        assert_eq!(parts("mp3"), ["mp", "3"]);
        assert_eq!(parts("__private__"), ["private"]);
        assert_eq!(parts("plain"), ["plain"]);
        assert_eq!(parts("Éclair_Ünïcode"), ["Éclair", "Ünïcode"]);
    }

    #[test]
    fn marks_stay_with_their_letter() {
        // Decomposed accents (as macOS writes file names) and Devanagari's virama are marks
        // that are not letters themselves, but a part never starts or ends at one.
        assert_eq!(parts("re\u{301}sume\u{301}"), ["re\u{301}sume\u{301}"]);
        assert_eq!(
            parts("Re\u{301}sume\u{301}Builder"),
            ["Re\u{301}sume\u{301}", "Builder"]
        );
        assert_eq!(parts("क्षेत्र"), ["क्षेत्र"]);
    }
}
