//! Why an upload or a URL was refused, as sentences for the person who sent it: each names the
//! entry, URL or address (escaped for a screen, credentials never repeated) and the rule, and
//! says what to change. [`IntakeError::is_infra`] separates the server's own failures (the disk,
//! a missing git) from input to fix.

use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use super::address::AddressClass;
use super::archive::ArchiveKind;

/// Everything that can refuse or fail an archive upload or a clone.
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    /// One entry of the archive breaks a rule; `entry` is its name as shown (escaped, cut).
    #[error("the archive entry `{entry}` {rule}")]
    Entry { entry: String, rule: EntryRule },

    /// The archive lists more entries than [`super::ArchiveCaps::max_entries`].
    #[error(
        "the archive holds more than {limit} entries (max_entries); leave out build output and \
         dependencies, or upload a smaller part of the project"
    )]
    TooManyEntries { limit: u64 },

    /// The bytes are not an archive of the kind named, or its structure is broken.
    #[error(
        "the upload is not a readable {kind} archive ({detail}); send a .zip, .tar or .tar.gz of \
         the project's files"
    )]
    Unreadable { kind: ArchiveKind, detail: String },

    /// The destination exists and is not an empty folder.
    #[error(
        "{} is not a new or empty folder; plumb unpacks and clones only into one",
        path.display()
    )]
    DestNotEmpty { path: PathBuf },

    /// The URL breaks a rule before any address is looked up; `url` is shown without credentials.
    #[error("{url} is refused: {rule}")]
    Url { url: String, rule: UrlRule },

    /// The host is, or resolves to, an address that is not public.
    #[error(
        "{url} {verb} {address}, {class}; plumb clones only from public addresses (an operator \
         may allow a named internal host with `--allow-internal-host HOST`)",
        verb = if *resolved { "resolves to" } else { "names" }
    )]
    Address {
        url: String,
        address: IpAddr,
        class: AddressClass,
        /// True when the address came from DNS, false when the URL names it.
        resolved: bool,
    },

    /// The host name did not resolve.
    #[error("the host of {url} could not be resolved ({detail}); check the URL")]
    Unresolved { url: String, detail: String },

    /// The branch or tag asked for is not a name git takes.
    #[error("the branch name `{name}` is refused: {detail}")]
    Branch { name: String, detail: String },

    /// git ran and failed (the server refused, the repository is missing, a redirect was not
    /// followed, the fetched objects failed git's checks); `detail` is git's message, escaped.
    #[error("git could not clone {url}: {detail}")]
    Clone { url: String, detail: String },

    /// The repository's fetched objects or its files are over [`super::UrlPolicy::max_bytes`].
    #[error(
        "{url} is too large: {what} take {bytes} bytes, more than max_bytes ({limit}); clone a \
         smaller repository or branch, or ask the operator to raise the limit"
    )]
    RepoTooLarge {
        url: String,
        what: &'static str,
        bytes: u64,
        limit: u64,
    },

    /// The repository's tree holds more entries than [`super::UrlPolicy::max_files`].
    #[error(
        "{url} holds more than max_files ({limit}) files; clone a smaller repository, or ask the \
         operator to raise the limit"
    )]
    RepoTooManyFiles { url: String, limit: u64 },

    /// The clone ran past [`super::UrlPolicy::timeout`] and git was killed with its process group.
    #[error(
        "cloning {url} did not finish within {seconds} s and was stopped; the server may be slow \
         or the repository too large"
    )]
    TimedOut { url: String, seconds: u64 },

    /// git could not be started.
    #[error("could not run git ({source}); install git and make sure it is on PATH")]
    GitMissing {
        #[source]
        source: io::Error,
    },

    /// The disk under the destination failed.
    #[error("could not {action} {} ({source})", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl IntakeError {
    /// True for the server's own failures (disk, git missing), false for input to fix. A front end
    /// answers the first with a server error and the second with a client error.
    pub fn is_infra(&self) -> bool {
        match self {
            IntakeError::GitMissing { .. } | IntakeError::Io { .. } => true,
            IntakeError::Entry { .. }
            | IntakeError::TooManyEntries { .. }
            | IntakeError::Unreadable { .. }
            | IntakeError::DestNotEmpty { .. }
            | IntakeError::Url { .. }
            | IntakeError::Address { .. }
            | IntakeError::Unresolved { .. }
            | IntakeError::Branch { .. }
            | IntakeError::Clone { .. }
            | IntakeError::RepoTooLarge { .. }
            | IntakeError::RepoTooManyFiles { .. }
            | IntakeError::TimedOut { .. } => false,
        }
    }

    pub(crate) fn io(action: &'static str, path: impl AsRef<Path>, source: io::Error) -> Self {
        IntakeError::Io {
            action,
            path: path.as_ref().to_path_buf(),
            source,
        }
    }
}

/// The rule an archive entry breaks, as a clause that follows "the archive entry `name` ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryRule {
    #[error("climbs out of the archive's folder with `..`; every entry must stay inside it")]
    ParentDir,
    #[error(
        "is an absolute path (a leading `/` or `\\`, a drive such as `C:`, or a `\\\\server` \
         share); entries must be relative paths"
    )]
    Absolute,
    #[error(
        "lies in a `.git` folder; the service sets up its own repository, so archive the \
         project without `.git`"
    )]
    GitDir,
    #[error("holds a control character in its name; rename it")]
    ControlChar,
    #[error("has a name longer than a file system takes (255 bytes a part, 4096 in all)")]
    NameTooLong,
    #[error(
        "is a symbolic link; plumb unpacks regular files and folders only (a link could point \
         anywhere on the server)"
    )]
    Symlink,
    #[error("is a hard link; plumb unpacks regular files and folders only")]
    HardLink,
    #[error("is a {kind}; plumb unpacks regular files and folders only")]
    Special { kind: &'static str },
    #[error(
        "appears twice in the archive (or as both a file and a folder); each path may occur once"
    )]
    Duplicate,
    #[error("lies under a path the archive holds as a file")]
    UnderFile,
    #[error("is encrypted; plumb reads only unencrypted archives")]
    Encrypted,
    #[error(
        "is compressed with {method}, which plumb does not read; use deflate or no compression"
    )]
    Compression { method: String },
    #[error(
        "unpacks to more than {limit} bytes (max_file_bytes); plumb stopped after writing \
         {written} bytes of it"
    )]
    FileTooLarge { limit: u64, written: u64 },
    #[error(
        "takes the archive past {limit} unpacked bytes (max_total_bytes); plumb stopped after \
         writing {written} bytes in all"
    )]
    TotalTooLarge { limit: u64, written: u64 },
    #[error(
        "expands more than {ratio} times the compressed bytes it comes from (max_ratio), as a \
         decompression bomb does; plumb stopped after writing {written} bytes of it"
    )]
    Ratio { ratio: u64, written: u64 },
    #[error("cannot be read ({detail}); the archive is damaged or not what its headers say")]
    Damaged { detail: String },
}

/// The rule a URL breaks, as a clause that follows "`url` is refused: ".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlRule {
    #[error("it is empty; give the https:// URL of a git repository")]
    Empty,
    #[error("it starts with `-`, which git would read as an option")]
    LeadingDash,
    #[error("it names a git transport helper (`<transport>::<address>`); give an https:// URL")]
    TransportHelper,
    #[error("it holds a space or a control character")]
    ControlChar,
    #[error(
        "it holds characters outside ASCII; write the host in its xn-- form and percent-encode \
         the path"
    )]
    NonAscii,
    #[error(
        "plumb clones over https only, and this is {scheme}; give the https:// URL of the \
         repository"
    )]
    NotHttps { scheme: String },
    #[error(
        "it is not a URL (an ssh `host:path` address or a local path); give the https:// URL of \
         the repository"
    )]
    NotUrl,
    #[error(
        "it carries a user name or password; plumb clones public repositories without \
         credentials, so remove the part before `@`"
    )]
    Credentials,
    #[error("its host {detail}")]
    Host { detail: &'static str },
    #[error("its port is not a number from 1 to 65535")]
    Port,
    #[error("its path {detail}")]
    Path { detail: &'static str },
    #[error("it has a query (`?`) or a fragment (`#`); give the repository's plain URL")]
    QueryOrFragment,
}
