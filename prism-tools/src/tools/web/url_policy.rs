//! The one URL policy every first-party web tool obeys: which URLs may be fetched, and which
//! addresses a host name may lead to.
//!
//! A URL passes when its scheme is http or https, it carries no credentials, its host is not
//! denied and (when an allow list is set) is allowed, and every address it stands for is outside
//! the refused classes ([`AddressClass`]). The address check runs on IP literals before any
//! connection and on every DNS answer (through [`UrlPolicy::resolve`], which the fetch client uses
//! as its resolver), and the fetch client follows redirects itself so that each hop is checked
//! again. A DNS answer with any refused address is refused whole, so a name that resolves both
//! inside and outside cannot be used to reach the inside.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use url::{Host, Url};

use super::address::{AddressClass, classify};
use super::error::{WebError, WebErrorKind};
use crate::host_name;

/// Redirects followed before a fetch gives up, unless the host sets another limit.
pub const DEFAULT_MAX_REDIRECTS: usize = 5;

/// How long a DNS lookup may take before the URL is given up as unreachable.
pub const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which URLs the web tools may reach. Cheap to clone.
///
/// ```
/// use prism::tools::web::{AddressClass, UrlPolicy};
///
/// let policy = UrlPolicy::new().deny_host("internal.example");
/// assert!(policy.check_url("https://example.org/page").is_ok());
/// assert!(policy.check_url("https://docs.internal.example/").is_err());
/// assert!(policy.check_url("http://127.0.0.1:8080/").is_err());
/// assert!(policy.check_url("ftp://example.org/").is_err());
/// assert!(policy.check_url("https://user:secret@example.org/").is_err());
///
/// // A test server on this machine: loopback is allowed explicitly.
/// let local = UrlPolicy::new().allow_addresses(AddressClass::Loopback);
/// assert!(local.check_url("http://127.0.0.1:8080/").is_ok());
/// ```
#[derive(Clone, Debug)]
pub struct UrlPolicy {
    inner: Arc<PolicyInner>,
}

#[derive(Clone, Debug, Default)]
struct PolicyInner {
    allowed_hosts: Vec<String>,
    denied_hosts: Vec<String>,
    allowed_classes: Vec<AddressClass>,
    allowed_ips: Vec<IpAddr>,
    max_redirects: usize,
    pinned: HashMap<String, Vec<IpAddr>>,
}

impl Default for UrlPolicy {
    fn default() -> Self {
        UrlPolicy::new()
    }
}

impl UrlPolicy {
    /// The strict policy: any public http or https URL, every address class refused,
    /// [`DEFAULT_MAX_REDIRECTS`] redirects.
    pub fn new() -> Self {
        UrlPolicy {
            inner: Arc::new(PolicyInner {
                max_redirects: DEFAULT_MAX_REDIRECTS,
                ..PolicyInner::default()
            }),
        }
    }

    fn edit(mut self, change: impl FnOnce(&mut PolicyInner)) -> Self {
        change(Arc::make_mut(&mut self.inner));
        self
    }

    /// Allows `host` and its subdomains. Once one host is allowed, every other host is refused.
    /// `*.example.org` and `.example.org` are read as `example.org`.
    pub fn allow_host(self, host: impl Into<String>) -> Self {
        let host = list_entry(&host.into());
        self.edit(|inner| inner.allowed_hosts.push(host))
    }

    /// Refuses `host` and its subdomains, even when an allow entry matches too.
    /// `*.example.org` and `.example.org` are read as `example.org`.
    pub fn deny_host(self, host: impl Into<String>) -> Self {
        let host = list_entry(&host.into());
        self.edit(|inner| inner.denied_hosts.push(host))
    }

    /// Lets URLs reach addresses of `class` (tests allow [`AddressClass::Loopback`] to reach
    /// their own servers; a host on an intranet may allow [`AddressClass::Private`]).
    pub fn allow_addresses(self, class: AddressClass) -> Self {
        self.edit(|inner| {
            if !inner.allowed_classes.contains(&class) {
                inner.allowed_classes.push(class);
            }
        })
    }

    /// Lets URLs reach exactly `ip`, whatever its class (a test server on `127.0.0.2`, one
    /// intranet host), while the rest of its class stays refused.
    pub fn allow_ip(self, ip: IpAddr) -> Self {
        self.edit(|inner| inner.allowed_ips.push(ip))
    }

    /// Follows at most `limit` redirects (0: none).
    pub fn max_redirects(self, limit: usize) -> Self {
        self.edit(|inner| inner.max_redirects = limit)
    }

    /// Answers `host` with `addresses` instead of asking DNS. The addresses still pass the
    /// address check: pinning a name cannot open a refused class.
    pub fn pin_host(
        self,
        host: impl Into<String>,
        addresses: impl IntoIterator<Item = IpAddr>,
    ) -> Self {
        let host = normalise_host(&host.into());
        let addresses: Vec<IpAddr> = addresses.into_iter().collect();
        self.edit(|inner| {
            inner.pinned.insert(host, addresses);
        })
    }

    /// The redirect limit.
    pub fn redirect_limit(&self) -> usize {
        self.inner.max_redirects
    }

    /// Parses `url` and checks everything that can be checked without DNS: scheme, credentials,
    /// host lists, and the address when the host is an IP literal.
    pub fn check_url(&self, url: &str) -> Result<Url, WebError> {
        let parsed = Url::parse(url).map_err(|error| {
            WebError::new(
                WebErrorKind::InvalidUrl,
                format!("`{url}` is not a URL: {error}"),
            )
        })?;
        self.check_parsed(&parsed)?;
        Ok(parsed)
    }

    /// [`check_url`](Self::check_url) for a URL already parsed (a redirect target, say).
    pub fn check_parsed(&self, url: &Url) -> Result<(), WebError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(WebError::new(
                WebErrorKind::InvalidUrl,
                format!(
                    "`{url}`: only http and https URLs are fetched, not `{}`",
                    url.scheme()
                ),
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(WebError::new(
                WebErrorKind::InvalidUrl,
                "URLs with credentials (user:password@) are refused",
            ));
        }
        let host = url.host().ok_or_else(|| {
            WebError::new(WebErrorKind::InvalidUrl, format!("`{url}` has no host"))
        })?;
        let name = match host {
            Host::Domain(domain) => normalise_host(domain),
            Host::Ipv4(ip) => ip.to_string(),
            Host::Ipv6(ip) => ip.to_string(),
        };
        self.check_host_name(&name)?;
        match host {
            Host::Ipv4(ip) => self.check_address(IpAddr::V4(ip)),
            Host::Ipv6(ip) => self.check_address(IpAddr::V6(ip)),
            Host::Domain(_) => Ok(()),
        }
    }

    fn check_host_name(&self, host: &str) -> Result<(), WebError> {
        if self
            .inner
            .denied_hosts
            .iter()
            .any(|entry| host_matches(host, entry))
        {
            return Err(WebError::new(
                WebErrorKind::Refused,
                format!("host `{host}` is denied by the URL policy"),
            ));
        }
        let allowed = &self.inner.allowed_hosts;
        if !allowed.is_empty() && !allowed.iter().any(|entry| host_matches(host, entry)) {
            return Err(WebError::new(
                WebErrorKind::Refused,
                format!("host `{host}` is not on the URL policy's allow list"),
            ));
        }
        Ok(())
    }

    /// Refuses `ip` when its class is not allowed and it is not allowed by itself.
    pub fn check_address(&self, ip: IpAddr) -> Result<(), WebError> {
        match classify(ip) {
            _ if self.inner.allowed_ips.contains(&ip) => Ok(()),
            Some(class) if !self.inner.allowed_classes.contains(&class) => Err(WebError::new(
                WebErrorKind::Refused,
                format!("address {ip} is {class:?} and the URL policy does not allow that class"),
            )),
            _ => Ok(()),
        }
    }

    /// The addresses of `host` (pinned, or from DNS within [`RESOLVE_TIMEOUT`]), refused whole
    /// when any of them is in a refused class.
    pub async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, WebError> {
        self.resolve_with(host, |name| async move {
            let found = tokio::net::lookup_host((name.as_str(), 0)).await?;
            Ok(found.map(|socket: SocketAddr| socket.ip()).collect())
        })
        .await
    }

    /// [`resolve`](Self::resolve), asking `lookup` for a name that is not pinned.
    async fn resolve_with<F, L>(&self, host: &str, lookup: L) -> Result<Vec<IpAddr>, WebError>
    where
        L: FnOnce(String) -> F,
        F: Future<Output = std::io::Result<Vec<IpAddr>>>,
    {
        let name = normalise_host(host);
        self.check_host_name(&name)?;
        let addresses: Vec<IpAddr> = match self.inner.pinned.get(&name) {
            Some(pinned) => pinned.clone(),
            // Bounded: the system resolver has no deadline of its own, and a request waiting on
            // it holds one of the browser's connections and the tool call behind it.
            None => match tokio::time::timeout(RESOLVE_TIMEOUT, lookup(name.clone())).await {
                Ok(Ok(found)) => found,
                Ok(Err(error)) => {
                    return Err(WebError::new(
                        WebErrorKind::Network,
                        format!("`{name}` did not resolve: {error}"),
                    ));
                }
                Err(_) => {
                    return Err(WebError::new(
                        WebErrorKind::Network,
                        format!("`{name}` did not resolve within {RESOLVE_TIMEOUT:?}"),
                    ));
                }
            },
        };
        if addresses.is_empty() {
            return Err(WebError::new(
                WebErrorKind::Network,
                format!("`{name}` resolved to no address"),
            ));
        }
        for ip in &addresses {
            self.check_address(*ip).map_err(|refusal| {
                WebError::new(
                    WebErrorKind::Refused,
                    format!("`{name}` resolves to {}", refusal.message()),
                )
            })?;
        }
        Ok(addresses)
    }
}

/// A host as a URL's host is written (see [`host_name::normalise_host`]), without a trailing
/// dot: `example.com.` is fetched as `example.com`, so a list entry names both.
fn normalise_host(host: &str) -> String {
    host_name::normalise_host(host.trim().trim_end_matches('.'))
}

/// A host list entry: written as a wildcard (`*.example.org`) or with a leading dot, as other
/// host lists are, it would match no host at all and a deny entry would refuse nothing.
fn list_entry(entry: &str) -> String {
    let entry = entry.trim();
    let bare = entry
        .strip_prefix("*.")
        .or_else(|| entry.strip_prefix('.'))
        .unwrap_or(entry);
    normalise_host(bare)
}

/// `host` is `entry` or a subdomain of it.
fn host_matches(host: &str, entry: &str) -> bool {
    host == entry
        || host
            .strip_suffix(entry)
            .is_some_and(|prefix| prefix.ends_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_lists_match_the_host_and_its_subdomains_only() {
        let policy = UrlPolicy::new().allow_host("Example.org");
        assert!(policy.check_url("https://example.org/").is_ok());
        assert!(policy.check_url("https://www.example.org./a").is_ok());
        let refused = policy.check_url("https://badexample.org/").unwrap_err();
        assert_eq!(refused.kind(), WebErrorKind::Refused);
        let denied = policy.clone().deny_host("www.example.org");
        assert!(denied.check_url("https://www.example.org/").is_err());
        assert!(denied.check_url("https://example.org/").is_ok());
    }

    #[test]
    fn wildcard_and_leading_dot_entries_name_the_domain_and_its_subdomains() {
        for entry in ["*.internal.example", ".internal.example"] {
            let denied = UrlPolicy::new().deny_host(entry);
            for url in ["https://internal.example/", "https://db.internal.example/"] {
                let error = denied.check_url(url).unwrap_err();
                assert_eq!(error.kind(), WebErrorKind::Refused, "{entry} {url}");
            }
            let allowed = UrlPolicy::new().allow_host(entry);
            assert!(
                allowed.check_url("https://db.internal.example/").is_ok(),
                "{entry}"
            );
            assert!(
                allowed.check_url("https://other.example/").is_err(),
                "{entry}"
            );
        }
    }

    #[test]
    fn literals_of_every_refused_class_are_refused_before_any_connection() {
        let policy = UrlPolicy::new();
        for url in [
            "http://127.0.0.1/",
            "http://10.0.0.1/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://0.0.0.0/",
            "http://2130706433/",
            "http://0x7f.1/",
        ] {
            let error = policy.check_url(url).unwrap_err();
            assert_eq!(error.kind(), WebErrorKind::Refused, "{url}: {error}");
        }
    }

    #[test]
    fn schemes_credentials_and_garbage_are_invalid() {
        let policy = UrlPolicy::new();
        for url in [
            "file:///etc/passwd",
            "gopher://x/",
            "https://a:b@example.org/",
            "https://user@example.org/",
            "not a url",
        ] {
            let error = policy.check_url(url).unwrap_err();
            assert_eq!(error.kind(), WebErrorKind::InvalidUrl, "{url}: {error}");
        }
    }

    #[test]
    fn allowing_link_local_does_not_open_the_metadata_service() {
        let policy = UrlPolicy::new().allow_addresses(AddressClass::LinkLocal);
        assert!(policy.check_url("http://169.254.1.1/").is_ok());
        assert!(policy.check_url("http://169.254.169.254/").is_err());
    }

    #[test]
    fn one_allowed_ip_leaves_the_rest_of_its_class_refused() {
        let policy = UrlPolicy::new().allow_ip("127.0.0.2".parse().unwrap());
        assert!(policy.check_url("http://127.0.0.2:8080/").is_ok());
        assert!(policy.check_url("http://127.0.0.1:8080/").is_err());
    }

    #[tokio::test]
    async fn a_name_is_refused_when_any_of_its_addresses_is() {
        let policy = UrlPolicy::new().pin_host(
            "mixed.test",
            [
                "93.184.216.34".parse().unwrap(),
                "10.0.0.1".parse().unwrap(),
            ],
        );
        let error = policy.resolve("mixed.test").await.unwrap_err();
        assert_eq!(error.kind(), WebErrorKind::Refused);
        assert!(error.message().contains("10.0.0.1"), "{error}");
        let public = UrlPolicy::new().pin_host("public.test", ["93.184.216.34".parse().unwrap()]);
        assert_eq!(public.resolve("PUBLIC.test.").await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn localhost_resolves_to_loopback_and_is_refused_by_default() {
        let error = UrlPolicy::new().resolve("localhost").await.unwrap_err();
        assert_eq!(error.kind(), WebErrorKind::Refused, "{error}");
        let allowed = UrlPolicy::new().allow_addresses(AddressClass::Loopback);
        assert!(allowed.resolve("localhost").await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_lookup_that_never_answers_is_given_up_after_the_timeout() {
        let policy = UrlPolicy::new();
        let error = policy
            .resolve_with("slow.example", |_| std::future::pending())
            .await
            .unwrap_err();
        assert_eq!(error.kind(), WebErrorKind::Network, "{error}");
        assert!(
            error.message().contains("did not resolve within"),
            "{error}"
        );
        // A pinned name is not looked up at all.
        let pinned = policy.pin_host("slow.example", ["93.184.216.34".parse().unwrap()]);
        let found = pinned
            .resolve_with("slow.example", |_| std::future::pending())
            .await;
        assert_eq!(found.unwrap().len(), 1);
    }
}
