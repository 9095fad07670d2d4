//! [`Api`]: what differs between the provider APIs at the HTTP level: where requests go, how the
//! key is sent, which headers they need, and which wire format, schema dialect and name rule
//! their bodies follow.

use std::sync::Arc;

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
