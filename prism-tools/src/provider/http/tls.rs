//! The HTTP client: rustls with the *ring* crypto provider and the platform's certificate
//! verifier, built per provider so nothing process-wide is installed.

use std::sync::Arc;

use rustls_platform_verifier::BuilderVerifierExt;

use crate::provider::http::Timeouts;

/// A client with TLS over *ring*, HTTP/2 when the server offers it, and the connect timeout.
pub(crate) fn client(timeouts: &Timeouts) -> Result<reqwest::Client, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_platform_verifier())
        .map_err(|error| format!("TLS could not be set up: {error}"))?
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(timeouts.connect)
        .tcp_nodelay(true)
        .build()
        .map_err(|error| format!("the HTTP client could not be built: {error}"))
}
