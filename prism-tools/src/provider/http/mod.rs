//! HTTP providers: a [`WireFormat`](crate::provider::wire::WireFormat) with the transport around
//! it (feature `http`, and `openai`, `anthropic`, `gemini` for each API's constructors).
//!
//! The transport is thin: an [`HttpProvider`] prepares the turn's tools, encodes the request,
//! sends it, and feeds the answer to the format's decoder as it streams in, telling the
//! request's observer of every event. Around that:
//!
//! - [`Timeouts`] for the connection, the first byte, the gap between two events and the whole
//!   turn; a bound on the answer's size ([`HttpProviderBuilder::max_response_bytes`]).
//! - [`RetryPolicy`]: the official SDKs' rules (`x-should-retry`, 408/409/429/5xx,
//!   `retry-after-ms` then `retry-after`, two retries with jittered backoff, never once the body
//!   began); each retry is a [`ProviderEvent::Retrying`](crate::run::ProviderEvent::Retrying).
//! - Keys ([`KeySource`]) from the environment, the host, or a host's [`SecretSource`]; redacted
//!   from every error, never in an event or a `Debug` output.
//! - A `chat {model}` span per turn with OpenTelemetry's GenAI attributes
//!   ([`crate::semconv`]).
//! - Cancellation: dropping the turn's future closes its connection; a run drops it as soon as
//!   its cancellation token fires.
//!
//! # Why rustls with *ring*
//!
//! reqwest 0.13's `rustls` feature brings the aws-lc-rs crypto provider, a C and assembly
//! library built by a build script. On the project's 2-core machine a clean build of reqwest
//! with rustls took 76 s with *ring* and 115 s with aws-lc-rs (`cargo build` of an empty
//! program depending on reqwest 0.13, each in its own target directory, one after the other on
//! a machine also building other things), so this crate uses `rustls-no-provider` and
//! hands reqwest a rustls configuration over *ring* with the platform's certificate verifier.
//! Nothing is installed process-wide: a host that uses aws-lc-rs elsewhere is not affected. One
//! consequence of feature unification: a host whose own reqwest has no TLS feature at all gets
//! reqwest's rustls without a provider, and must install one (for example
//! `rustls::crypto::ring::default_provider().install_default()`) before building its own client.

// Each API feature uses its part of the shared transport; with only some of them on, the
// other APIs' auth and endpoint shapes are unused.
#![cfg_attr(
    not(all(feature = "openai", feature = "anthropic", feature = "gemini")),
    allow(dead_code)
)]

mod api;
mod builder;
mod client;
mod constructors;
mod key;
mod retry;
mod span;
mod status;
mod stream;
mod timeouts;
mod tls;

pub use builder::{BuildError, DEFAULT_MAX_RESPONSE_BYTES, HttpProviderBuilder};
pub use client::HttpProvider;
pub use key::{ApiKey, KeySource, SecretSource};
pub use retry::RetryPolicy;
pub use timeouts::Timeouts;
