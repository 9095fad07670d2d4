//! [`SecretRedactor`]: keeps known secret values out of everything the dispatcher emits.
//!
//! All secrets are compiled into one Aho-Corasick automaton, so redacting a string costs one pass
//! whatever the number of secrets. Overlapping secrets redact the longest match. Redaction returns
//! borrowed data when nothing matched, so the common case allocates nothing.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use serde_json::Value;

use crate::call::ToolOutcome;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Replaces known secret values with [`REDACTED`].
///
/// A secret is also found in the escaped forms messages write it in: as a JSON pointer segment
/// (`a/b` as `a~1b`), inside a JSON string and through Rust's `{:?}` (`"` as `\"`, a zero-width
/// joiner as `\u{200d}`).
///
/// ```
/// use prism_tools::SecretRedactor;
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
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .filter(|secret| !secret.as_ref().is_empty())
            .flat_map(|secret| written_forms(secret.as_ref()))
            .collect();
        secrets.sort_unstable();
        secrets.dedup();
        if secrets.is_empty() {
            return Self::default();
        }
        let count = secrets.len();
        let shortest = secrets.iter().map(String::len).min().unwrap_or(0);
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&secrets)
            .ok()
            .map(Arc::new);
        Self {
            automaton,
            count,
            shortest,
        }
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
                if self.may_hold_secret(text) && automaton.is_match(text) {
                    let replacements = vec![REDACTED; self.count];
                    Cow::Owned(automaton.replace_all(text, &replacements))
                } else {
                    Cow::Borrowed(text)
                }
            }
            None => Cow::Owned(REDACTED.to_owned()),
        }
    }

    /// `value` with every secret replaced in its strings and keys.
    pub fn redact_value<'a>(&self, value: &'a Value) -> Cow<'a, Value> {
        if self.count == 0 || !self.value_has_secret(value) {
            return Cow::Borrowed(value);
        }
        Cow::Owned(self.redact_owned(value))
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

    /// Redacts an outcome's value or error message in place.
    pub(crate) fn redact_outcome(&self, outcome: &mut ToolOutcome) {
        match outcome {
            ToolOutcome::Value(value) => self.redact_value_in_place(value),
            ToolOutcome::Blocked(error) | ToolOutcome::Error(error) => {
                self.redact_string(&mut error.message)
            }
        }
    }

    /// Redacts `text` in place.
    pub fn redact_string(&self, text: &mut String) {
        if let Cow::Owned(redacted) = self.redact_str(text) {
            *text = redacted;
        }
    }

    fn value_has_secret(&self, value: &Value) -> bool {
        let Some(automaton) = &self.automaton else {
            return true;
        };
        let text_has_secret = |text: &str| self.may_hold_secret(text) && automaton.is_match(text);
        // Strings and other scalars are looked at in place; only containers recurse.
        let item_has_secret = |item: &Value| match item {
            Value::String(text) => text_has_secret(text),
            Value::Array(_) | Value::Object(_) => self.value_has_secret(item),
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        };
        match value {
            Value::String(text) => text_has_secret(text),
            Value::Array(items) => items.iter().any(item_has_secret),
            Value::Object(map) => map
                .iter()
                .any(|(key, item)| text_has_secret(key) || item_has_secret(item)),
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }

    fn may_hold_secret(&self, text: &str) -> bool {
        text.len() >= self.shortest
    }

    fn redact_owned(&self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.redact_str(text).into_owned()),
            Value::Array(items) => {
                Value::Array(items.iter().map(|item| self.redact_owned(item)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, item)| (self.redact_str(key).into_owned(), self.redact_owned(item)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
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

/// Every form in which a message may write `secret`, so that each is redacted: as is, as a JSON
/// pointer segment (`~` as `~0`, `/` as `~1`), inside a JSON string, and through Rust's `{:?}`
/// (which escapes quotes, backslashes, invisible and combining characters), the last two also
/// applied to the pointer form. Each escape works character by character, so a secret escaped
/// inside a longer text reads the same as escaped alone.
fn written_forms(secret: &str) -> [String; 6] {
    let pointer = secret.replace('~', "~0").replace('/', "~1");
    let json = |text: &str| {
        let quoted = Value::from(text).to_string();
        quoted[1..quoted.len() - 1].to_owned()
    };
    let debug = |text: &str| {
        let quoted = format!("{text:?}");
        quoted[1..quoted.len() - 1].to_owned()
    };
    [
        secret.to_owned(),
        json(secret),
        debug(secret),
        json(&pointer),
        debug(&pointer),
        pointer,
    ]
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
    fn truncation_respects_char_boundaries() {
        let mut text = "ééé".to_owned();
        truncate_at_char_boundary(&mut text, 3);
        assert_eq!(text, "é");
    }
}
