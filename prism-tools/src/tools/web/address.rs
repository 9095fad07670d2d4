//! Which kind of network an IP address belongs to, for the URL policy's refusals.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A class of addresses a fetch refuses unless the host allows it
/// ([`UrlPolicy::allow_addresses`](super::UrlPolicy::allow_addresses)).
///
/// Addresses outside every class (the public internet) are always reachable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressClass {
    /// `127.0.0.0/8`, `::1`: this machine.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`, the shared carrier space `100.64/10` and the old
    /// IPv6 site-local `fec0::/10`.
    Private,
    /// `169.254/16` and `fe80::/10`, other than the metadata addresses.
    LinkLocal,
    /// IPv6 unique-local addresses, `fc00::/7`, other than the metadata addresses.
    UniqueLocal,
    /// `224/4` and `ff00::/8`.
    Multicast,
    /// Cloud instance metadata services: `169.254.169.254`, `169.254.170.2`,
    /// `100.100.100.200` and `fd00:ec2::254`. Kept apart from link-local so that allowing the
    /// local network does not also hand out cloud credentials.
    Metadata,
    /// `0.0.0.0/8` and `::`, which many systems route to this machine.
    Unspecified,
    /// Other special-purpose IPv4 space: `192.0.0.0/24`, `198.18/15`, `240/4` and broadcast.
    Reserved,
}

/// The class of `ip`, or `None` for a public address. IPv6 forms that embed an IPv4 address
/// (mapped, compatible, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that address,
/// since the packet ends up there.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, c, _] = ip.octets();
    let class = match (a, b) {
        _ if is_v4_metadata(ip) => AddressClass::Metadata,
        (0, _) => AddressClass::Unspecified,
        (127, _) => AddressClass::Loopback,
        (10, _) | (172, 16..=31) | (192, 168) | (100, 64..=127) => AddressClass::Private,
        (169, 254) => AddressClass::LinkLocal,
        (224..=239, _) => AddressClass::Multicast,
        (240..=255, _) | (198, 18..=19) => AddressClass::Reserved,
        (192, 0) if c == 0 => AddressClass::Reserved,
        _ => return None,
    };
    Some(class)
}

fn is_v4_metadata(ip: Ipv4Addr) -> bool {
    matches!(
        ip.octets(),
        [169, 254, 169, 254] | [169, 254, 170, 2] | [100, 100, 100, 200]
    )
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let first = ip.segments()[0];
    let class = if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        AddressClass::Metadata
    } else if ip.is_unspecified() {
        AddressClass::Unspecified
    } else if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip.is_unicast_link_local() {
        AddressClass::LinkLocal
    } else if ip.is_unique_local() {
        AddressClass::UniqueLocal
    } else if ip.is_multicast() {
        AddressClass::Multicast
    } else if first & 0xffc0 == 0xfec0 {
        AddressClass::Private
    } else {
        return None;
    };
    Some(class)
}

/// The IPv4 address inside an IPv6 form that carries one, if any.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        // ::ffff:a.b.c.d (mapped)
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(low),
        // ::a.b.c.d (compatible), but not :: or ::1
        [0, 0, 0, 0, 0, 0, _, _] if !ip.is_unspecified() && !ip.is_loopback() => Some(low),
        // NAT64 well-known prefix
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        // 6to4: the IPv4 address sits in bits 16..48
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new(
            (hi >> 8) as u8,
            hi as u8,
            (lo >> 8) as u8,
            lo as u8,
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<AddressClass> {
        classify(text.parse().unwrap())
    }

    #[test]
    fn each_dangerous_range_has_its_class() {
        assert_eq!(class("127.0.0.1"), Some(AddressClass::Loopback));
        assert_eq!(class("::1"), Some(AddressClass::Loopback));
        assert_eq!(class("10.0.0.1"), Some(AddressClass::Private));
        assert_eq!(class("172.31.255.255"), Some(AddressClass::Private));
        assert_eq!(class("192.168.1.1"), Some(AddressClass::Private));
        assert_eq!(class("100.64.0.1"), Some(AddressClass::Private));
        assert_eq!(class("169.254.169.254"), Some(AddressClass::Metadata));
        assert_eq!(class("100.100.100.200"), Some(AddressClass::Metadata));
        assert_eq!(class("fd00:ec2::254"), Some(AddressClass::Metadata));
        assert_eq!(class("169.254.1.1"), Some(AddressClass::LinkLocal));
        assert_eq!(class("fe80::1"), Some(AddressClass::LinkLocal));
        assert_eq!(class("fd12:3456::1"), Some(AddressClass::UniqueLocal));
        assert_eq!(class("ff02::1"), Some(AddressClass::Multicast));
        assert_eq!(class("239.1.1.1"), Some(AddressClass::Multicast));
        assert_eq!(class("0.0.0.0"), Some(AddressClass::Unspecified));
        assert_eq!(class("::"), Some(AddressClass::Unspecified));
        assert_eq!(class("255.255.255.255"), Some(AddressClass::Reserved));
    }

    #[test]
    fn embedded_ipv4_is_judged_by_the_address_it_carries() {
        assert_eq!(class("::ffff:127.0.0.1"), Some(AddressClass::Loopback));
        assert_eq!(
            class("::ffff:169.254.169.254"),
            Some(AddressClass::Metadata)
        );
        assert_eq!(class("64:ff9b::a00:1"), Some(AddressClass::Private));
        assert_eq!(class("2002:a9fe:a9fe::1"), Some(AddressClass::Metadata));
        assert_eq!(class("::ffff:8.8.8.8"), None);
    }

    #[test]
    fn public_addresses_have_no_class() {
        for public in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "2606:4700:4700::1111",
            "100.128.0.1",
        ] {
            assert_eq!(class(public), None, "{public}");
        }
    }
}
