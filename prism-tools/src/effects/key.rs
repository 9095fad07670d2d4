use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

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
        Self(crate::canonical::canonical_sha256(&subject))
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
