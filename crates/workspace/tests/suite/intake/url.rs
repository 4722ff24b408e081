//! Git URLs under the policy: what is refused (and that nothing is written for it), how
//! accepted URLs are rebuilt, when an operator's internal host passes, and the exact clone
//! command line with its pinning and its switches.

use std::ffi::OsString;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use plumb_workspace::intake::{
    CloneRequest, GitInvocation, Host, UrlPolicy, check_url, clone_invocation, clone_repository,
    resolve_public,
};
use pretty_assertions::assert_eq;

const ADVICE: &str = "plumb clones only from public addresses (an operator may allow a named \
                      internal host with `--allow-internal-host HOST`)";

#[test]
fn urls_off_the_policy_are_refused_with_the_reason_and_nothing_is_written() {
    let urls = [
        "https://127.0.0.1/x.git",
        "https://localhost/x.git",
        "https://169.254.169.254/latest",
        "https://[::ffff:127.0.0.1]/x",
        "https://[64:ff9b::7f00:1]/x",
        "https://10.0.0.1/x",
        "https://[fe80::1%25eth0]/x",
        "https://0x7f.1/x",
        "https://2130706433/x",
        "http://example.com/x",
        "ssh://git@example.com/x.git",
        "git://example.com/x.git",
        "file:///etc/passwd",
        "git@github.com:owner/x.git",
        "ext::sh -c touch% /tmp/pwned",
        "-uhttps://example.com/x",
        "https://user:hunter2@example.com/x.git",
        "https://example.com/x.git\u{1b}[31mfake",
        "https://example.com/x.git?ref=main",
        "https://example.com:99999/x.git",
        "https://example.com/",
    ];

    let mut actual = Vec::new();
    for url in urls {
        let tmp = tempfile::TempDir::new().unwrap();
        let dest = tmp.path().join("dest");
        let request = CloneRequest {
            url,
            dest: &dest,
            branch: None,
            depth: None,
        };
        let err = clone_repository(&request, &UrlPolicy::default()).unwrap_err();
        actual.push((err.to_string(), err.is_infra(), dest.exists()));
    }

    let refused = |text: String| (text, false, false);
    let https_only = |url: &str, scheme: &str| {
        refused(format!(
            "{url} is refused: plumb clones over https only, and this is {scheme}; give the \
             https:// URL of the repository"
        ))
    };
    let not_public =
        |url: &str, verb: &str, what: &str| refused(format!("{url} {verb} {what}; {ADVICE}"));
    let numeric = "its host is a number in a form parsers read differently (hex, octal or fewer \
                   than four parts); write an IPv4 address as four decimal numbers";
    let expected = vec![
        not_public(
            "https://127.0.0.1/x.git",
            "names",
            "127.0.0.1, a loopback address",
        ),
        not_public(
            "https://localhost/x.git",
            "resolves to",
            "127.0.0.1, a loopback address",
        ),
        not_public(
            "https://169.254.169.254/latest",
            "names",
            "169.254.169.254, a link-local address",
        ),
        not_public(
            "https://[::ffff:127.0.0.1]/x",
            "names",
            "::ffff:127.0.0.1, the IPv4-mapped form of 127.0.0.1, a loopback address",
        ),
        not_public(
            "https://[64:ff9b::7f00:1]/x",
            "names",
            "64:ff9b::7f00:1, the NAT64 form of 127.0.0.1, a loopback address",
        ),
        not_public("https://10.0.0.1/x", "names", "10.0.0.1, a private address"),
        refused(
            "https://[fe80::1%25eth0]/x is refused: its host is not an IPv6 address inside `[]` \
             (zone ids such as %eth0 are not taken)"
                .to_owned(),
        ),
        refused(format!("https://0x7f.1/x is refused: {numeric}")),
        refused(format!("https://2130706433/x is refused: {numeric}")),
        https_only("http://example.com/x", "http://"),
        https_only("ssh://***@example.com/x.git", "ssh://"),
        https_only("git://example.com/x.git", "git://"),
        https_only("file:///etc/passwd", "file://"),
        refused(
            "***@github.com:owner/x.git is refused: it is not a URL (an ssh `host:path` address \
             or a local path); give the https:// URL of the repository"
                .to_owned(),
        ),
        refused(
            "ext::sh -c touch% /tmp/pwned is refused: it names a git transport helper \
             (`<transport>::<address>`); give an https:// URL"
                .to_owned(),
        ),
        refused(
            "-uhttps://example.com/x is refused: it starts with `-`, which git would read as an \
             option"
                .to_owned(),
        ),
        refused(
            "https://***@example.com/x.git is refused: it carries a user name or password; plumb \
             clones public repositories without credentials, so remove the part before `@`"
                .to_owned(),
        ),
        refused(
            "https://example.com/x.git<U+001B>[31mfake is refused: it holds a space or a control \
             character"
                .to_owned(),
        ),
        refused(
            "https://example.com/x.git?ref=main is refused: it has a query (`?`) or a fragment \
             (`#`); give the repository's plain URL"
                .to_owned(),
        ),
        refused(
            "https://example.com:99999/x.git is refused: its port is not a number from 1 to 65535"
                .to_owned(),
        ),
        refused(
            "https://example.com/ is refused: its path is empty; give the repository's path, \
             e.g. /owner/project.git"
                .to_owned(),
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn accepted_urls_are_rebuilt_from_their_checked_parts() {
    let urls = [
        "https://github.com/owner/project.git",
        "HTTPS://GitHub.COM./owner/project",
        "https://git.example.com:443/a/b.git",
        "https://git.example.com:8443/a%20b.git",
        "https://93.184.216.34/x.git",
        "https://[2606:4700:0::1111]/x.git",
    ];

    let actual: Vec<(String, Host)> = urls
        .iter()
        .map(|url| {
            let parsed = check_url(url).unwrap();
            (parsed.url(), parsed.host)
        })
        .collect();

    let name = |host: &str| Host::Name(host.to_owned());
    let ip = |ip: &str| Host::Ip(ip.parse().unwrap());
    let expected = vec![
        (
            "https://github.com/owner/project.git".to_owned(),
            name("github.com"),
        ),
        (
            "https://github.com/owner/project".to_owned(),
            name("github.com"),
        ),
        (
            "https://git.example.com/a/b.git".to_owned(),
            name("git.example.com"),
        ),
        (
            "https://git.example.com:8443/a%20b.git".to_owned(),
            name("git.example.com"),
        ),
        (
            "https://93.184.216.34/x.git".to_owned(),
            ip("93.184.216.34"),
        ),
        (
            "https://[2606:4700::1111]/x.git".to_owned(),
            ip("2606:4700::1111"),
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn an_operators_internal_host_passes_but_never_the_unspecified_address() {
    let policy = UrlPolicy {
        allowed_internal_hosts: vec![
            "LOCALHOST".to_owned(),
            "127.0.0.1".to_owned(),
            "0.0.0.0".to_owned(),
        ],
        ..UrlPolicy::default()
    };
    let resolve = |url: &str| {
        resolve_public(&check_url(url).unwrap(), &policy)
            .map(|addresses| addresses.first().copied())
            .map_err(|err| err.to_string())
    };

    let actual = (
        resolve("https://localhost/x.git"),
        resolve("https://127.0.0.1/x.git"),
        resolve("https://0.0.0.0/x.git"),
        resolve("https://127.0.0.2/x.git"),
    );

    let loopback: IpAddr = "127.0.0.1".parse().unwrap();
    let expected = (
        Ok(Some(loopback)),
        Ok(Some(loopback)),
        Err(format!(
            "https://0.0.0.0/x.git names 0.0.0.0, the unspecified address; {ADVICE}"
        )),
        Err(format!(
            "https://127.0.0.2/x.git names 127.0.0.2, a loopback address; {ADVICE}"
        )),
    );
    assert_eq!(actual, expected);
}

#[test]
fn the_clone_is_pinned_to_the_checked_addresses_with_redirects_and_other_protocols_off() {
    let url = check_url("https://git.example.com:8443/team/project.git").unwrap();
    let addresses: Vec<IpAddr> = vec![
        "93.184.216.34".parse().unwrap(),
        "2606:2800::1".parse().unwrap(),
    ];
    let dest = PathBuf::from("/srv/intake/1");
    let request = CloneRequest {
        url: "https://git.example.com:8443/team/project.git",
        dest: &dest,
        branch: Some("release/2.0"),
        depth: Some(500),
    };
    let policy = UrlPolicy {
        ca_file: Some(PathBuf::from("/etc/plumb/internal-ca.pem")),
        timeout: Duration::from_secs(60),
        ..UrlPolicy::default()
    };
    let literal = check_url("https://93.184.216.34/x.git").unwrap();
    let plain = CloneRequest {
        url: "https://93.184.216.34/x.git",
        dest: &dest,
        branch: None,
        depth: None,
    };

    let actual = (
        clone_invocation(&url, &addresses, &request, &policy),
        clone_invocation(&literal, &addresses[..1], &plain, &UrlPolicy::default()).args,
    );

    let config = |settings: &[&str]| -> Vec<String> {
        settings
            .iter()
            .flat_map(|s| ["-c".to_owned(), (*s).to_owned()])
            .collect()
    };
    let common = [
        "protocol.allow=never",
        "protocol.https.allow=always",
        "http.followRedirects=false",
        "http.sslVerify=true",
        "credential.helper=",
        "transfer.fsckObjects=true",
        "core.protectNTFS=true",
        "core.protectHFS=true",
    ];
    let clone = [
        "clone",
        "--no-checkout",
        "--template=",
        "--single-branch",
        "--no-tags",
    ];
    let mut pinned = config(&common);
    pinned.extend(config(&[
        "http.curloptResolve=git.example.com:8443:93.184.216.34,[2606:2800::1]",
    ]));
    pinned.extend(clone.map(str::to_owned));
    pinned.extend(
        [
            "--depth=50",
            "--branch=release/2.0",
            "--",
            "https://git.example.com:8443/team/project.git",
            ".",
        ]
        .map(str::to_owned),
    );
    let mut unpinned = config(&common);
    unpinned.extend(clone.map(str::to_owned));
    unpinned.extend(["--depth=50", "--", "https://93.184.216.34/x.git", "."].map(str::to_owned));
    let env = [
        ("GIT_PROTOCOL_FROM_USER", "0"),
        ("GIT_ALLOW_PROTOCOL", "https"),
        ("GIT_ATTR_NOSYSTEM", "1"),
        ("GIT_NO_LAZY_FETCH", "1"),
        ("GIT_SSL_CAINFO", "/etc/plumb/internal-ca.pem"),
    ]
    .map(|(key, value)| (key.to_owned(), OsString::from(value)))
    .to_vec();
    let expected = (GitInvocation { args: pinned, env }, unpinned);
    assert_eq!(actual, expected);
}
