//! The TLS setup under every HTTP client of the crate (the providers and the web tools): rustls
//! with the *ring* crypto provider and the platform's certificate verifier, built per client so
//! nothing process-wide is installed. `provider/http/mod.rs` says why *ring*.

use std::sync::Arc;

use rustls_platform_verifier::BuilderVerifierExt;

/// A reqwest builder whose TLS is rustls over *ring*, offering HTTP/2 then HTTP/1.1; the caller
/// adds its own timeouts, redirects and resolver.
pub(crate) fn client_builder() -> Result<reqwest::ClientBuilder, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(reqwest::Client::builder().tls_backend_preconfigured(tls))
}
