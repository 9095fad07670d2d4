//! [`SecretRedactor`]: keeps known secret values out of everything the dispatcher emits.
//!
//! All secrets are compiled into one Aho-Corasick automaton, so redacting a string costs one pass
//! whatever the number of secrets. Overlapping secrets are redacted as the union of their matches:
//! every match is found, overlapping matches merge, and each merged span is replaced once, so no
//! part of any secret survives. Redaction returns borrowed data when nothing matched, so the
//! common case allocates nothing. JSON values are walked with an explicit stack (allocated only when
//! containers nest), so however deep a value nests, redacting it cannot overflow the thread's stack.
//!
//! # What it does not cover
//!
//! The redactor matches the exact bytes of each secret. It does not find a secret written in
//! another form: another letter case, another Unicode normalisation (NFC against NFD, full-width
//! letters), an encoding (base64, percent-encoding, hex), or a secret split across two strings.
//! Register each form a tool may emit as its own secret.
//!
//! In content blocks the redactor searches text: text blocks, an embedded resource's text and
//! URI, every field of a resource link (URI, name, description), and every media type. It never
//! searches base64 data (an image's or audio's `data`, an embedded resource's `blob`): a secret
//! would be there only in an encoded form it cannot match, and replacing bytes inside base64
//! would corrupt the data.
//!
//! A JSON number is text too: one whose digits hold a secret (a card number or a PIN a tool
//! returns as a number) becomes a string with the secret replaced. Numbers are only looked at when
//! some secret is made of the characters a number is written with.
//!
//! Digests are not redacted either. Effect keys are by default an unsalted SHA-256 of the tool
//! name and the canonical arguments; when the arguments hold little entropy (a PIN, an account
//! number, a yes/no), a reader of the effect store can hash every candidate and recover them.
//! A host that keeps such arguments from store readers gives the dispatcher an
//! [`EffectKeySecret`](crate::EffectKeySecret), which makes effect keys an HMAC-SHA-256 under a
//! key the store never sees.

#[cfg(any(feature = "http", feature = "web", feature = "mcp"))]
mod shown_url;
mod value_walk;
mod written_forms;

#[cfg(any(feature = "http", feature = "web", feature = "mcp"))]
pub(crate) use shown_url::shown_url;

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, Input, MatchKind};
use serde_json::Value;

use crate::call::{ContentBlock, ContentRecord, ErrorCode, ErrorInfo, ToolOutcome};

use self::written_forms::written_forms;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Replaces known secret values with [`REDACTED`].
///
/// A secret is also found in the escaped forms messages write it in: as a JSON pointer segment
/// (`a/b` as `a~1b`), inside a JSON string and through Rust's `{:?}` (`"` as `\"`, a zero-width
/// joiner as `\u{200d}`).
///
/// ```
/// use prism::dispatch::SecretRedactor;
///
/// let redactor = SecretRedactor::new(["sk-live-123"]);
/// assert_eq!(redactor.redact_str("key sk-live-123 leaked"), "key [REDACTED] leaked");
/// ```
#[derive(Clone, Default)]
pub struct SecretRedactor {
    automaton: Option<Arc<AhoCorasick>>,
    count: usize,
    /// The length of the shortest secret: a shorter text cannot hold one, so it is never
    /// searched (most keys and many values of tool arguments are that short).
    shortest: usize,
    /// Whether a secret could be written inside a JSON number (all its characters are digits,
    /// signs, points or exponents): only then are numbers searched.
    numeric: bool,
    /// The secrets as given, so [`with_secrets`](Self::with_secrets) can add to them.
    given: Arc<[String]>,
}

impl SecretRedactor {
    /// A redactor for these secrets; empty strings are ignored.
    ///
    /// If the automaton cannot be built (secrets far beyond any realistic size), every string is
    /// redacted whole rather than letting a secret through.
    pub fn new<I, S>(secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let given: Arc<[String]> = secrets
            .into_iter()
            .filter(|secret| !secret.as_ref().is_empty())
            .map(|secret| secret.as_ref().to_owned())
            .collect();
        let mut secrets: Vec<String> = given
            .iter()
            .flat_map(|secret| written_forms(secret))
            .collect();
        secrets.sort_unstable();
        secrets.dedup();
        if secrets.is_empty() {
            return Self::default();
        }
        let count = secrets.len();
        let shortest = secrets.iter().map(String::len).min().unwrap_or(0);
        let numeric = secrets.iter().any(|secret| {
            secret
                .bytes()
                .all(|byte| byte.is_ascii_digit() || b".eE+-".contains(&byte))
        });
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&secrets)
            .ok()
            .map(Arc::new);
        Self {
            automaton,
            count,
            shortest,
            numeric,
            given,
        }
    }

    /// A redactor for these secrets and `more`.
    ///
    /// ```
    /// use prism::dispatch::SecretRedactor;
    ///
    /// let redactor = SecretRedactor::new(["sk-live-123"]).with_secrets(["tok-9"]);
    /// assert_eq!(redactor.redact_str("sk-live-123 tok-9"), "[REDACTED] [REDACTED]");
    /// ```
    pub fn with_secrets<I, S>(&self, more: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let more: Vec<String> = more.into_iter().map(|s| s.as_ref().to_owned()).collect();
        Self::new(self.given.iter().chain(&more))
    }

    /// A redactor of this one's secrets and `other`'s, which redacts overlapping secrets of the
    /// two as one (two redactors one after the other could leave part of one behind).
    pub(crate) fn union(&self, other: &SecretRedactor) -> SecretRedactor {
        if other.is_empty() {
            self.clone()
        } else if self.is_empty() {
            other.clone()
        } else {
            Self::new(self.given.iter().chain(other.given.iter()))
        }
    }

    /// True when `secret` is one of the secrets given (empty strings are never secrets).
    pub(crate) fn knows(&self, secret: &str) -> bool {
        secret.is_empty() || self.given.iter().any(|given| given == secret)
    }

    /// True when every secret of `other` is one of this one's.
    #[cfg(feature = "mcp")]
    pub(crate) fn covers(&self, other: &SecretRedactor) -> bool {
        other.given.iter().all(|secret| self.knows(secret))
    }

    /// True when there are no secrets.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// `text` with every secret replaced.
    pub fn redact_str<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.count == 0 {
            return Cow::Borrowed(text);
        }
        match &self.automaton {
            Some(automaton) => {
                if self.text_has_secret(automaton, text) {
                    Cow::Owned(replace_matches(automaton, text))
                } else {
                    Cow::Borrowed(text)
                }
            }
            None => Cow::Owned(REDACTED.to_owned()),
        }
    }

    /// `text` with every secret replaced and, when it ends with the beginning of a secret (at
    /// least [`CUT_SECRET_BYTES`] bytes of it, in any form [`redact_str`](Self::redact_str)
    /// finds), that beginning replaced too: for text someone else already cut to a bound (a
    /// library quoting the first bytes of what it was answered), where the cut may have split a
    /// secret so that no whole one is left to find.
    #[cfg(feature = "mcp")]
    pub(crate) fn redact_cut_str<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let redacted = self.redact_str(text);
        if self.count == 0 || self.automaton.is_none() {
            return redacted;
        }
        let cut = self
            .given
            .iter()
            .flat_map(|secret| written_forms(secret))
            .filter_map(|form| cut_start_at_end(&redacted, &form))
            .max();
        match cut {
            Some(bytes) => {
                let mut kept = redacted.into_owned();
                kept.truncate(kept.len() - bytes);
                kept.push_str(REDACTED);
                Cow::Owned(kept)
            }
            None => redacted,
        }
    }

    /// `value` with every secret replaced in its strings and keys.
    pub fn redact_value<'a>(&self, value: &'a Value) -> Cow<'a, Value> {
        if self.count == 0 || !self.value_has_secret(value) {
            return Cow::Borrowed(value);
        }
        Cow::Owned(self.redacted_copy(value))
    }

    /// `value` with every secret replaced, reusing it untouched when nothing matched.
    pub fn redact_owned_value(&self, value: Value) -> Value {
        match self.redact_value(&value) {
            Cow::Borrowed(_) => value,
            Cow::Owned(clean) => clean,
        }
    }

    /// Redacts `value` in place.
    pub fn redact_value_in_place(&self, value: &mut Value) {
        if let Cow::Owned(clean) = self.redact_value(value) {
            *value = clean;
        }
    }

    /// Redacts an outcome's value, or its error's code and message, in place.
    pub(crate) fn redact_outcome(&self, outcome: &mut ToolOutcome) {
        match outcome {
            ToolOutcome::Value(value) => self.redact_value_in_place(value),
            ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => self.redact_error(error),
        }
    }

    /// Redacts an error's message and, when it is a custom one, its code, in place.
    pub fn redact_error(&self, error: &mut ErrorInfo) {
        self.redact_string(&mut error.message);
        // Only custom codes are text of the host's or a tool's choosing.
        if let ErrorCode::Custom(code) = &error.code
            && let Cow::Owned(redacted) = self.redact_str(code)
        {
            error.code = ErrorCode::Custom(Cow::Owned(redacted));
        }
    }

    /// Redacts the text of content blocks in place: text blocks, embedded resources' text and
    /// URI, resource links' URI, name and description, and every media type. Base64 data is
    /// left as it is (see the module docs).
    ///
    /// ```
    /// use prism::call::ContentBlock;
    /// use prism::dispatch::SecretRedactor;
    ///
    /// let redactor = SecretRedactor::new(["sk-live-123"]);
    /// let mut content = vec![ContentBlock::text("key sk-live-123")];
    /// redactor.redact_content(&mut content);
    /// assert_eq!(content[0].as_text(), Some("key [REDACTED]"));
    /// ```
    pub fn redact_content(&self, content: &mut [ContentBlock]) {
        self.redact_content_changed(content);
    }

    /// [`redact_content`](Self::redact_content), saying whether it replaced anything.
    pub(crate) fn redact_content_changed(&self, content: &mut [ContentBlock]) -> bool {
        if self.count == 0 {
            return false;
        }
        let mut changed = false;
        for text in content
            .iter_mut()
            .flat_map(|block| block.texts_mut().into_iter().flatten())
        {
            changed |= self.redact_string_changed(text);
        }
        changed
    }

    /// Redacts content records as [`redact_content`](Self::redact_content) redacts blocks.
    pub(crate) fn redact_content_records(&self, records: &mut [ContentRecord]) {
        if self.count == 0 {
            return;
        }
        for text in records
            .iter_mut()
            .flat_map(|record| record.texts_mut().into_iter().flatten())
        {
            self.redact_string(text);
        }
    }

    /// Redacts `text` in place, then cuts it to at most `max_bytes` (on a character boundary):
    /// in that order, so the cut never splits a secret where it could no longer be found.
    #[cfg(feature = "json-schema")]
    pub(crate) fn redact_and_truncate(&self, text: &mut String, max_bytes: usize) {
        self.redact_string(text);
        truncate_at_char_boundary(text, max_bytes);
    }

    /// Redacts `text` in place.
    pub fn redact_string(&self, text: &mut String) {
        self.redact_string_changed(text);
    }

    /// [`redact_string`](Self::redact_string), saying whether it replaced anything.
    fn redact_string_changed(&self, text: &mut String) -> bool {
        match self.redact_str(text) {
            Cow::Owned(redacted) => {
                *text = redacted;
                true
            }
            Cow::Borrowed(_) => false,
        }
    }

    fn text_has_secret(&self, automaton: &AhoCorasick, text: &str) -> bool {
        text.len() >= self.shortest && automaton.is_match(text)
    }
}

/// The shortest beginning of a secret [`SecretRedactor::redact_cut_str`] takes out of the end
/// of a text: a shorter one is as likely an ordinary word's end.
#[cfg(feature = "mcp")]
const CUT_SECRET_BYTES: usize = 4;

/// How many bytes at the end of `text` are the beginning of `secret` (at least
/// [`CUT_SECRET_BYTES`], never the whole secret), the longest such beginning; `None` when
/// `text` ends with none.
#[cfg(feature = "mcp")]
fn cut_start_at_end(text: &str, secret: &str) -> Option<usize> {
    (CUT_SECRET_BYTES..secret.len())
        .rev()
        .find(|&bytes| secret.is_char_boundary(bytes) && text.ends_with(&secret[..bytes]))
}

/// `text` with every match of `automaton` replaced: overlapping matches are merged and each merged
/// span is replaced once.
fn replace_matches(automaton: &AhoCorasick, text: &str) -> String {
    let mut redacted = String::with_capacity(text.len());
    // `text[..done]` has been written out or replaced.
    let mut done = 0;
    // A leftmost-longest search skips the matches that begin inside an earlier one, so each search
    // starts one byte past the last match's start: every start gets its longest match, and those
    // cover every match. (Standard semantics would report overlaps directly, but its `is_match`
    // runs an order of magnitude slower on text holding no secret, the common case.)
    let mut from = 0;
    loop {
        let found = match automaton.try_find(Input::new(text).range(from..)) {
            Ok(Some(found)) => found,
            Ok(None) => break,
            Err(_) => return REDACTED.to_owned(),
        };
        if found.start() >= done {
            redacted.push_str(&text[done..found.start()]);
            redacted.push_str(REDACTED);
        }
        done = done.max(found.end());
        from = found.start() + 1;
    }
    redacted.push_str(&text[done..]);
    redacted
}

impl fmt::Debug for SecretRedactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secrets themselves.
        f.debug_struct("SecretRedactor")
            .field("secrets", &self.count)
            .finish()
    }
}

/// Cuts `text` to at most `max_bytes`, at a character boundary.
pub fn truncate_at_char_boundary(text: &mut String, max_bytes: usize) {
    if text.len() > max_bytes {
        let cut = text.floor_char_boundary(max_bytes);
        text.truncate(cut);
    }
}

/// Ends a text [`cut_marked`] cut.
pub(crate) const CUT_MARKER: &str = "… [cut]";

/// Cuts `text` to at most `max_bytes` at a character boundary and, when it was longer, ends it
/// with [`CUT_MARKER`]. Redact first: a secret the cut runs through is then no longer found.
pub(crate) fn cut_marked(text: &mut String, max_bytes: usize) {
    if text.len() > max_bytes {
        truncate_at_char_boundary(text, max_bytes);
        text.push_str(CUT_MARKER);
    }
}

/// [`cut_marked`] on borrowed text: borrowed when it is within `max_bytes`, else a copy of only
/// the part kept, so a huge text is never copied whole to be cut.
pub(crate) fn cut_marked_str(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let mut kept = text[..text.floor_char_boundary(max_bytes)].to_owned();
    kept.push_str(CUT_MARKER);
    Cow::Owned(kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn longest_overlapping_secret_wins() {
        let redactor = SecretRedactor::new(["abc", "abcdef"]);
        assert_eq!(redactor.redact_str("xabcdefx"), "x[REDACTED]x");
    }

    #[test]
    fn values_are_borrowed_when_clean_and_scrubbed_when_not() {
        let redactor = SecretRedactor::new(["hunter2"]);
        let clean = json!({"a": [1, "b"]});
        assert!(matches!(redactor.redact_value(&clean), Cow::Borrowed(_)));
        let dirty = json!({"hunter2": ["pw=hunter2"]});
        assert_eq!(
            redactor.redact_value(&dirty).into_owned(),
            json!({"[REDACTED]": ["pw=[REDACTED]"]})
        );
    }

    #[test]
    fn overlapping_secrets_are_redacted_as_the_union_of_their_matches() {
        let redactor = SecretRedactor::new(["overlap-ABCDEF-123456", "ABCDEF-123456-overlap-tail"]);
        assert_eq!(
            redactor.redact_str("<overlap-ABCDEF-123456-overlap-tail>"),
            "<[REDACTED]>"
        );
        let chained = SecretRedactor::new(["ab", "bcdefg", "fghi"]);
        assert_eq!(
            chained.redact_str("xabcdefghix ab"),
            "x[REDACTED]x [REDACTED]"
        );
        // A secret inside a longer one, and secrets that only touch, are each replaced once.
        let nested = SecretRedactor::new(["a-secret-b", "secret", "zz"]);
        assert_eq!(
            nested.redact_str("a-secret-bzz secret"),
            "[REDACTED][REDACTED] [REDACTED]"
        );
    }

    #[test]
    #[cfg(feature = "mcp")]
    fn a_secret_cut_at_the_end_of_a_text_is_taken_out() {
        let redactor = SecretRedactor::new(["tok-5e2b8d1f7a9c"]);
        assert_eq!(
            redactor.redact_cut_str("seen: Bearer tok-5e2b8d"),
            "seen: Bearer [REDACTED]"
        );
        assert_eq!(
            redactor.redact_cut_str("tok-5e2b8d1f7a9c and tok-5e"),
            "[REDACTED] and [REDACTED]"
        );
        // Fewer bytes of it than the bound are an ordinary word's end; text without one stays.
        assert_eq!(redactor.redact_cut_str("a tok"), "a tok");
        assert!(matches!(redactor.redact_cut_str("clean"), Cow::Borrowed(_)));
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        let mut text = "ééé".to_owned();
        truncate_at_char_boundary(&mut text, 3);
        assert_eq!(text, "é");
    }
}
