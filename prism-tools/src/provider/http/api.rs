//! [`Api`]: what differs between the provider APIs at the HTTP level: where requests go, how the
//! key is sent, which headers they need, and which wire format, schema dialect and name rule
//! their bodies follow.

use std::sync::Arc;

use reqwest::RequestBuilder;
use reqwest::header::HeaderValue;

use crate::provider::names::NameRule;
use crate::provider::wire::{ModelSettings, WireFormat};
use crate::schema::Dialect;

/// How an API takes its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Auth {
    /// `Authorization: Bearer {key}`.
    Bearer,
    /// The key as the whole value of this header.
    Header(&'static str),
}

impl Auth {
    /// The request with the key on it, in a header marked sensitive (as reqwest marks a bearer
    /// token), so that a printed request or header map shows no key.
    pub(crate) fn apply(self, http: RequestBuilder, key: &str) -> RequestBuilder {
        match self {
            Self::Bearer => http.bearer_auth(key),
            Self::Header(name) => match HeaderValue::from_str(key) {
                Ok(mut value) => {
                    value.set_sensitive(true);
                    http.header(name, value)
                }
                // reqwest keeps the same refusal (which names no value) until the request is sent.
                Err(_) => http.header(name, key),
            },
        }
    }
}

/// Where one turn's request goes, after the base URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// The same path every turn.
    Fixed(&'static str),
    /// Gemini's `models/{model}:generateContent` or `…:streamGenerateContent?alt=sse`.
    GeminiModel,
}

/// One provider API at the HTTP level.
#[derive(Clone)]
pub(crate) struct Api {
    pub(crate) format: Arc<dyn WireFormat>,
    /// `gen_ai.provider.name`.
    pub(crate) provider_name: &'static str,
    pub(crate) base_url: String,
    pub(crate) endpoint: Endpoint,
    pub(crate) auth: Auth,
    pub(crate) headers: Vec<(&'static str, String)>,
    /// The dialect with `strict` off; [`Api::dialect`] sets it.
    pub(crate) dialect: Dialect,
    pub(crate) names: NameRule,
}

impl Api {
    /// The schema dialect, strict or not.
    pub(crate) fn dialect(&self, strict: bool) -> Dialect {
        match self.dialect {
            Dialect::OpenAiChat { .. } => Dialect::OpenAiChat { strict },
            Dialect::OpenAiResponses { .. } => Dialect::OpenAiResponses { strict },
            Dialect::Anthropic { .. } => Dialect::Anthropic { strict },
            other => other,
        }
    }

    /// The request URL for these settings.
    pub(crate) fn url(&self, settings: &ModelSettings) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.endpoint {
            Endpoint::Fixed(path) => format!("{base}/{path}"),
            Endpoint::GeminiModel => {
                let path = crate::provider::gemini::Gemini::new().request_path(settings);
                format!("{base}/{path}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post() -> RequestBuilder {
        let client = crate::tls::client_builder().unwrap().build().unwrap();
        client.post("http://127.0.0.1:9/v1")
    }

    #[test]
    fn every_kind_of_key_header_is_marked_sensitive() {
        for auth in [
            Auth::Bearer,
            Auth::Header("x-api-key"),
            Auth::Header("x-goog-api-key"),
        ] {
            let request = auth.apply(post(), "sk-live-51Hx9").build().unwrap();
            let shown = format!("{:?}", request.headers());
            assert!(!shown.contains("51Hx9"), "{auth:?}: {shown}");
            assert!(
                request.headers().values().any(HeaderValue::is_sensitive),
                "{auth:?}"
            );
        }
    }

    #[test]
    fn a_key_that_cannot_be_a_header_is_refused_without_being_shown() {
        let error = Auth::Header("x-api-key")
            .apply(post(), "sk-live-51Hx9\n")
            .build()
            .unwrap_err();
        assert!(!format!("{error:?}").contains("51Hx9"), "{error:?}");
    }
}
