//! Which git URLs the service clones: `https://host[:port]/path` and nothing else, where every
//! address the host has is public unless an operator named the host in `allowed_internal_hosts`.
//!
//! The URL is parsed strictly and then rebuilt ([`ParsedUrl::url`]): git is handed the rebuilt
//! text, so the host git (and curl under it) connects to is the very string that was checked and
//! pinned, whatever leniencies either parser has. Hence the refusals of forms a browser would
//! accept: numeric hosts other than four decimal numbers (`0x7f.1`, `2130706433`, `127.1` all
//! mean 127.0.0.1 to some parser), IPv6 zone ids, queries and fragments, non-ASCII characters.
//!
//! Errors repeat the URL escaped for a screen and with any `user:password@` replaced by `***@`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use super::address::classify;
use super::error::{IntakeError, UrlRule};

/// The operator's limits on cloning from a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPolicy {
    /// Host names (or IP literals) that may resolve to non-public addresses: an internal git
    /// server the operator trusts. Compared with the URL's host after lowercasing.
    pub allowed_internal_hosts: Vec<String>,
    /// Most commits of history fetched (`--depth`); a request may ask for fewer.
    pub max_depth: u32,
    /// Most bytes of fetched objects on disk, and most bytes of the checked-out files.
    pub max_bytes: u64,
    /// Most entries in the checked-out tree.
    pub max_files: u64,
    /// Wall-clock limit of the whole clone; git is killed with its process group past it. Each
    /// git call is also held to the crate's own limit of five minutes.
    pub timeout: Duration,
    /// A CA bundle git trusts instead of the system's (`GIT_SSL_CAINFO`): for an internal server
    /// with its own CA, and for tests. Never taken from the environment.
    pub ca_file: Option<PathBuf>,
}

impl Default for UrlPolicy {
    /// 50 commits, 1 GiB, 200,000 files, five minutes, no internal hosts, the system's CAs.
    fn default() -> Self {
        UrlPolicy {
            allowed_internal_hosts: Vec::new(),
            max_depth: 50,
            max_bytes: 1 << 30,
            max_files: 200_000,
            timeout: Duration::from_secs(300),
            ca_file: None,
        }
    }
}

impl UrlPolicy {
    /// True when the operator allowed `host` to resolve to internal addresses.
    pub fn allows_internal(&self, host: &Host) -> bool {
        self.allowed_internal_hosts.iter().any(|allowed| {
            let allowed = allowed.trim().trim_end_matches('.').to_ascii_lowercase();
            let bare = allowed.trim_start_matches('[').trim_end_matches(']');
            match host {
                Host::Ip(ip) => bare.parse::<IpAddr>().is_ok_and(|a| a == *ip),
                Host::Name(name) => *name == allowed,
            }
        })
    }
}

/// The host of a checked URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// A DNS name, lowercase, without a trailing dot.
    Name(String),
    /// An IP literal (`127.0.0.1`, `[::1]`).
    Ip(IpAddr),
}

impl Host {
    /// The host as it appears in the rebuilt URL and in curl's resolve entry (`[::1]` bracketed).
    pub fn for_url(&self) -> String {
        match self {
            Host::Name(name) => name.clone(),
            Host::Ip(IpAddr::V4(v4)) => v4.to_string(),
            Host::Ip(IpAddr::V6(v6)) => format!("[{v6}]"),
        }
    }
}

/// A URL that passed [`check_url`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedUrl {
    pub host: Host,
    pub port: u16,
    /// Starts with `/`; percent-escapes kept as given.
    pub path: String,
}

impl ParsedUrl {
    /// The URL git is given, rebuilt from the checked parts (the port only when it is not 443).
    pub fn url(&self) -> String {
        let port = if self.port == 443 {
            String::new()
        } else {
            format!(":{}", self.port)
        };
        format!("https://{}{port}{}", self.host.for_url(), self.path)
    }
}

/// Checks `url` without touching the network. See the module header for the rules.
pub fn check_url(url: &str) -> Result<ParsedUrl, IntakeError> {
    let refuse = |rule| IntakeError::Url {
        url: redacted(url),
        rule,
    };
    if url.is_empty() {
        return Err(refuse(UrlRule::Empty));
    }
    if url.starts_with('-') {
        return Err(refuse(UrlRule::LeadingDash));
    }
    let scheme_end = url.find(':');
    if let Some(end) = scheme_end
        && url.get(end..).is_some_and(|rest| rest.starts_with("::"))
        && url
            .get(..end)
            .is_some_and(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric()))
    {
        return Err(refuse(UrlRule::TransportHelper));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(refuse(UrlRule::ControlChar));
    }
    if !url.is_ascii() {
        return Err(refuse(UrlRule::NonAscii));
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(refuse(UrlRule::NotUrl));
    };
    if scheme.is_empty() || scheme.contains(['/', '@']) {
        return Err(refuse(UrlRule::NotUrl));
    }
    if !scheme.eq_ignore_ascii_case("https") {
        return Err(refuse(UrlRule::NotHttps {
            scheme: format!("{}://", scheme.to_ascii_lowercase()),
        }));
    }
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    if authority.contains('@') {
        return Err(refuse(UrlRule::Credentials));
    }
    if path.contains(['?', '#']) {
        return Err(refuse(UrlRule::QueryOrFragment));
    }
    let (host, port) = split_host_port(authority).map_err(refuse)?;
    check_path(path).map_err(refuse)?;
    Ok(ParsedUrl {
        host,
        port,
        path: path.to_owned(),
    })
}

/// The host and port of an authority without userinfo.
fn split_host_port(authority: &str) -> Result<(Host, u16), UrlRule> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest.split_once(']').ok_or(UrlRule::Host {
            detail: "opens a `[` it does not close",
        })?;
        let ip: Ipv6Addr = inside.parse().map_err(|_| UrlRule::Host {
            detail: "is not an IPv6 address inside `[]` (zone ids such as %eth0 are not taken)",
        })?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or(UrlRule::Port)?),
        };
        (Host::Ip(IpAddr::V6(ip)), port)
    } else {
        let (name, port) = match authority.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (authority, None),
        };
        (host_name(name)?, port)
    };
    let port = match port {
        None => 443,
        Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => digits
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or(UrlRule::Port)?,
        Some(_) => return Err(UrlRule::Port),
    };
    Ok((host, port))
}

/// A host that is not bracketed: four decimal numbers, or a DNS name of letters, digits and `-`.
fn host_name(name: &str) -> Result<Host, UrlRule> {
    let name = name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase();
    if name.is_empty() {
        return Err(UrlRule::Host { detail: "is empty" });
    }
    // Rust's parser takes exactly four decimal numbers without leading zeros.
    if let Ok(v4) = name.parse::<Ipv4Addr>() {
        return Ok(Host::Ip(IpAddr::V4(v4)));
    }
    let labels: Vec<&str> = name.split('.').collect();
    let good_label = |label: &&str| {
        (1..=63).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if name.len() > 253 || !labels.iter().all(good_label) {
        return Err(UrlRule::Host {
            detail: "is not a DNS name (letters, digits and `-` between dots) or an IP address",
        });
    }
    let last = labels.last().copied().unwrap_or_default();
    let numeric = last.bytes().all(|b| b.is_ascii_digit())
        || (last.starts_with("0x") && last.bytes().skip(2).all(|b| b.is_ascii_hexdigit()));
    if numeric {
        return Err(UrlRule::Host {
            detail: "is a number in a form parsers read differently (hex, octal or fewer than \
                     four parts); write an IPv4 address as four decimal numbers",
        });
    }
    Ok(Host::Name(name))
}

/// The path names a repository and holds only characters a URL path may hold unescaped.
fn check_path(path: &str) -> Result<(), UrlRule> {
    if path.trim_matches('/').is_empty() {
        return Err(UrlRule::Path {
            detail: "is empty; give the repository's path, e.g. /owner/project.git",
        });
    }
    let bytes = path.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(b);
        let escape = *b == b'%'
            && bytes
                .get(i + 1..i + 3)
                .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit));
        if !plain && !escape {
            return Err(UrlRule::Path {
                detail: "holds a character a URL path may not hold unescaped (percent-encode it)",
            });
        }
    }
    Ok(())
}

/// `url` as an error may show it: credentials replaced, escaped, cut.
pub(crate) fn redacted(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let text = match authority.rsplit_once('@') {
        Some((_, host)) => format!("{scheme}***@{host}{path}"),
        None => url.to_owned(),
    };
    super::shown(&text)
}

/// The addresses `url`'s host has, each checked: an IP literal is its own address, a name is
/// resolved by the system resolver (which also bounds how long that takes). Every address must be
/// public unless the operator allowed the host, and even then the unspecified, broadcast and
/// multicast addresses are refused. Returned IPv4 first, without repeats, in the order to pin.
pub fn resolve_public(url: &ParsedUrl, policy: &UrlPolicy) -> Result<Vec<IpAddr>, IntakeError> {
    let shown = super::shown(&url.url());
    let (mut addresses, resolved) = match &url.host {
        Host::Ip(ip) => (vec![*ip], false),
        Host::Name(name) => {
            let found = (name.as_str(), url.port).to_socket_addrs().map_err(|err| {
                IntakeError::Unresolved {
                    url: shown.clone(),
                    detail: super::shown(&err.to_string()),
                }
            })?;
            (found.map(|addr| addr.ip()).collect::<Vec<_>>(), true)
        }
    };
    addresses.sort_by_key(IpAddr::is_ipv6);
    let mut seen = Vec::with_capacity(addresses.len());
    addresses.retain(|ip| {
        let fresh = !seen.contains(ip);
        seen.push(*ip);
        fresh
    });
    if addresses.is_empty() {
        return Err(IntakeError::Unresolved {
            url: shown,
            detail: "it has no address".into(),
        });
    }
    let allowed = policy.allows_internal(&url.host);
    for address in &addresses {
        let class = classify(*address);
        if class.is_public() || (allowed && !class.never_allowed()) {
            continue;
        }
        return Err(IntakeError::Address {
            url: shown,
            address: *address,
            class,
            resolved,
        });
    }
    Ok(addresses)
}
