//! Provider wire formats: what a model API is sent and what it answers, as pure data code.
//!
//! The run layer speaks [`ProviderRequest`](crate::run::ProviderRequest) and
//! [`ProviderResponse`](crate::run::ProviderResponse); each [`WireFormat`](wire::WireFormat)
//! turns those into one API's JSON and back, whole or streamed, without I/O. The tools a turn
//! describes are sent under names the provider accepts and with schemas in its dialect; the
//! model's calls come back under the registered names, with their arguments in the canonical
//! shape, so the dispatcher, the ledger and the host never see the provider's spelling.

pub mod anthropic;
pub mod untrusted;
pub mod wire;
