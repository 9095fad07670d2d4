//! [`ApiKey`] and where it comes from ([`KeySource`]): the environment, a value the host holds,
//! or a [`SecretSource`] the host implements (a vault, a rotating token).
//!
//! A key never reaches an event, a row, an error or a `Debug` output: its `Debug` and `Display`
//! print [`REDACTED`], the provider redacts every message it builds with a redactor that
//! knows the key, and an [`Agent`](crate::run::Agent) adds the key to its dispatcher's
//! redactor ([`Provider::secrets`](crate::run::Provider::secrets)).

use std::fmt;
use std::sync::Arc;

use crate::effects::BoxFuture;
use crate::redact::REDACTED;

/// An API key. Cheap to clone; prints as [`REDACTED`].
///
/// ```
/// use prism::provider::http::ApiKey;
///
/// let key = ApiKey::new("sk-live-123");
/// assert_eq!(format!("{key:?}"), "ApiKey([REDACTED])");
/// assert_eq!(key.expose(), "sk-live-123");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(Arc<str>);

impl ApiKey {
    /// A key with this value.
    pub fn new(value: impl Into<Arc<str>>) -> Self {
        Self(value.into())
    }

    /// The key's value, for the request header (and for a host that must store it).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({REDACTED})")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// A host's own store of keys, asked before every request, so a rotated key is picked up
/// without rebuilding the provider.
pub trait SecretSource: Send + Sync + 'static {
    /// The key to send now; an error message (never the key) when there is none.
    fn api_key(&self) -> BoxFuture<'_, Result<ApiKey, String>>;
}

/// Where a provider's key comes from.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum KeySource {
    /// No key: a local server that does not check one.
    #[default]
    None,
    /// This key.
    Key(ApiKey),
    /// The environment variable of this name, read when the provider is built.
    Env(String),
    /// The host's store, asked before every request.
    Host(Arc<dyn SecretSource>),
}

impl KeySource {
    /// The key in environment variable `name`.
    pub fn env(name: impl Into<String>) -> Self {
        Self::Env(name.into())
    }

    /// The host's store.
    pub fn host(source: impl SecretSource) -> Self {
        Self::Host(Arc::new(source))
    }
}

impl From<ApiKey> for KeySource {
    fn from(key: ApiKey) -> Self {
        Self::Key(key)
    }
}

impl fmt::Debug for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Key(key) => f.debug_tuple("Key").field(key).finish(),
            Self::Env(name) => f.debug_tuple("Env").field(name).finish(),
            Self::Host(_) => f.write_str("Host(..)"),
        }
    }
}

/// A key source with the environment already read.
#[derive(Clone)]
pub(crate) enum ResolvedKey {
    None,
    Fixed(ApiKey),
    Host(Arc<dyn SecretSource>),
}

impl KeySource {
    /// Reads the environment now, so a missing variable is an error when the provider is built,
    /// naming the variable (never a value).
    pub(crate) fn resolve(self) -> Result<ResolvedKey, String> {
        match self {
            Self::None => Ok(ResolvedKey::None),
            Self::Key(key) => Ok(ResolvedKey::Fixed(key)),
            Self::Host(source) => Ok(ResolvedKey::Host(source)),
            Self::Env(name) => match std::env::var(&name) {
                Ok(value) if !value.trim().is_empty() => {
                    Ok(ResolvedKey::Fixed(ApiKey::new(value.trim())))
                }
                Ok(_) => Err(format!("the environment variable {name} is empty")),
                Err(_) => Err(format!("the environment variable {name} is not set")),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_print_their_value() {
        let key = ApiKey::new("sk-secret-value");
        let source = KeySource::from(key.clone());
        for text in [format!("{key:?}"), format!("{key}"), format!("{source:?}")] {
            assert!(!text.contains("sk-secret-value"), "{text}");
            assert!(text.contains(REDACTED), "{text}");
        }
    }

    #[test]
    fn a_missing_variable_is_named_in_the_error() {
        let error = KeySource::env("PRISM_TEST_SURELY_UNSET_VARIABLE")
            .resolve()
            .err()
            .unwrap();
        assert_eq!(
            error,
            "the environment variable PRISM_TEST_SURELY_UNSET_VARIABLE is not set"
        );
    }
}
