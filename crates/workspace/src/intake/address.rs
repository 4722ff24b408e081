//! Which IP addresses are public: the ranges a clone may never reach unless an operator allows a
//! named host (`allowed_internal_hosts`), with the IANA special-purpose registries as the source.
//!
//! IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
//! `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address inside:
//! `::ffff:127.0.0.1` reaches the loopback as surely as `127.0.0.1` does. Ranges whose embedded
//! address cannot be read from the address alone (local-use NAT64 `64:ff9b:1::/48`, Teredo,
//! whose client address is obfuscated) are refused whole. Outside the forms above, an IPv6
//! address is public only in global unicast `2000::/3`, less its special ranges.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What an address is, as far as reaching it from the service goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressClass {
    Public,
    Loopback,
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`).
    Private,
    /// `169.254/16`, `fe80::/10`: where cloud metadata services answer.
    LinkLocal,
    /// `100.64/10`, carrier-grade NAT.
    SharedCgnat,
    Unspecified,
    Broadcast,
    Multicast,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18/15`, `2001:2::/48`.
    Benchmarking,
    /// `fc00::/7`.
    UniqueLocal,
    /// `fec0::/10`, deprecated but still routed inside some networks.
    SiteLocal,
    /// `2001::/32`.
    Teredo,
    /// `64:ff9b:1::/48`, translation inside one network.
    LocalNat64,
    /// Any other range that is not global unicast (`0/8`, `240/4`, IETF protocol assignments).
    Reserved,
    /// An IPv6 form of an IPv4 address that is not public.
    Embedded {
        form: Embedding,
        v4: Ipv4Addr,
        class: Box<AddressClass>,
    },
}

/// How an IPv6 address carries an IPv4 one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedding {
    /// `::ffff:a.b.c.d`.
    Mapped,
    /// `::a.b.c.d` (deprecated).
    Compatible,
    /// `64:ff9b::a.b.c.d`.
    Nat64,
    /// `2002:AABB:CCDD::/48`.
    SixToFour,
}

impl AddressClass {
    pub fn is_public(&self) -> bool {
        matches!(self, AddressClass::Public)
    }

    /// Classes no operator setting makes reachable: they name no single host.
    pub(crate) fn never_allowed(&self) -> bool {
        match self {
            AddressClass::Unspecified | AddressClass::Broadcast | AddressClass::Multicast => true,
            AddressClass::Embedded { class, .. } => class.never_allowed(),
            AddressClass::Public
            | AddressClass::Loopback
            | AddressClass::Private
            | AddressClass::LinkLocal
            | AddressClass::SharedCgnat
            | AddressClass::Documentation
            | AddressClass::Benchmarking
            | AddressClass::UniqueLocal
            | AddressClass::SiteLocal
            | AddressClass::Teredo
            | AddressClass::LocalNat64
            | AddressClass::Reserved => false,
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            AddressClass::Public => "a public address",
            AddressClass::Loopback => "a loopback address",
            AddressClass::Private => "a private address",
            AddressClass::LinkLocal => "a link-local address",
            AddressClass::SharedCgnat => "a shared (carrier-grade NAT) address",
            AddressClass::Unspecified => "the unspecified address",
            AddressClass::Broadcast => "the broadcast address",
            AddressClass::Multicast => "a multicast address",
            AddressClass::Documentation => "a documentation address",
            AddressClass::Benchmarking => "a benchmarking address",
            AddressClass::UniqueLocal => "a unique local address",
            AddressClass::SiteLocal => "a site-local address",
            AddressClass::Teredo => "a Teredo address",
            AddressClass::LocalNat64 => "a local-use NAT64 address",
            AddressClass::Reserved => "a reserved address",
            AddressClass::Embedded { form, v4, class } => {
                let form = match form {
                    Embedding::Mapped => "IPv4-mapped",
                    Embedding::Compatible => "IPv4-compatible",
                    Embedding::Nat64 => "NAT64",
                    Embedding::SixToFour => "6to4",
                };
                return write!(f, "the {form} form of {v4}, {class}");
            }
        };
        f.write_str(text)
    }
}

/// The class of `ip`. See the module header.
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let bits = u32::from(ip);
    let within = |net: [u8; 4], len: u32| prefix_match_v4(bits, u32::from_be_bytes(net), len);
    if bits == 0 {
        AddressClass::Unspecified
    } else if bits == u32::MAX {
        AddressClass::Broadcast
    } else if within([127, 0, 0, 0], 8) {
        AddressClass::Loopback
    } else if within([10, 0, 0, 0], 8)
        || within([172, 16, 0, 0], 12)
        || within([192, 168, 0, 0], 16)
    {
        AddressClass::Private
    } else if within([169, 254, 0, 0], 16) {
        AddressClass::LinkLocal
    } else if within([100, 64, 0, 0], 10) {
        AddressClass::SharedCgnat
    } else if within([192, 0, 2, 0], 24)
        || within([198, 51, 100, 0], 24)
        || within([203, 0, 113, 0], 24)
    {
        AddressClass::Documentation
    } else if within([198, 18, 0, 0], 15) {
        AddressClass::Benchmarking
    } else if within([224, 0, 0, 0], 4) {
        AddressClass::Multicast
    } else if within([0, 0, 0, 0], 8)
        || within([240, 0, 0, 0], 4)
        || within([192, 0, 0, 0], 24)
        || within([192, 88, 99, 0], 24)
    {
        AddressClass::Reserved
    } else {
        AddressClass::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    let bits = u128::from(ip);
    let within = |net: u128, len: u32| prefix_match_v6(bits, net, len);
    let low_v4 = Ipv4Addr::from(u32::try_from(bits & 0xffff_ffff).unwrap_or_default());
    if bits == 0 {
        return AddressClass::Unspecified;
    }
    if bits == 1 {
        return AddressClass::Loopback;
    }
    if within(0xffff_0000_0000, 96) {
        return embedded(Embedding::Mapped, low_v4);
    }
    if within(0, 96) {
        return embedded(Embedding::Compatible, low_v4);
    }
    if within(0x0064_ff9b << 96, 96) {
        return embedded(Embedding::Nat64, low_v4);
    }
    if within(0x0064_ff9b_0001 << 80, 48) {
        return AddressClass::LocalNat64;
    }
    if within(0x2002 << 112, 16) {
        let v4 = Ipv4Addr::from(u32::try_from((bits >> 80) & 0xffff_ffff).unwrap_or_default());
        return embedded(Embedding::SixToFour, v4);
    }
    if within(0xff << 120, 8) {
        AddressClass::Multicast
    } else if within(0xfe80 << 112, 10) {
        AddressClass::LinkLocal
    } else if within(0xfec0 << 112, 10) {
        AddressClass::SiteLocal
    } else if within(0xfc << 120, 7) {
        AddressClass::UniqueLocal
    } else if within(0x2001_0db8 << 96, 32) || within(0x3fff << 112, 20) {
        AddressClass::Documentation
    } else if within(0x2001_0002 << 96, 48) {
        AddressClass::Benchmarking
    } else if within(0x2001 << 112, 32) {
        AddressClass::Teredo
    } else if within(0x2001 << 112, 23) || !within(0x2 << 124, 3) {
        // 2001::/23 holds the IETF protocol assignments (ORCHID, AMT, AS112): no git server.
        AddressClass::Reserved
    } else {
        AddressClass::Public
    }
}

/// The class of an IPv6 form of `v4`: public when `v4` is, else the embedding of its class.
fn embedded(form: Embedding, v4: Ipv4Addr) -> AddressClass {
    match classify_v4(v4) {
        AddressClass::Public => AddressClass::Public,
        class => AddressClass::Embedded {
            form,
            v4,
            class: Box::new(class),
        },
    }
}

fn prefix_match_v4(bits: u32, net: u32, len: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
    bits & mask == net & mask
}

fn prefix_match_v6(bits: u128, net: u128, len: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
    bits & mask == net & mask
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn ranges_of_both_families_are_classified_with_embedded_ipv4_judged_inside() {
        let cases = [
            "8.8.8.8",
            "1.1.1.1",
            "0.0.0.0",
            "0.1.2.3",
            "127.0.0.1",
            "127.255.255.254",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "172.32.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "100.128.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "198.18.0.1",
            "198.19.255.255",
            "192.88.99.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:8.8.8.8",
            "::10.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::808:808",
            "64:ff9b:1::a00:1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "2002:808:808::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "2001:db8::1",
            "3fff::1",
            "2001:2::1",
            "2001:0:4136:e378::1",
            "2001:20::1",
            "100::1",
            "4000::1",
        ];

        let actual: Vec<String> = cases
            .iter()
            .map(|case| format!("{case} {}", classify(case.parse().unwrap())))
            .collect();

        let expected = [
            "8.8.8.8 a public address",
            "1.1.1.1 a public address",
            "0.0.0.0 the unspecified address",
            "0.1.2.3 a reserved address",
            "127.0.0.1 a loopback address",
            "127.255.255.254 a loopback address",
            "10.0.0.1 a private address",
            "172.16.0.1 a private address",
            "172.31.255.255 a private address",
            "172.32.0.1 a public address",
            "192.168.1.1 a private address",
            "169.254.169.254 a link-local address",
            "100.64.0.1 a shared (carrier-grade NAT) address",
            "100.127.255.255 a shared (carrier-grade NAT) address",
            "100.128.0.1 a public address",
            "192.0.0.8 a reserved address",
            "192.0.2.1 a documentation address",
            "198.51.100.7 a documentation address",
            "203.0.113.9 a documentation address",
            "198.18.0.1 a benchmarking address",
            "198.19.255.255 a benchmarking address",
            "192.88.99.1 a reserved address",
            "224.0.0.1 a multicast address",
            "239.255.255.250 a multicast address",
            "240.0.0.1 a reserved address",
            "255.255.255.255 the broadcast address",
            "2606:4700::1111 a public address",
            "2a00:1450:4001::200e a public address",
            ":: the unspecified address",
            "::1 a loopback address",
            "::ffff:127.0.0.1 the IPv4-mapped form of 127.0.0.1, a loopback address",
            "::ffff:8.8.8.8 a public address",
            "::10.0.0.1 the IPv4-compatible form of 10.0.0.1, a private address",
            "64:ff9b::7f00:1 the NAT64 form of 127.0.0.1, a loopback address",
            "64:ff9b::808:808 a public address",
            "64:ff9b:1::a00:1 a local-use NAT64 address",
            "2002:7f00:1:: the 6to4 form of 127.0.0.1, a loopback address",
            "2002:a9fe:a9fe::1 the 6to4 form of 169.254.169.254, a link-local address",
            "2002:808:808::1 a public address",
            "fe80::1 a link-local address",
            "febf::1 a link-local address",
            "fec0::1 a site-local address",
            "fc00::1 a unique local address",
            "fd12:3456::1 a unique local address",
            "ff02::1 a multicast address",
            "2001:db8::1 a documentation address",
            "3fff::1 a documentation address",
            "2001:2::1 a benchmarking address",
            "2001:0:4136:e378::1 a Teredo address",
            "2001:20::1 a reserved address",
            "100::1 a reserved address",
            "4000::1 a reserved address",
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn only_addresses_that_name_no_host_stay_refused_for_an_allowed_host() {
        let actual: Vec<bool> = [
            "0.0.0.0",
            "255.255.255.255",
            "ff02::1",
            "::ffff:0.0.0.0",
            "127.0.0.1",
            "10.0.0.1",
        ]
        .iter()
        .map(|ip| classify(ip.parse().unwrap()).never_allowed())
        .collect();

        assert_eq!(actual, [true, true, true, true, false, false]);
    }
}
