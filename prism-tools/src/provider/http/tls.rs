//! The provider's HTTP client: the crate's TLS setup, HTTP/2 when the server offers it, and the
//! connect timeout.

use crate::provider::http::Timeouts;

/// A client with the crate's TLS, the connect timeout and no Nagle delay between small writes.
pub(crate) fn client(timeouts: &Timeouts) -> Result<reqwest::Client, String> {
    crate::tls::client_builder()
        .map_err(|error| format!("TLS could not be set up: {error}"))?
        .connect_timeout(timeouts.connect)
        // No redirects: a key header (`x-api-key`, `x-goog-api-key`) is not one reqwest strips
        // on the way to another host, and a provider API never redirects a POST.
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true)
        .build()
        .map_err(|error| format!("the HTTP client could not be built: {error}"))
}
