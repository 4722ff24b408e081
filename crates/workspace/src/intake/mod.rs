//! Untrusted inputs for `plumb serve`: a project that arrives as an archive upload or as a git
//! URL, turned into a folder the service can hand to [`crate::Workspace::prepare`].
//!
//! Both doors share one shape, in this order:
//! 1. everything that can be checked without touching the disk or the network is checked first
//!    (an archive's entry names and kinds, a URL's scheme, host and credentials), and a refusal
//!    names the offending entry, URL or address, escaped for a person's screen;
//! 2. the destination must be a new or empty folder, opened without following a link;
//! 3. the content is written under caps counted on what is actually written or fetched, never on
//!    what a header declares;
//! 4. on any refusal or failure, whatever was written under the destination is removed again
//!    (`dest.rs`), and nothing outside it is ever written.
//!
//! - `archive.rs` (with `unpack.rs`): zip, tar and tar.gz into regular files and folders only
//!   ([`unpack_archive`]).
//! - `url_policy.rs` and `address.rs`: which https URLs and which resolved addresses may be cloned.
//! - `clone.rs`: the clone itself, pinned to the checked addresses, with git's hooks, filters,
//!   redirects and other protocols switched off ([`clone_repository`]).

mod address;
mod archive;
mod clone;
mod dest;
mod error;
mod unpack;
mod url_policy;

pub use address::{AddressClass, Embedding, classify};
pub use archive::{ArchiveCaps, ArchiveKind, UnpackSummary, unpack_archive, unpack_tar_stream};
pub use clone::{CloneRequest, ClonedRepo, GitInvocation, clone_invocation, clone_repository};
pub use error::{EntryRule, IntakeError, UrlRule};
pub use url_policy::{Host, ParsedUrl, UrlPolicy, check_url, resolve_public};

/// The most characters of a name or URL an error message repeats: enough to recognise it, not
/// enough to flood a log with a hostile megabyte-long name.
const MAX_SHOWN_CHARS: usize = 200;

/// `text` as an error message may show it: on one line, every control, bidirectional or
/// invisible character written as `<U+XXXX>`, and cut after [`MAX_SHOWN_CHARS`] characters.
pub(crate) fn shown(text: &str) -> String {
    let mut out: String = text.chars().take(MAX_SHOWN_CHARS).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    plumb_protocol::display::for_screen_line(&out).into_owned()
}
