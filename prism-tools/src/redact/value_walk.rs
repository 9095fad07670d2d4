//! Finding and redacting secrets inside a JSON value without recursion.
//!
//! Strings (and, when a secret could be written in one, numbers) are looked at where they are
//! found; containers wait on an explicit stack (allocated
//! only when they nest), so however deep a value nests, neither the search nor the redacted copy
//! can overflow the thread's stack.

use aho_corasick::AhoCorasick;
use serde_json::{Map, Number, Value};

use super::SecretRedactor;

impl SecretRedactor {
    /// True when a string, key or number anywhere in `value` holds a secret (always, when the
    /// automaton could not be built).
    pub(super) fn value_has_secret(&self, value: &Value) -> bool {
        let Some(automaton) = &self.automaton else {
            return true;
        };
        // Strings are looked at where they are found; containers wait on an explicit stack, so
        // a flat value allocates nothing and a deep one cannot overflow the thread's stack.
        let mut pending: Vec<&Value> = Vec::new();
        let mut next = Some(value);
        while let Some(value) = next.take().or_else(|| pending.pop()) {
            let found = match value {
                Value::String(text) => self.text_has_secret(automaton, text),
                Value::Array(items) => items
                    .iter()
                    .any(|item| self.item_has_secret(automaton, item, &mut pending)),
                Value::Object(map) => map.iter().any(|(key, item)| {
                    self.text_has_secret(automaton, key)
                        || self.item_has_secret(automaton, item, &mut pending)
                }),
                Value::Number(number) => self.number_has_secret(automaton, number),
                Value::Null | Value::Bool(_) => false,
            };
            if found {
                return true;
            }
        }
        false
    }

    /// Whether `item`, a string, holds a secret; a container is left on `pending` instead.
    fn item_has_secret<'v>(
        &self,
        automaton: &AhoCorasick,
        item: &'v Value,
        pending: &mut Vec<&'v Value>,
    ) -> bool {
        match item {
            Value::String(text) => self.text_has_secret(automaton, text),
            Value::Number(number) => self.number_has_secret(automaton, number),
            Value::Array(_) | Value::Object(_) => {
                pending.push(item);
                false
            }
            Value::Null | Value::Bool(_) => false,
        }
    }

    /// Whether `number`, as JSON writes it, holds a secret.
    fn number_has_secret(&self, automaton: &AhoCorasick, number: &Number) -> bool {
        self.numeric && self.text_has_secret(automaton, &number.to_string())
    }

    /// A copy of `value` with every string and key redacted, and every number that holds a secret
    /// turned into its redacted text. Containers being copied wait on an
    /// explicit stack, so a deep value cannot overflow the thread's stack.
    pub(super) fn redacted_copy(&self, value: &Value) -> Value {
        /// A container being copied: what is left of the original, and the copy so far.
        enum Frame<'v> {
            Array(std::slice::Iter<'v, Value>, Vec<Value>),
            /// The last field is the redacted key of the item being copied.
            Object(serde_json::map::Iter<'v>, Map<String, Value>, String),
        }
        let mut stack: Vec<Frame<'_>> = Vec::new();
        let mut next = value;
        loop {
            let mut copied = match next {
                Value::String(text) => Some(Value::String(self.redact_str(text).into_owned())),
                Value::Array(items) => {
                    stack.push(Frame::Array(items.iter(), Vec::with_capacity(items.len())));
                    None
                }
                Value::Object(map) => {
                    stack.push(Frame::Object(map.iter(), Map::new(), String::new()));
                    None
                }
                Value::Number(number) if self.numeric => {
                    Some(match self.redact_str(&number.to_string()) {
                        std::borrow::Cow::Owned(redacted) => Value::String(redacted),
                        std::borrow::Cow::Borrowed(_) => next.clone(),
                    })
                }
                scalar @ (Value::Null | Value::Bool(_) | Value::Number(_)) => Some(scalar.clone()),
            };
            // Hand each finished copy to its container, until one has an item left to copy.
            next = loop {
                let Some(frame) = stack.last_mut() else {
                    // The stack empties only once the root's copy is finished.
                    return copied.unwrap_or_default();
                };
                match frame {
                    Frame::Array(items, copy) => {
                        copy.extend(copied.take());
                        if let Some(item) = items.next() {
                            break item;
                        }
                    }
                    Frame::Object(entries, copy, key) => {
                        if let Some(item) = copied.take() {
                            let key = distinct_key(copy, std::mem::take(key));
                            copy.insert(key, item);
                        }
                        if let Some((next_key, item)) = entries.next() {
                            *key = self.redact_str(next_key).into_owned();
                            break item;
                        }
                    }
                }
                copied = stack.pop().map(|frame| match frame {
                    Frame::Array(_, copy) => Value::Array(copy),
                    Frame::Object(_, copy, _) => Value::Object(copy),
                });
            };
        }
    }
}

/// `key`, or, when redaction made it equal to a key already copied (two keys holding different
/// secrets), `key (2)`, `key (3)`…: no value is lost to the merge.
fn distinct_key(copy: &Map<String, Value>, key: String) -> String {
    if !copy.contains_key(&key) {
        return key;
    }
    (2..)
        .map(|n| format!("{key} ({n})"))
        .find(|candidate| !copy.contains_key(candidate))
        .unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::SecretRedactor;

    #[test]
    fn keys_that_redact_alike_keep_every_value() {
        let redactor = SecretRedactor::new(["sk-live-1", "sk-live-2"]);
        let value = json!({"sk-live-1": 1, "sk-live-2": 2, "n": 3});
        assert_eq!(
            redactor.redact_value(&value).into_owned(),
            json!({"[REDACTED]": 1, "[REDACTED] (2)": 2, "n": 3})
        );
    }

    #[test]
    fn deeply_nested_values_are_redacted_on_a_small_stack() {
        const DEPTH: usize = 100_000;
        let redact = || {
            let redactor = SecretRedactor::new(["hunter2"]);
            let mut value = json!("pw=hunter2");
            for level in 0..DEPTH {
                value = if level % 2 == 0 {
                    Value::Array(vec![Value::Null, value])
                } else {
                    let mut map = serde_json::Map::new();
                    map.insert("hunter2".to_owned(), value);
                    Value::Object(map)
                };
            }
            let redacted = redactor.redact_value(&value).into_owned();
            let mut leaf = &redacted;
            let mut depth = 0;
            loop {
                leaf = match leaf {
                    Value::Array(items) => &items[1],
                    Value::Object(map) => &map["[REDACTED]"],
                    _ => break,
                };
                depth += 1;
            }
            assert_eq!((depth, leaf), (DEPTH, &json!("pw=[REDACTED]")));
            assert!(!redactor.value_has_secret(&redacted));
            crate::limits::drop_deep(value);
            crate::limits::drop_deep(redacted);
        };
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(redact)
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn a_number_holding_a_secret_becomes_its_redacted_text() {
        let redactor = SecretRedactor::new(["4111111111111111"]);
        let value =
            json!({"card": 4_111_111_111_111_111_u64, "items": [7, 14_111_111_111_111_111_u64]});
        let redacted = redactor.redact_value(&value).into_owned();
        assert_eq!(redacted["card"], json!("[REDACTED]"));
        assert_eq!(redacted["items"][0], json!(7), "other numbers stay numbers");
        assert_eq!(
            redacted["items"][1],
            json!("1[REDACTED]"),
            "a secret inside a number"
        );
        assert!(!redactor.value_has_secret(&redacted));
        // A redactor of secrets no number can hold never looks at numbers.
        let words = SecretRedactor::new(["sk-live-1"]);
        assert!(matches!(
            words.redact_value(&value),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
