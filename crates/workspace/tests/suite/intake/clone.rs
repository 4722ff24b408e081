//! Real clones from the local https server (`server.rs`, git's own `http-backend` behind
//! rustls): a pinned clone by name writes the tree exactly (no attribute conversions, links as
//! links, history cut to the depth), a redirect is not followed, a host the operator did not
//! allow is never contacted, a stalled server is cut off at the timeout, and a repository over
//! the size cap is refused; every refusal leaves no destination behind.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use plumb_workspace::intake::{CloneRequest, IntakeError, UrlPolicy, clone_repository};
use pretty_assertions::assert_eq;

use super::server::{CA_FILE, Mode, Server};
use super::{file_entry, noise, tree};
use crate::suite::{git, link, make_executable, write, write_bytes};

const ATTRIBUTES: &str = "* text eol=crlf\n*.txt ident\n";
const NOTES: &str = "line one\n$Id$\n";

/// A bare repository `root/repo.git` whose main branch has three commits (the last one's tree
/// asks for CRLF line endings and `ident`), and a branch `feature` with one more file. Returns
/// main's last commit.
fn served_repo(root: &Path) -> String {
    let work = root.join("work");
    fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q"]);
    for (i, text) in ["one\n", "two\n"].iter().enumerate() {
        write(&work, "history.txt", text);
        git(&work, &["add", "-A"]);
        git(&work, &["commit", "-q", "-m", &format!("commit {i}")]);
    }
    write(&work, "README.md", "# served\n");
    write(&work, "run.sh", "#!/bin/sh\necho run\n");
    make_executable(&work, "run.sh");
    link(&work, "docs/readme-link", "../README.md");
    write(&work, ".gitattributes", ATTRIBUTES);
    write(&work, "notes.txt", NOTES);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "last"]);
    let head = git(&work, &["rev-parse", "HEAD"]).trim().to_owned();
    git(&work, &["checkout", "-q", "-b", "feature"]);
    write(&work, "feature.txt", "feature\n");
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "feature"]);
    git(&work, &["checkout", "-q", "main"]);
    git(root, &["clone", "-q", "--bare", "work", "repo.git"]);
    head
}

fn trusting(hosts: &[&str]) -> UrlPolicy {
    UrlPolicy {
        allowed_internal_hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
        ca_file: Some(PathBuf::from(CA_FILE)),
        timeout: Duration::from_secs(60),
        ..UrlPolicy::default()
    }
}

fn request<'a>(url: &'a str, dest: &'a Path) -> CloneRequest<'a> {
    CloneRequest {
        url,
        dest,
        branch: None,
        depth: None,
    }
}

#[test]
fn a_pinned_clone_writes_the_tree_exactly_without_conversions_and_cut_to_its_depth() {
    let tmp = tempfile::TempDir::new().unwrap();
    let head = served_repo(tmp.path());
    let server = Server::start(Mode::Git {
        root: tmp.path().to_path_buf(),
    });
    let url = format!("https://localhost:{}/repo.git", server.port);
    let dest = tmp.path().join("clone");
    let branch_dest = tmp.path().join("branch");
    let policy = trusting(&["localhost"]);

    let cloned = clone_repository(
        &CloneRequest {
            depth: Some(1),
            ..request(&url, &dest)
        },
        &policy,
    )
    .unwrap();
    let feature = clone_repository(
        &CloneRequest {
            branch: Some("feature"),
            ..request(&url, &branch_dest)
        },
        &policy,
    )
    .unwrap();
    let actual = (
        cloned.commit == head,
        cloned.addresses.first().map(ToString::to_string),
        (cloned.files, cloned.bytes),
        tree(&dest),
        git(&dest, &["rev-list", "--count", "HEAD"])
            .trim()
            .to_owned(),
        git(&dest, &["status", "--porcelain"]),
        dest.join(".git/hooks").exists(),
        fs::read_to_string(branch_dest.join("feature.txt")).unwrap(),
        feature.files,
        git(&branch_dest, &["rev-list", "--count", "HEAD"])
            .trim()
            .to_owned(),
    );

    let files: [(&str, &str, u32); 5] = [
        (".gitattributes", ATTRIBUTES, 0o644),
        ("README.md", "# served\n", 0o644),
        ("history.txt", "two\n", 0o644),
        ("notes.txt", NOTES, 0o644),
        ("run.sh", "#!/bin/sh\necho run\n", 0o755),
    ];
    let mut expected_tree: BTreeMap<String, String> = files
        .iter()
        .map(|(name, text, mode)| ((*name).to_owned(), file_entry(*mode, text.as_bytes())))
        .collect();
    expected_tree.insert("docs/".to_owned(), "/".to_owned());
    expected_tree.insert("docs/readme-link".to_owned(), "-> ../README.md".to_owned());
    let bytes = files
        .iter()
        .map(|(_, text, _)| text.len() as u64)
        .sum::<u64>()
        + "../README.md".len() as u64;
    let expected = (
        true,
        Some("127.0.0.1".to_owned()),
        (6, bytes),
        expected_tree,
        "1".to_owned(),
        String::new(),
        false,
        "feature\n".to_owned(),
        7,
        "4".to_owned(),
    );
    assert_eq!(actual, expected);
}

#[test]
fn a_redirect_to_another_host_is_not_followed_and_nothing_is_written() {
    let tmp = tempfile::TempDir::new().unwrap();
    // Another host name for the same server: were the redirect followed (and resolved afresh,
    // outside the pinning), the server would see a second request.
    let server = Server::start(Mode::Redirect {
        location: "https://localhost:{port}/elsewhere.git/info/refs?service=git-upload-pack"
            .to_owned(),
    });
    let url = format!("https://127.0.0.1:{}/x.git", server.port);
    let dest = tmp.path().join("dest");

    let err = clone_repository(&request(&url, &dest), &trusting(&["127.0.0.1"])).unwrap_err();
    let actual = (
        matches!(err, IntakeError::Clone { .. }),
        err.to_string()
            .starts_with(&format!("git could not clone {url}: ")),
        server.requests(),
        tree(tmp.path()),
    );

    let expected = (
        true,
        true,
        vec!["GET /x.git/info/refs?service=git-upload-pack".to_owned()],
        BTreeMap::new(),
    );
    assert_eq!(actual, expected, "{err}");
}

#[test]
fn a_host_the_operator_did_not_allow_is_never_contacted() {
    let tmp = tempfile::TempDir::new().unwrap();
    let server = Server::start(Mode::Redirect {
        location: "https://example.com/".to_owned(),
    });
    let url = format!("https://localhost:{}/x.git", server.port);
    let dest = tmp.path().join("dest");

    let err = clone_repository(&request(&url, &dest), &trusting(&["git.internal"])).unwrap_err();
    let actual = (err.to_string(), server.requests(), tree(tmp.path()));

    let expected = (
        format!(
            "{url} resolves to 127.0.0.1, a loopback address; plumb clones only from public \
             addresses (an operator may allow a named internal host with `--allow-internal-host HOST`)"
        ),
        Vec::<String>::new(),
        BTreeMap::new(),
    );
    assert_eq!(actual, expected);
}

#[test]
fn a_stalled_server_is_cut_off_at_the_timeout_with_git_killed() {
    let tmp = tempfile::TempDir::new().unwrap();
    let server = Server::start(Mode::Stall);
    let url = format!("https://127.0.0.1:{}/x.git", server.port);
    let dest = tmp.path().join("dest");
    let policy = UrlPolicy {
        timeout: Duration::from_secs(2),
        ..trusting(&["127.0.0.1"])
    };

    let start = Instant::now();
    let err = clone_repository(&request(&url, &dest), &policy).unwrap_err();
    let actual = (
        err.to_string(),
        start.elapsed() < Duration::from_secs(20),
        tree(tmp.path()),
    );

    let expected = (
        format!(
            "cloning {url} did not finish within 2 s and was stopped; the server may be slow or \
             the repository too large"
        ),
        true,
        BTreeMap::new(),
    );
    assert_eq!(actual, expected);
}

#[test]
fn a_repository_over_the_size_cap_is_refused_before_its_files_are_written() {
    let tmp = tempfile::TempDir::new().unwrap();
    let work = tmp.path().join("work");
    fs::create_dir_all(&work).unwrap();
    git(&work, &["init", "-q"]);
    write_bytes(&work, "data.bin", &noise(256 << 10, 7));
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "data"]);
    git(tmp.path(), &["clone", "-q", "--bare", "work", "big.git"]);
    let server = Server::start(Mode::Git {
        root: tmp.path().to_path_buf(),
    });
    let url = format!("https://127.0.0.1:{}/big.git", server.port);
    let dest = tmp.path().join("dest");
    let policy = UrlPolicy {
        max_bytes: 64 << 10,
        ..trusting(&["127.0.0.1"])
    };

    let err = clone_repository(&request(&url, &dest), &policy).unwrap_err();
    let actual = (
        matches!(err, IntakeError::RepoTooLarge { limit: 65_536, .. }),
        dest.exists(),
    );

    assert_eq!(actual, (true, false), "{err}");
}
