//! Provider wire formats: what OpenAI (Chat Completions and Responses), Anthropic and Gemini are
//! sent and what they answer, as pure data code.
//!
//! Each format implements [`wire::WireFormat`]: it encodes a
//! [`ProviderRequest`](crate::ProviderRequest) into its API's JSON body and decodes a whole or
//! streamed answer into a [`ProviderResponse`](crate::ProviderResponse), without I/O. A turn's
//! tools are named and lowered for the provider by [`prepare::prepare_tools`].
//!
//! With the `openai`, `anthropic` or `gemini` feature, `http` puts a real model behind a run:
//! an `HttpProvider` with timeouts, retries, cancellation, redacted keys and tracing.

#[cfg(feature = "http")]
pub use prism_tools::provider::http;
pub use prism_tools::provider::{
    anthropic, gemini, names, openai_chat, openai_responses, prepare, untrusted, wire,
};
