//! Stable digests of JSON values: SHA-256 (or, for keyed effect keys, HMAC-SHA-256) over the
//! canonical form (RFC 8785), so key order, number spelling and serde_json's feature flags cannot
//! change a digest. Effect keys, approval keys and the per-turn `ids_hash` all go through here.

use hmac::{Hmac, Mac};
use serde_json::Value;
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
    serde_json_canonicalizer::to_vec(value).unwrap_or_else(|_| value.to_string().into_bytes())
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
}
