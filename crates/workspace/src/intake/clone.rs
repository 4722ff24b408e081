//! Cloning a repository from a URL that passed the policy, into a new or empty folder.
//!
//! Steps, in order:
//! 1. [`check_url`] and [`resolve_public`]: nothing is written and no connection is made before
//!    the URL and every address of its host pass.
//! 2. `git clone --no-checkout --depth N --single-branch --no-tags` into the destination, through
//!    the crate's git runner (`git.rs`: cleared environment, no system or global config, no
//!    terminal prompt, hooks off, its own process group killed at the deadline), with
//!    [`clone_invocation`]'s settings on top: https only (`protocol.allow=never`,
//!    `GIT_ALLOW_PROTOCOL`, `GIT_PROTOCOL_FROM_USER=0`), no redirects, the host pinned to the
//!    checked addresses with `http.curloptResolve` so a second DNS answer cannot differ from the
//!    first, every fetched object checked by `transfer.fsckObjects` (malformed trees, `.git` and
//!    `.gitmodules` tricks), no credential helper, and `HOME=/dev/null` so neither git nor curl
//!    finds a `.netrc` or a user config to read.
//! 3. Size, measured after the fetch: the objects on disk must fit `max_bytes`, and the tree's
//!    blobs (read from `ls-tree -l`, the sizes git will write) must fit `max_bytes` and
//!    `max_files`, before a single file is checked out.
//! 4. The tree is written by `read-tree` and `checkout-index` with `GIT_ATTR_SOURCE` set to the
//!    empty tree and no system attributes, so the repository's own `.gitattributes` cannot ask
//!    for any conversion (line endings, `ident`, encodings) and no filter is configured to run.
//!    Git makes symbolic links as links and never writes through one: it refuses a path whose
//!    leading part is a link, and fsck already refused trees that could set that up.
//!
//! What the size cap does not do: git has no limit on what one fetch downloads, so during step 2
//! the pack grows at the network's speed until the fetch ends or the deadline kills git. A
//! hostile server can fill up to `timeout` × bandwidth of disk for that long; the destination
//! should live on a file system with a quota. Everything is removed again on refusal.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::dest::DestGuard;
use super::error::IntakeError;
use super::url_policy::{Host, ParsedUrl, UrlPolicy, check_url, resolve_public};
use crate::error::WorkspaceError;
use crate::git::Git;
use crate::home::check_branch_name;

/// The id of git's empty tree (SHA-1), which every git knows without having it stored.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
/// Lines of git's error output an error message keeps (the last ones: `fatal:` comes last).
const ERROR_LINES: usize = 3;

/// What to clone and where.
#[derive(Debug, Clone, Copy)]
pub struct CloneRequest<'a> {
    /// An https URL, as the user gave it.
    pub url: &'a str,
    /// A new folder (its parent must exist) or an empty one.
    pub dest: &'a Path,
    /// A branch or tag; the remote's default branch when `None`.
    pub branch: Option<&'a str>,
    /// Commits of history; the policy's `max_depth` when `None`, never more than it.
    pub depth: Option<u32>,
}

/// A finished clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClonedRepo {
    /// The repository's top (the destination), with its `.git` holding the shallow history.
    pub root: PathBuf,
    /// The URL as rebuilt and cloned.
    pub url: String,
    /// The checked-out commit's full id.
    pub commit: String,
    /// The addresses the connection was pinned to.
    pub addresses: Vec<IpAddr>,
    /// Entries of the checked-out tree.
    pub files: u64,
    /// Bytes of the checked-out tree's blobs.
    pub bytes: u64,
}

/// The arguments and environment of the clone call, on top of what the crate's git runner
/// always passes (see the module header). A function of its inputs alone, so the exact command
/// line can be reviewed and tested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitInvocation {
    pub args: Vec<String>,
    pub env: Vec<(String, OsString)>,
}

/// The clone's command line for `url`, pinned to `addresses`.
pub fn clone_invocation(
    url: &ParsedUrl,
    addresses: &[IpAddr],
    request: &CloneRequest<'_>,
    policy: &UrlPolicy,
) -> GitInvocation {
    let mut settings = vec![
        "protocol.allow=never".to_owned(),
        "protocol.https.allow=always".to_owned(),
        "http.followRedirects=false".to_owned(),
        "http.sslVerify=true".to_owned(),
        "credential.helper=".to_owned(),
        "transfer.fsckObjects=true".to_owned(),
        "core.protectNTFS=true".to_owned(),
        "core.protectHFS=true".to_owned(),
    ];
    // An IP literal is never looked up, so only a name needs pinning.
    if let Host::Name(name) = &url.host
        && !addresses.is_empty()
    {
        let pinned: Vec<String> = addresses
            .iter()
            .map(|address| match address {
                IpAddr::V4(v4) => v4.to_string(),
                IpAddr::V6(v6) => format!("[{v6}]"),
            })
            .collect();
        settings.push(format!(
            "http.curloptResolve={name}:{}:{}",
            url.port,
            pinned.join(",")
        ));
    }
    let depth = request
        .depth
        .unwrap_or(policy.max_depth)
        .min(policy.max_depth)
        .max(1);
    let mut args: Vec<String> = settings
        .into_iter()
        .flat_map(|setting| ["-c".to_owned(), setting])
        .collect();
    args.extend(
        [
            "clone",
            "--no-checkout",
            "--template=",
            "--single-branch",
            "--no-tags",
        ]
        .map(str::to_owned),
    );
    args.push(format!("--depth={depth}"));
    if let Some(branch) = request.branch {
        args.push(format!("--branch={branch}"));
    }
    args.extend(["--".to_owned(), url.url(), ".".to_owned()]);
    let mut env: Vec<(String, OsString)> = [
        ("GIT_PROTOCOL_FROM_USER", "0"),
        ("GIT_ALLOW_PROTOCOL", "https"),
        ("GIT_ATTR_NOSYSTEM", "1"),
        ("GIT_NO_LAZY_FETCH", "1"),
    ]
    .map(|(key, value)| (key.to_owned(), OsString::from(value)))
    .into();
    if let Some(ca_file) = &policy.ca_file {
        env.push((
            "GIT_SSL_CAINFO".to_owned(),
            ca_file.clone().into_os_string(),
        ));
    }
    GitInvocation { args, env }
}

/// Clones `request.url` into `request.dest` under `policy`; see the module header for the steps.
/// Blocking (run it on a blocking thread). On any error, what was written under the destination
/// is removed again.
pub fn clone_repository(
    request: &CloneRequest<'_>,
    policy: &UrlPolicy,
) -> Result<ClonedRepo, IntakeError> {
    let start = Instant::now();
    let parsed = check_url(request.url)?;
    let url = super::shown(&parsed.url());
    if let Some(branch) = request.branch {
        check_branch_name(branch).map_err(|err| IntakeError::Branch {
            name: super::shown(branch),
            detail: err.to_string(),
        })?;
    }
    let addresses = resolve_public(&parsed, policy)?;
    let guard = DestGuard::prepare(request.dest)?;
    // git runs in the destination and must not look above it for a repository.
    let dest = guard
        .path()
        .canonicalize()
        .map_err(|source| IntakeError::io("resolve the folder", guard.path(), source))?;
    let mut git = Git::new(dest.join(".git"), dest.clone(), PathBuf::from("/dev/null"));
    git.set_deadline(Some(start + policy.timeout));
    let failed = |err| git_error(err, &url, policy);

    let invocation = clone_invocation(&parsed, &addresses, request, policy);
    let mut env: Vec<(&str, &OsStr)> = invocation
        .env
        .iter()
        .map(|(key, value)| (key.as_str(), value.as_os_str()))
        .collect();
    let args: Vec<&str> = invocation.args.iter().map(String::as_str).collect();
    git.run_in_folder(&args, &env, None).map_err(failed)?;

    env.push(("GIT_ATTR_SOURCE", OsStr::new(EMPTY_TREE)));
    let commit = git
        .run_in_folder(
            &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            &env,
            None,
        )
        .map_err(failed)?;
    let commit = commit.text("rev-parse").map_err(failed)?.trim().to_owned();

    let fetched = disk_bytes(&dest.join(".git"))?;
    if fetched > policy.max_bytes {
        return Err(IntakeError::RepoTooLarge {
            url,
            what: "its fetched objects",
            bytes: fetched,
            limit: policy.max_bytes,
        });
    }
    let listing = git
        .run_in_folder(
            &["ls-tree", "-r", "-l", "-z", "--full-tree", "HEAD"],
            &env,
            None,
        )
        .map_err(failed)?;
    let (files, bytes) = tree_size(&listing.stdout);
    if files > policy.max_files {
        return Err(IntakeError::RepoTooManyFiles {
            url,
            limit: policy.max_files,
        });
    }
    if bytes > policy.max_bytes {
        return Err(IntakeError::RepoTooLarge {
            url,
            what: "its files",
            bytes,
            limit: policy.max_bytes,
        });
    }
    git.run_in_folder(&["read-tree", "HEAD"], &env, None)
        .map_err(failed)?;
    git.run_in_folder(&["checkout-index", "--all", "--index"], &env, None)
        .map_err(failed)?;

    guard.keep();
    Ok(ClonedRepo {
        root: dest,
        url,
        commit,
        addresses,
        files,
        bytes,
    })
}

/// The entries of an `ls-tree -r -l -z` listing and the bytes of its blobs.
fn tree_size(listing: &[u8]) -> (u64, u64) {
    let mut files = 0u64;
    let mut bytes = 0u64;
    for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        files += 1;
        let meta = record.split(|b| *b == b'\t').next().unwrap_or_default();
        let meta = String::from_utf8_lossy(meta);
        let mut fields = meta.split_whitespace();
        if fields.nth(1) == Some("blob") {
            let size = fields.nth(1).and_then(|size| size.parse::<u64>().ok());
            bytes = bytes.saturating_add(size.unwrap_or(0));
        }
    }
    (files, bytes)
}

/// Bytes of the files under `dir`, links not followed.
fn disk_bytes(dir: &Path) -> Result<u64, IntakeError> {
    let mut total = 0u64;
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries =
            fs::read_dir(&folder).map_err(|source| IntakeError::io("read", &folder, source))?;
        for entry in entries {
            let entry = entry.map_err(|source| IntakeError::io("read", &folder, source))?;
            let meta = fs::symlink_metadata(entry.path())
                .map_err(|source| IntakeError::io("look at", entry.path(), source))?;
            if meta.is_dir() {
                folders.push(entry.path());
            } else {
                total = total.saturating_add(meta.len());
            }
        }
    }
    Ok(total)
}

/// A git failure as a clone refusal; git's own words (possibly the server's, relayed) escaped.
fn git_error(err: WorkspaceError, url: &str, policy: &UrlPolicy) -> IntakeError {
    let url = url.to_owned();
    match err {
        WorkspaceError::GitMissing { source } => IntakeError::GitMissing { source },
        WorkspaceError::OutOfTime { .. } | WorkspaceError::GitTimeout { .. } => {
            IntakeError::TimedOut {
                url,
                seconds: policy.timeout.as_secs(),
            }
        }
        WorkspaceError::Io {
            action,
            path,
            source,
        } => IntakeError::Io {
            action,
            path,
            source,
        },
        WorkspaceError::Git { stderr, .. } => {
            let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            let last = lines
                .get(lines.len().saturating_sub(ERROR_LINES)..)
                .unwrap_or_default();
            let detail = match last.join(" / ") {
                text if text.is_empty() => "it failed without a message".to_owned(),
                text => super::shown(&text),
            };
            IntakeError::Clone { url, detail }
        }
        other => IntakeError::Clone {
            url,
            detail: super::shown(&other.to_string()),
        },
    }
}
