//! Turning body bytes into text: the byte order mark first, then the charset the server
//! declared, then an HTML page's own `<meta charset>`, then a guess from the bytes. A declared
//! charset that the bytes contradict (invalid sequences) gives way to the guess, and the result
//! says so.
//!
//! A body cut at the byte limit may end inside a character (half a UTF-16 code unit, half a
//! surrogate pair, the first bytes of a UTF-8 or Shift_JIS sequence). That unfinished character
//! is dropped once the charset is known: read as an error, it would add a U+FFFD or make the
//! declared charset "not fit" and the whole page be decoded in a guessed one.

use encoding_rs::{CoderResult, DecoderResult, Encoding, UTF_8};

/// Where the charset used came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CharsetSource {
    ByteOrderMark,
    Header,
    Meta,
    Detected,
}

impl CharsetSource {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CharsetSource::ByteOrderMark => "byte_order_mark",
            CharsetSource::Header => "header",
            CharsetSource::Meta => "meta",
            CharsetSource::Detected => "detected",
        }
    }
}

/// Decoded text and how it was decoded.
pub(crate) struct Decoded {
    pub text: String,
    pub charset: &'static str,
    pub source: CharsetSource,
    /// Set when the declared charset was unknown or did not fit the bytes.
    pub note: Option<String>,
}

/// Decodes `bytes`, declared as `declared` (the Content-Type `charset`), as HTML when `html`;
/// `cut` says the body was cut at the byte limit, so it may end inside a character.
pub(crate) fn decode(mut bytes: Vec<u8>, declared: Option<&str>, html: bool, cut: bool) -> Decoded {
    if let Some((encoding, bom_length)) = Encoding::for_bom(&bytes) {
        let text = decode_lossy(encoding, &bytes[bom_length..], cut);
        return Decoded {
            text,
            charset: encoding.name(),
            source: CharsetSource::ByteOrderMark,
            note: None,
        };
    }
    let mut note = None;
    let mut claimed = None;
    if let Some(label) = declared {
        match Encoding::for_label(label.trim().as_bytes()) {
            Some(encoding) => claimed = Some((encoding, CharsetSource::Header)),
            None => note = Some(format!("declared charset `{label}` is unknown")),
        }
    }
    if claimed.is_none() && html {
        claimed = meta_charset(&bytes).map(|encoding| (encoding, CharsetSource::Meta));
    }
    if let Some((encoding, source)) = claimed {
        // A page served as UTF-16 but declaring it in ASCII meta is a contradiction; HTML's rule.
        let encoding = if source == CharsetSource::Meta {
            encoding.output_encoding()
        } else {
            encoding
        };
        if encoding == UTF_8 && cut {
            drop_cut_utf8(&mut bytes);
        }
        if let Some(text) = decode_clean(encoding, bytes.as_slice(), cut) {
            return Decoded {
                text: text.into_owned_or(bytes),
                charset: encoding.name(),
                source,
                note,
            };
        }
        note = Some(format!(
            "declared charset {} does not fit the bytes; decoded as detected instead",
            encoding.name()
        ));
    }
    if cut {
        // Left there, a cut UTF-8 character would make the guess miss UTF-8.
        drop_cut_utf8(&mut bytes);
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(&bytes, true);
    let guess = detector.guess(None, chardetng::Utf8Detection::Allow);
    let text = match guess == UTF_8 {
        true => String::from_utf8(bytes)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()),
        false => decode_lossy(guess, &bytes, cut),
    };
    Decoded {
        text,
        charset: guess.name(),
        source: CharsetSource::Detected,
        note,
    }
}

/// Text decoded without a single malformed sequence, or `None`. When `cut`, an unfinished
/// character at the end is dropped rather than counted as malformed (UTF-8 is trimmed by the
/// caller, so that the valid buffer can be kept as it is).
fn decode_clean(encoding: &'static Encoding, bytes: &[u8], cut: bool) -> Option<Clean> {
    if encoding == UTF_8 {
        return std::str::from_utf8(bytes).ok().map(|_| Clean::Utf8);
    }
    if !cut {
        return encoding
            .decode_without_bom_handling_and_without_replacement(bytes)
            .map(|text| Clean::Other(text.into_owned()));
    }
    // Not the last input: the decoder keeps an unfinished character pending instead of
    // reporting it, and the pending bytes are then dropped with the decoder.
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut text = String::new();
    let mut rest = bytes;
    loop {
        let room = decoder
            .max_utf8_buffer_length_without_replacement(rest.len())
            .unwrap_or(rest.len().saturating_mul(3));
        text.reserve(room);
        let (result, read) = decoder.decode_to_string_without_replacement(rest, &mut text, false);
        rest = &rest[read..];
        match result {
            DecoderResult::InputEmpty => return Some(Clean::Other(text)),
            DecoderResult::Malformed(..) => return None,
            DecoderResult::OutputFull => {}
        }
    }
}

/// Text decoded with U+FFFD for malformed sequences; when `cut`, an unfinished character at the
/// end is dropped instead.
fn decode_lossy(encoding: &'static Encoding, bytes: &[u8], cut: bool) -> String {
    if !cut {
        return encoding.decode_without_bom_handling(bytes).0.into_owned();
    }
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut text = String::new();
    let mut rest = bytes;
    loop {
        let room = decoder
            .max_utf8_buffer_length(rest.len())
            .unwrap_or(rest.len().saturating_mul(3));
        text.reserve(room);
        let (result, read, _) = decoder.decode_to_string(rest, &mut text, false);
        rest = &rest[read..];
        if result == CoderResult::InputEmpty {
            return text;
        }
    }
}

/// Drops the start of a UTF-8 character that the byte limit cut, when everything before it is
/// UTF-8.
fn drop_cut_utf8(bytes: &mut Vec<u8>) {
    if let Err(error) = std::str::from_utf8(bytes)
        && error.error_len().is_none()
    {
        bytes.truncate(error.valid_up_to());
    }
}

/// Valid UTF-8 keeps its buffer (no copy of a large page); other charsets are converted.
enum Clean {
    Utf8,
    Other(String),
}

impl Clean {
    fn into_owned_or(self, bytes: Vec<u8>) -> String {
        match self {
            Clean::Utf8 => String::from_utf8(bytes).expect("checked as UTF-8 just before"),
            Clean::Other(text) => text,
        }
    }
}

/// The charset an HTML page names in a `<meta>` within its first 1024 bytes (HTML's prescan
/// window): `<meta charset="…">` or `<meta http-equiv="Content-Type" content="…; charset=…">`.
fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(1024)];
    let lower = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = find(&lower[from..], b"<meta") {
        let start = from + at;
        let end = find(&lower[start..], b">").map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(pos) = find(tag, b"charset=") {
            let value = &tag[pos + b"charset=".len()..];
            let value: Vec<u8> = value
                .iter()
                .copied()
                .skip_while(|b| *b == b'"' || *b == b'\'' || b.is_ascii_whitespace())
                .take_while(|b| {
                    !matches!(b, b'"' | b'\'' | b';' | b'/' | b'>') && !b.is_ascii_whitespace()
                })
                .collect();
            if let Some(encoding) = Encoding::for_label(&value) {
                return Some(encoding);
            }
        }
        from = end;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_charset_decodes_when_it_fits() {
        let decoded = decode(b"caf\xe9".to_vec(), Some("iso-8859-1"), false, false);
        assert_eq!(decoded.text, "café");
        assert_eq!(decoded.source, CharsetSource::Header);
        assert_eq!(decoded.charset, "windows-1252");
    }

    #[test]
    fn a_meta_charset_is_read_when_the_header_is_silent() {
        let page = b"<html><head><meta charset='windows-1251'></head><body>\xcf\xf0\xe8\xe2\xe5\xf2</body>";
        let decoded = decode(page.to_vec(), None, true, false);
        assert_eq!(decoded.source, CharsetSource::Meta);
        assert!(decoded.text.contains("Привет"), "{}", decoded.text);
    }

    #[test]
    fn a_wrong_declared_charset_gives_way_to_detection_and_says_so() {
        let text = "Ceci est un texte en français, très long, écrit à la main, déjà lu à côté.";
        let (latin1, _, _) = encoding_rs::WINDOWS_1252.encode(text);
        let decoded = decode(latin1.into_owned(), Some("utf-8"), false, false);
        assert_eq!(decoded.text, text);
        assert_eq!(decoded.source, CharsetSource::Detected);
        assert!(decoded.note.unwrap().contains("UTF-8"));
    }

    #[test]
    fn an_unknown_label_is_noted_and_detection_decides() {
        let decoded = decode(
            "plain ascii".as_bytes().to_vec(),
            Some("klingon-8"),
            false,
            false,
        );
        assert_eq!(decoded.text, "plain ascii");
        assert!(decoded.note.unwrap().contains("klingon-8"));
    }

    #[test]
    fn a_byte_order_mark_wins() {
        let decoded = decode(
            b"\xef\xbb\xbfhello".to_vec(),
            Some("windows-1252"),
            false,
            false,
        );
        assert_eq!(
            (decoded.text.as_str(), decoded.source),
            ("hello", CharsetSource::ByteOrderMark)
        );
    }
}
