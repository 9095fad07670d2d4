//! Provider wire formats: what a model API is sent and what it answers, as pure data code (no
//! HTTP here).
//!
//! The run layer speaks [`ProviderRequest`](crate::run::ProviderRequest) and
//! [`ProviderResponse`](crate::run::ProviderResponse); each [`WireFormat`](wire::WireFormat)
//! turns those into one API's JSON and back, whole or streamed, without I/O. The tools a turn
//! describes are sent under names the provider accepts ([`names::ToolNames`]) and with schemas
//! lowered to its dialect ([`crate::schema::lower`]); the model's calls come back under the
//! registered names, with their arguments in the canonical shape, so the dispatcher, the ledger
//! and the host never see the provider's spelling. Every text sent back to the model uses the
//! names it saw.
//!
//! - [`wire`]: the contract every format implements, and a turn's [`wire::ToolTable`].
//! - [`names`]: tool names as each provider accepts them, mapped reversibly per request.
//! - [`prepare`]: a turn's tools named and lowered for one provider.
//! - `http` (feature `http`): the transport around a format: timeouts, retries, keys, tracing.

pub mod anthropic;
pub mod gemini;
#[cfg(feature = "http")]
pub mod http;
pub mod names;
pub mod openai_chat;
pub mod openai_responses;
pub mod prepare;
pub mod untrusted;
pub mod wire;
