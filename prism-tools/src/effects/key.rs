use std::fmt;

use hmac::{Hmac, KeyInit};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::effects::EffectPolicy;

/// The identity of one side effect: a SHA-256 over the canonical JSON (RFC 8785) of the tool name,
/// the policy's scope and the arguments, so key order and number spelling cannot change it.
///
/// The plain SHA-256 is unsalted: when the arguments hold little entropy, a reader of the effect
/// store can recover them by hashing every candidate. [`EffectKey::keyed`] (what a dispatcher
/// given an [`EffectKeySecret`] computes) is an HMAC-SHA-256 under the host's key instead.
///
/// ```
/// use prism::effects::{EffectKey, EffectPolicy};
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

    /// The key of calling `tool` with `arguments` under `policy`, keyed with `secret`: without
    /// the secret, the key says nothing about the arguments.
    ///
    /// ```
    /// use prism::effects::{EffectKey, EffectKeySecret, EffectPolicy};
    /// use serde_json::json;
    ///
    /// let secret = EffectKeySecret::new(b"32 random bytes from the host....");
    /// let policy = EffectPolicy::default();
    /// let keyed = EffectKey::keyed("pay", &policy, &json!({"pin": "1234"}), &secret);
    /// assert_ne!(keyed, EffectKey::new("pay", &policy, &json!({"pin": "1234"})));
    /// ```
    pub fn keyed(
        tool: &str,
        policy: &EffectPolicy,
        arguments: &Value,
        secret: &EffectKeySecret,
    ) -> Self {
        let subject = json!({ "tool": tool, "scope": policy.scope, "arguments": arguments });
        Self(crate::canonical::canonical_hmac_sha256(&subject, &secret.0))
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

/// The host's key for [`EffectKey::keyed`]: effect keys become an HMAC-SHA-256 under it, so a
/// reader of the effect store who lacks it cannot test guesses of the arguments.
///
/// Give it to the dispatcher with
/// [`DispatchBuilder::effect_key_secret`](crate::DispatchBuilder::effect_key_secret). Keep it as
/// long as the effect store's records: under another key the same call gets another effect key, so
/// earlier outcomes are no longer found. `Debug` never prints it.
#[derive(Clone)]
pub struct EffectKeySecret(Hmac<Sha256>);

impl EffectKeySecret {
    /// A secret from key bytes, e.g. 32 random bytes kept by the host. HMAC accepts any length.
    pub fn new(key: impl AsRef<[u8]>) -> Self {
        Self(Hmac::new_from_slice(key.as_ref()).expect("HMAC accepts keys of any length"))
    }
}

impl fmt::Debug for EffectKeySecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EffectKeySecret([REDACTED])")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_effect_keys_depend_on_the_secret_and_never_show_it() {
        let policy = EffectPolicy::default();
        let arguments = json!({"pin": "1234"});
        let first = EffectKeySecret::new("first secret");
        let second = EffectKeySecret::new("second secret");
        let key = EffectKey::keyed("pay", &policy, &arguments, &first);
        assert_eq!(
            key,
            EffectKey::keyed("pay", &policy, &json!({"pin": "1234"}), &first.clone())
        );
        assert_ne!(key, EffectKey::keyed("pay", &policy, &arguments, &second));
        assert_ne!(key, EffectKey::new("pay", &policy, &arguments));
        assert_eq!(key.as_str().len(), 64);
        assert_eq!(format!("{first:?}"), "EffectKeySecret([REDACTED])");
    }
}
