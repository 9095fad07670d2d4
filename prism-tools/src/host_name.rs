//! One spelling per host name, so that a list entry and the host of a URL or a `Host` header
//! that name one host compare equal: the web tools' allow and deny lists and the MCP server's
//! allowed hosts and origins both compare through it.

/// `host` as a URL's host is written: without IPv6 brackets, a domain in lower-case ASCII
/// (`bücher.example` as `xn--bcher-kva.example`), an IP address in its canonical form
/// (`fd00:0:0:0:0:0:0:5` as `fd00::5`, `0x7f.1` as `127.0.0.1`). Text that is no host at all is
/// only lower-cased. A trailing dot stays: whether `example.com.` is `example.com` is the
/// caller's rule.
pub(crate) fn normalise_host(host: &str) -> String {
    let bare = host.trim().trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return ip.to_string();
    }
    match url::Host::parse(bare) {
        Ok(url::Host::Domain(domain)) => domain,
        Ok(url::Host::Ipv4(ip)) => ip.to_string(),
        Ok(url::Host::Ipv6(ip)) => ip.to_string(),
        Err(_) => bare.to_ascii_lowercase(),
    }
}
