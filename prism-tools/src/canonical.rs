//! Stable digests of JSON values: SHA-256 (or, for keyed effect keys, HMAC-SHA-256) over the
//! canonical form (RFC 8785), so key order, number spelling and serde_json's feature flags cannot
//! change a digest. Effect keys, approval keys and the per-turn `ids_hash` all go through here.
//!
//! RFC 8785 writes every number as the double nearest to it, so integers past 2^53 that differ
//! can share one form (2^53 and 2^53 + 1 both become `9007199254740992`): two payments, or an
//! approved call and a changed one, would share a digest. The digested bytes are therefore the
//! canonical form followed by each integer the double rounds, exactly, with its position among
//! the value's numbers. A value without such an integer (nearly every one) keeps its RFC 8785
//! bytes, and so the digest stores already hold for it.

use std::io::Write as _;

use hmac::{Hmac, Mac};
use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

/// The SHA-256 of `value`'s canonical JSON, as 64 lowercase hex digits. Canonicalising recurses
/// once per level, so `value` must be within the dispatcher's depth limits: effect keys are
/// taken after the arguments passed them, and approval keys only for arguments within them.
pub(crate) fn canonical_sha256(value: &Value) -> String {
    hex(&Sha256::digest(canonical_bytes(value)))
}

/// The HMAC-SHA-256 of `value`'s canonical JSON under `mac`'s key, as 64 lowercase hex digits.
pub(crate) fn canonical_hmac_sha256(value: &Value, mac: &Hmac<Sha256>) -> String {
    let mut mac = mac.clone();
    mac.update(&canonical_bytes(value));
    hex(&mac.finalize().into_bytes())
}

fn canonical_bytes(value: &Value) -> Vec<u8> {
    // Canonicalisation only fails on values JSON cannot hold (non-finite floats), which a
    // `serde_json::Value` never contains; fall back to serde_json's own output.
    let mut bytes =
        serde_json_canonicalizer::to_vec(value).unwrap_or_else(|_| value.to_string().into_bytes());
    append_rounded_integers(value, &mut bytes);
    bytes
}

/// Appends `\n{position}:{digits}` for each integer in `value` that RFC 8785 rounds, where
/// `position` counts the value's numbers in document order (keys sorted). Canonical JSON holds no
/// raw newline, so the two parts cannot run into each other.
fn append_rounded_integers(value: &Value, out: &mut Vec<u8>) {
    let mut pending = vec![value];
    let mut position = 0usize;
    while let Some(value) = pending.pop() {
        match value {
            Value::Number(number) => {
                if rounded_as_double(number) {
                    // Writing into a vector cannot fail.
                    let _ = write!(out, "\n{position}:{number}");
                }
                position += 1;
            }
            Value::Array(items) => pending.extend(items.iter().rev()),
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                pending.extend(entries.into_iter().rev().map(|(_, item)| item));
            }
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
}

/// True for an integer that no double holds exactly (compared in 128 bits, where every `u64`,
/// every `i64` and the doubles they round to fit).
fn rounded_as_double(number: &Number) -> bool {
    if let Some(n) = number.as_u64() {
        (n as f64) as u128 != u128::from(n)
    } else if let Some(n) = number.as_i64() {
        (n as f64) as i128 != i128::from(n)
    } else {
        false
    }
}

fn hex(digest: &[u8]) -> String {
    let mut hex = String::with_capacity(2 * digest.len());
    for byte in digest {
        use std::fmt::Write as _;
        // Writing into a String cannot fail.
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_number_spelling_do_not_matter() {
        let a = canonical_sha256(&json!({"b": 1.0, "a": [1, 2]}));
        let b: Value = serde_json::from_str(r#"{"a":[1,2],"b":1}"#).unwrap();
        assert_eq!(a, canonical_sha256(&b));
        assert_ne!(a, canonical_sha256(&json!({"a": [2, 1], "b": 1})));
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn integers_a_double_rounds_still_differ() {
        let wide: u64 = 1 << 53;
        let digest = |value: Value| canonical_sha256(&value);
        assert_ne!(digest(json!(wide)), digest(json!(wide + 1)));
        assert_ne!(digest(json!(u64::MAX)), digest(json!(u64::MAX - 1)));
        assert_ne!(
            digest(json!(-(wide as i64) - 1)),
            digest(json!(-(wide as i64)))
        );
        // Where the rounded integer sits matters, not only which it is.
        let (exact, rounded) = (json!(wide as f64), json!(wide + 1));
        assert_ne!(
            digest(json!([exact.clone(), rounded.clone()])),
            digest(json!([rounded.clone(), exact.clone()]))
        );
        // Key order still does not matter, past the rounding too.
        let a: Value =
            serde_json::from_str(r#"{"x":9007199254740993,"y":9007199254740995}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"y":9007199254740995,"x":9007199254740993}"#).unwrap();
        assert_eq!(digest(a), digest(b));
    }

    #[test]
    fn values_without_rounded_integers_keep_their_rfc_8785_digest() {
        let value = json!({"b": [1, 2.5, 9007199254740992_u64, -3], "a": "text"});
        let expected = hex(&Sha256::digest(
            serde_json_canonicalizer::to_vec(&value).unwrap(),
        ));
        assert_eq!(canonical_sha256(&value), expected);
    }
}
