//! Finding words: Unicode word boundaries, identifier seams, lowercasing.
//!
//! Words are found with the Unicode word-boundary rules (UAX #29) of the `unicode-segmentation`
//! crate, so accented and non-Latin text splits where a reader would split it. Inside a word,
//! identifier seams (`getWeather`, `read_file`, `mp3`) are found here too.

use unicode_segmentation::UnicodeSegmentation;

/// Calls `each` with every word of `text`, in order, by the Unicode word-boundary rules.
pub(crate) fn for_each_unicode_word<'t>(text: &'t str, each: impl FnMut(&'t str)) {
    text.unicode_words().for_each(each);
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
pub(crate) fn identifier_parts(word: &str) -> impl Iterator<Item = &str> {
    let mut chars = word.char_indices().peekable();
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
}
