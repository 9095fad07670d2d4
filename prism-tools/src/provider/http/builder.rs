//! [`HttpProviderBuilder`]: the settings of an [`HttpProvider`], checked when it is built.

use std::fmt;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::provider::http::api::Api;
use crate::provider::http::client::{HttpProvider, Inner};
use crate::provider::http::key::KeySource;
use crate::provider::http::tls::client;
use crate::provider::http::{RetryPolicy, Timeouts};
use crate::provider::wire::ModelSettings;
use crate::redact::SecretRedactor;
use crate::redact::shown_url;
use crate::schema::LoweringCache;

/// The most bytes of an answer read by default: 32 MiB, far above any real turn.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 32 << 20;

/// Builds an [`HttpProvider`]; start from one of its constructors
/// ([`HttpProvider::openai_compatible`] and the others).
#[must_use = "a builder does nothing until `build` is called"]
pub struct HttpProviderBuilder {
    pub(crate) api: Api,
    pub(crate) settings: ModelSettings,
    pub(crate) key: KeySource,
    pub(crate) timeouts: Timeouts,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_response_bytes: u64,
    pub(crate) strict_tools: bool,
}

impl HttpProviderBuilder {
    pub(crate) fn new(api: Api, model: String, key: KeySource) -> Self {
        Self {
            api,
            settings: ModelSettings::new(model),
            key,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            strict_tools: false,
        }
    }

    /// Sends requests to this base URL instead (a proxy, a local server, another region). The
    /// API's path is added after it: `http://localhost:11434/v1` gets `/chat/completions`.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.api.base_url = url.into();
        self
    }

    /// Where the key comes from.
    pub fn key(mut self, key: impl Into<KeySource>) -> Self {
        self.key = key.into();
        self
    }

    /// Sets the timeouts.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Sets the retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The most bytes of one answer read before the turn fails.
    pub fn max_response_bytes(mut self, limit: u64) -> Self {
        self.max_response_bytes = limit;
        self
    }

    /// The most output tokens per turn.
    pub fn max_output_tokens(mut self, tokens: u32) -> Self {
        self.settings.max_output_tokens = Some(tokens);
        self
    }

    /// Asks for whole answers instead of streams (events are then reported when a turn ends).
    pub fn without_stream(mut self) -> Self {
        self.settings.stream = false;
        self
    }

    /// Adds a top-level body field (temperature, reasoning effort…).
    pub fn body_field(mut self, key: impl Into<String>, value: Value) -> Self {
        self.settings.extra.insert(key.into(), value);
        self
    }

    /// Asks the provider to hold the model's arguments to each tool's schema (structured
    /// outputs, strict tool use). Off by default: many compatible servers refuse the flag.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = strict;
        self
    }

    /// Adds a header sent with every request (an organisation, a beta flag). Never put a key
    /// here: use [`key`](Self::key), which is redacted.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.api.headers.push((name, value.into()));
        self
    }

    /// Checks the settings, reads the key from the environment when it comes from there, and
    /// builds the provider.
    pub fn build(self) -> Result<HttpProvider, BuildError> {
        let url = self.api.url(&self.settings);
        reqwest::Url::parse(&url).map_err(|error| {
            // A URL that does not parse cannot be taken apart, so one that may hold a password
            // (`user:password@`) or a token in its query is not quoted.
            let quoted = if url.contains(['@', '?']) {
                String::new()
            } else {
                format!(" `{url}`")
            };
            BuildError(format!("the request URL{quoted} is not valid: {error}"))
        })?;
        if self.settings.model.trim().is_empty() {
            return Err(BuildError("the model name is empty".into()));
        }
        let key = self.key.resolve().map_err(BuildError)?;
        let redactor = match &key {
            crate::provider::http::key::ResolvedKey::Fixed(key) => {
                SecretRedactor::new([key.expose()])
            }
            _ => SecretRedactor::default(),
        };
        let client = client(&self.timeouts).map_err(BuildError)?;
        Ok(HttpProvider {
            inner: Arc::new(Inner {
                client,
                api: self.api,
                settings: self.settings,
                key,
                redactor,
                host_keys: Mutex::default(),
                timeouts: self.timeouts,
                retry: self.retry,
                max_response_bytes: self.max_response_bytes,
                strict_tools: self.strict_tools,
                lowering: LoweringCache::default(),
            }),
        })
    }
}

impl fmt::Debug for HttpProviderBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpProviderBuilder")
            .field("provider", &self.api.provider_name)
            .field("base_url", &shown_url(&self.api.base_url))
            .field("model", &self.settings.model)
            .field("key", &self.key)
            .field("timeouts", &self.timeouts)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

/// A provider that cannot be built: a bad URL, an empty model name, a key that is not there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError(String);

impl BuildError {
    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BuildError {}
