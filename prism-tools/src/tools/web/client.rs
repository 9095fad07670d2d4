//! The HTTP client under the web tools: rustls over *ring* with the platform's verifier (the
//! stack of the HTTP providers) and redirects left to the caller. A client under a URL policy
//! also takes no proxy from the environment (a proxy would resolve names where the policy
//! cannot see) and answers DNS through the policy.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::error::{WebError, WebErrorKind};
use super::url_policy::UrlPolicy;

/// Resolves every host name through the policy, so a name that leads to a refused address
/// fails before a connection is opened (on the first request and on every redirect).
struct PolicyResolver(UrlPolicy);

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.0.clone();
        Box::pin(async move {
            let addresses = policy.resolve(name.as_str()).await?;
            // Port 0: the connector puts the URL's port in.
            let sockets: Addrs = Box::new(
                addresses
                    .into_iter()
                    .map(|ip| SocketAddr::new(ip, 0))
                    .collect::<Vec<_>>()
                    .into_iter(),
            );
            Ok(sockets)
        })
    }
}

/// A client whose every connection obeys `policy`; without one (a search API's endpoint, which
/// the host configured itself), a client that resolves names as usual.
pub(crate) fn client(
    policy: Option<&UrlPolicy>,
    connect_timeout: Duration,
    user_agent: &str,
) -> Result<reqwest::Client, WebError> {
    let failed = |what: &str, error: &dyn std::fmt::Display| {
        WebError::new(
            WebErrorKind::Network,
            format!("{what} could not be set up: {error}"),
        )
    };
    let builder = crate::tls::client_builder()
        .map_err(|error| failed("TLS", &error))?
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(user_agent);
    let builder = match policy {
        Some(policy) => builder
            .no_proxy()
            .dns_resolver(Arc::new(PolicyResolver(policy.clone()))),
        None => builder,
    };
    builder
        .build()
        .map_err(|error| failed("the HTTP client", &error))
}
