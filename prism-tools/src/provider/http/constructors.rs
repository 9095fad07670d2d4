//! One constructor per API: its base URL, path, key header and environment variable, and the
//! wire format, schema dialect and name rule of its bodies.

#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
use std::sync::Arc;

#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
use crate::provider::http::api::{Api, Auth, Endpoint};
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
use crate::provider::http::key::KeySource;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
use crate::provider::http::{HttpProvider, HttpProviderBuilder};
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
use crate::provider::names::NameRule;
#[cfg(any(feature = "openai", feature = "anthropic", feature = "gemini"))]
use crate::schema::Dialect;

/// Anthropic's API requires a token limit; this one is used when the builder sets none.
#[cfg(feature = "anthropic")]
const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;

#[cfg(feature = "openai")]
impl HttpProvider {
    /// Any OpenAI-compatible Chat Completions server at `base_url` (a local Ollama, vLLM or
    /// llama.cpp server, Groq, DeepSeek, Mistral…), with no key unless one is set.
    pub fn openai_compatible(
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> HttpProviderBuilder {
        HttpProviderBuilder::new(
            openai_chat_api(base_url.into()),
            model.into(),
            KeySource::None,
        )
    }

    /// OpenAI's Chat Completions API, with the key from `OPENAI_API_KEY`.
    pub fn openai_chat(model: impl Into<String>) -> HttpProviderBuilder {
        HttpProviderBuilder::new(
            openai_chat_api("https://api.openai.com/v1".into()),
            model.into(),
            KeySource::env("OPENAI_API_KEY"),
        )
    }

    /// OpenAI's Responses API, with the key from `OPENAI_API_KEY`.
    pub fn openai_responses(model: impl Into<String>) -> HttpProviderBuilder {
        let api = Api {
            format: Arc::new(crate::provider::openai_responses::OpenAiResponses),
            provider_name: "openai",
            base_url: "https://api.openai.com/v1".into(),
            endpoint: Endpoint::Fixed("responses"),
            auth: Auth::Bearer,
            headers: Vec::new(),
            dialect: Dialect::OpenAiResponses { strict: false },
            names: NameRule::OpenAi,
        };
        HttpProviderBuilder::new(api, model.into(), KeySource::env("OPENAI_API_KEY"))
    }
}

#[cfg(feature = "openai")]
fn openai_chat_api(base_url: String) -> Api {
    Api {
        format: Arc::new(crate::provider::openai_chat::OpenAiChat::new()),
        provider_name: "openai",
        base_url,
        endpoint: Endpoint::Fixed("chat/completions"),
        auth: Auth::Bearer,
        headers: Vec::new(),
        dialect: Dialect::OpenAiChat { strict: false },
        names: NameRule::OpenAi,
    }
}

#[cfg(feature = "anthropic")]
impl HttpProvider {
    /// Anthropic's Messages API, with the key from `ANTHROPIC_API_KEY`, API version
    /// `2023-06-01`, and 4096 output tokens unless the builder says otherwise.
    pub fn anthropic(model: impl Into<String>) -> HttpProviderBuilder {
        let api = Api {
            format: Arc::new(crate::provider::anthropic::Anthropic),
            provider_name: "anthropic",
            base_url: "https://api.anthropic.com/v1".into(),
            endpoint: Endpoint::Fixed("messages"),
            auth: Auth::Header("x-api-key"),
            headers: vec![("anthropic-version", "2023-06-01".into())],
            dialect: Dialect::Anthropic { strict: false },
            names: NameRule::Anthropic,
        };
        HttpProviderBuilder::new(api, model.into(), KeySource::env("ANTHROPIC_API_KEY"))
            .max_output_tokens(ANTHROPIC_DEFAULT_MAX_TOKENS)
    }
}

#[cfg(feature = "gemini")]
impl HttpProvider {
    /// Google's Gemini API, with the key from `GEMINI_API_KEY`.
    pub fn gemini(model: impl Into<String>) -> HttpProviderBuilder {
        let api = Api {
            format: Arc::new(crate::provider::gemini::Gemini::new()),
            provider_name: "gcp.gemini",
            base_url: "https://generativelanguage.googleapis.com/v1beta".into(),
            endpoint: Endpoint::GeminiModel,
            auth: Auth::Header("x-goog-api-key"),
            headers: Vec::new(),
            dialect: Dialect::GeminiParameters,
            names: NameRule::Gemini,
        };
        HttpProviderBuilder::new(api, model.into(), KeySource::env("GEMINI_API_KEY"))
    }
}
