//! What a request's head must say before anything else reads it: exactly one `Host`, naming this
//! server (without userinfo, and the same authority an absolute-form target names), and at most
//! one `Origin`, a listed one.
//!
//! These run before the rate limit, so a request refused here costs its client nothing: a page
//! in the user's browser cannot use up the local client's budget with requests the server
//! refuses anyway. They are the only `Host` and `Origin` checks (rmcp's are turned off), and
//! refuse what rmcp's would let through: a second `Host` or `Origin` header, userinfo, an
//! absolute-form target naming another host.

use http::header::{HOST, ORIGIN};
use http::uri::Authority;
use http::{Request, StatusCode, Uri};

use crate::host_name::normalise_host;

/// The hosts and origins a server answers, parsed once from its
/// [`HttpOptions`](super::HttpOptions).
pub(super) struct HeadRules {
    /// Whether any host is accepted: only when the list given was empty, never because none of
    /// its entries parsed.
    any_host: bool,
    hosts: Vec<HostRule>,
    origins: Vec<OriginRule>,
    /// Whether `Origin: null` (a sandboxed page, a file) was listed.
    null_origin: bool,
}

/// A host name, and the one port it may come with (`None`: any).
struct HostRule {
    host: String,
    port: Option<u16>,
}

/// A scheme and host, and the one port (`None`: any, from a `:*` entry).
struct OriginRule {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl HeadRules {
    /// Rules from `host:port` or bare host entries (none: any host), and `scheme://host:port`,
    /// `scheme://host:*` or `null` origins. An entry that does not parse allows nothing.
    pub(super) fn new(hosts: &[String], origins: &[String]) -> Self {
        let any_host = hosts.is_empty();
        let hosts = hosts
            .iter()
            .map(|entry| entry.trim())
            .filter_map(|entry| match authority(entry) {
                Some((host, port)) => Some(HostRule { host, port }),
                // A bare IPv6 address (`::1`) is not an authority.
                None => (!entry.contains(['/', '@'])).then(|| HostRule {
                    host: normalise_host(entry),
                    port: None,
                }),
            })
            .collect();
        let null_origin = origins.iter().any(|entry| entry.trim() == "null");
        let origins = origins
            .iter()
            .map(|entry| entry.trim())
            .filter_map(|entry| match entry.strip_suffix(":*") {
                Some(any_port) => origin(any_port).map(|(scheme, host, _)| OriginRule {
                    scheme,
                    host,
                    port: None,
                }),
                None => origin(entry).map(|(scheme, host, port)| OriginRule {
                    scheme,
                    host,
                    port: Some(port),
                }),
            })
            .collect();
        Self {
            any_host,
            hosts,
            origins,
            null_origin,
        }
    }

    /// The status refusing `request`, or `None` when its head is acceptable.
    pub(super) fn refusal<B>(&self, request: &Request<B>) -> Option<StatusCode> {
        let headers = request.headers();
        let mut hosts = headers.get_all(HOST).iter();
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return Some(StatusCode::BAD_REQUEST);
        };
        let Some((host, port)) = host.to_str().ok().and_then(authority) else {
            return Some(StatusCode::BAD_REQUEST);
        };
        if let Some(target) = request.uri().authority()
            && authority(target.as_str()) != Some((host.clone(), port))
        {
            return Some(StatusCode::BAD_REQUEST);
        }
        let host_allowed = self.any_host
            || self
                .hosts
                .iter()
                .any(|rule| rule.host == host && rule.port.is_none_or(|only| port == Some(only)));
        if !host_allowed {
            return Some(StatusCode::FORBIDDEN);
        }
        let mut origins = headers.get_all(ORIGIN).iter();
        match (origins.next(), origins.next()) {
            (None, _) => None,
            (Some(value), None) if self.null_origin && value.as_bytes() == b"null" => None,
            (Some(value), None) => {
                let allowed =
                    value
                        .to_str()
                        .ok()
                        .and_then(origin)
                        .is_some_and(|(scheme, host, port)| {
                            self.origins.iter().any(|rule| {
                                rule.scheme == scheme
                                    && rule.host == host
                                    && rule.port.is_none_or(|only| only == port)
                            })
                        });
                (!allowed).then_some(StatusCode::FORBIDDEN)
            }
            (Some(_), Some(_)) => Some(StatusCode::FORBIDDEN),
        }
    }
}

/// The host (lowercase, IPv6 without brackets) and port of `text`, an authority without
/// userinfo.
fn authority(text: &str) -> Option<(String, Option<u16>)> {
    if text.contains('@') {
        return None;
    }
    let parsed: Authority = text.parse().ok()?;
    Some((normalise_host(parsed.host()), parsed.port_u16()))
}

/// The scheme, host and port (the scheme's default when none is written) of an origin:
/// `scheme://host[:port]` and nothing more. `null` and anything else is not one.
fn origin(text: &str) -> Option<(String, String, u16)> {
    let uri: Uri = text.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let written = uri.authority()?;
    let (host, port) = authority(written.as_str())?;
    let bare = uri.path_and_query().is_none_or(|rest| rest.as_str() == "/");
    let port = port.or(match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    })?;
    bare.then_some((scheme, host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> HeadRules {
        HeadRules::new(
            &[
                "localhost".into(),
                "127.0.0.1".into(),
                "::1".into(),
                "example.com:8443".into(),
            ],
            &[
                "http://localhost:*".into(),
                "https://app.example.com".into(),
            ],
        )
    }

    fn status(headers: &[(&str, &str)], target: &str) -> Option<u16> {
        let mut request = Request::builder().uri(target);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        rules()
            .refusal(&request.body(()).unwrap())
            .map(|status| status.as_u16())
    }

    #[test]
    fn the_listed_hosts_pass_on_any_port_or_their_own() {
        for host in [
            "localhost:8000",
            "LOCALHOST",
            "127.0.0.1:1",
            "[::1]:9",
            "example.com:8443",
        ] {
            assert_eq!(status(&[("host", host)], "/mcp"), None, "{host}");
        }
    }

    #[test]
    fn other_hosts_are_forbidden() {
        for host in [
            "attacker.example",
            "localhost.",
            "example.com:8444",
            "example.com",
        ] {
            assert_eq!(status(&[("host", host)], "/mcp"), Some(403), "{host}");
        }
    }

    #[test]
    fn a_host_that_is_not_one_plain_authority_is_a_bad_request() {
        assert_eq!(status(&[], "/mcp"), Some(400), "no Host");
        let two = [("host", "localhost"), ("host", "attacker.example")];
        assert_eq!(status(&two, "/mcp"), Some(400), "two Hosts");
        let userinfo = [("host", "attacker.example@localhost:8000")];
        assert_eq!(status(&userinfo, "/mcp"), Some(400), "userinfo");
        let absolute = [("host", "localhost")];
        assert_eq!(status(&absolute, "http://attacker.example/mcp"), Some(400));
        assert_eq!(
            status(&absolute, "http://localhost/mcp"),
            None,
            "the same authority"
        );
    }

    #[test]
    fn an_empty_host_list_takes_any_host_and_null_is_listed_explicitly() {
        let open = HeadRules::new(&[], &["null".into()]);
        let request = |host: &str, origin: &str| {
            let request = Request::builder()
                .header("host", host)
                .header("origin", origin)
                .body(())
                .unwrap();
            open.refusal(&request).map(|status| status.as_u16())
        };
        assert_eq!(request("anything.example", "null"), None);
        assert_eq!(request("a@anything.example", "null"), Some(400));
        assert_eq!(request("anything.example", "http://localhost"), Some(403));
    }

    #[test]
    fn a_host_list_whose_entries_all_fail_to_parse_allows_no_host() {
        // A URL or userinfo where a host was meant: the list is not empty, so it is not "any".
        for entry in ["http://localhost:8000", "user@localhost"] {
            let rules = HeadRules::new(&[entry.into()], &[]);
            for host in ["localhost", "localhost:8000", "attacker.example"] {
                let request = Request::builder().header("host", host).body(()).unwrap();
                assert_eq!(
                    rules.refusal(&request).map(|status| status.as_u16()),
                    Some(403),
                    "{entry} let {host} in"
                );
            }
        }
    }

    #[test]
    fn an_ip_address_is_the_same_host_however_it_is_written() {
        // `::1` is listed; these name the same address.
        for host in ["[0:0:0:0:0:0:0:1]:8000", "[0::1]", "[::0001]:9"] {
            assert_eq!(status(&[("host", host)], "/mcp"), None, "{host}");
        }
        let rules = HeadRules::new(
            &["0:0:0:0:0:0:0:1".into(), "[2001:DB8:0::1]:8443".into()],
            &["http://[0:0::1]:*".into()],
        );
        let refusal = |host: &str, origin: &str| {
            let request = Request::builder()
                .header("host", host)
                .header("origin", origin)
                .body(())
                .unwrap();
            rules.refusal(&request).map(|status| status.as_u16())
        };
        assert_eq!(refusal("[::1]:8000", "http://[::1]:3000"), None);
        assert_eq!(refusal("[2001:db8::1]:8443", "http://[::1]"), None);
        assert_eq!(refusal("[2001:db8::2]:8443", "http://[::1]"), Some(403));
        assert_eq!(refusal("[::1]", "http://[::2]:3000"), Some(403));
    }

    #[test]
    fn origins_must_be_listed_and_single() {
        let host = ("host", "localhost");
        for allowed in [
            "http://localhost:3000",
            "HTTP://LOCALHOST:1",
            "https://app.example.com",
        ] {
            assert_eq!(
                status(&[host, ("origin", allowed)], "/mcp"),
                None,
                "{allowed}"
            );
        }
        for refused in [
            "null",
            "file://",
            "http://attacker.example",
            "https://localhost:3000",
            "https://app.example.com:444",
            "http://attacker.example@localhost:3000",
            "http://localhost:3000/path",
        ] {
            assert_eq!(
                status(&[host, ("origin", refused)], "/mcp"),
                Some(403),
                "{refused}"
            );
        }
        let two = [
            host,
            ("origin", "http://localhost:1"),
            ("origin", "http://evil.example"),
        ];
        assert_eq!(status(&two, "/mcp"), Some(403));
    }
}
