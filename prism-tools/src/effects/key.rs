use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::effects::EffectPolicy;

/// The identity of one side effect: a SHA-256 over the canonical JSON (RFC 8785) of the tool name,
/// the policy's scope and the arguments, so key order and number spelling cannot change it.
///
/// ```
/// use prism_tools::{EffectKey, EffectPolicy};
/// use serde_json::json;
///
/// let policy = EffectPolicy::default();
/// let a = EffectKey::new("pay", &policy, &json!({"to": "bob", "cents": 100}));
/// let b = EffectKey::new("pay", &policy, &json!({"cents": 100, "to": "bob"}));
/// assert_eq!(a, b);
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EffectKey(String);

impl EffectKey {
    /// The key of calling `tool` with `arguments` under `policy`.
    pub fn new(tool: &str, policy: &EffectPolicy, arguments: &Value) -> Self {
        let subject = json!({ "tool": tool, "scope": policy.scope, "arguments": arguments });
        // Canonicalisation only fails on values JSON cannot hold (non-finite floats), which a
        // `serde_json::Value` never contains; fall back to serde_json's own sorted output.
        let canonical = serde_json_canonicalizer::to_vec(&subject)
            .unwrap_or_else(|_| subject.to_string().into_bytes());
        let digest = Sha256::digest(&canonical);
        let mut hex = String::with_capacity(64);
        for byte in digest.iter() {
            hex.push_str(&format!("{byte:02x}"));
        }
        Self(hex)
    }

    /// Wraps a key read back from storage.
    pub fn from_hex(hex: impl Into<String>) -> Self {
        Self(hex.into())
    }

    /// The key as 64 hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for EffectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EffectKey({})", &self.0)
    }
}

impl fmt::Display for EffectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
