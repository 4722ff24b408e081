//! The verified change as a `git bundle`: one commit on a branch, on top of the commit the run
//! started from, so a user can `git fetch` it into their clone (`plumb serve`'s
//! `GET /api/tasks/{id}/bundle`). Nothing is pushed and the source repository is only read: the
//! commit is made in a scratch bare repository that borrows the source's objects (git's
//! alternates), through a private index.
//!
//! The base is the source's `HEAD` when the source is a git repository (a clone of a git URL, a
//! folder on the server): the bundle then holds only the new commit and names `HEAD` as its
//! prerequisite, which the user already has. A source without history (an unpacked archive) has
//! no commit the user could hold, so the bundle carries the run's baseline commit (the tree the
//! run started from) as well.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::error::WorkspaceError;
use crate::git::Git;
use crate::home::{Identity, check_patch};

/// What goes into a bundle.
#[derive(Debug, Clone, Copy)]
pub struct BundleRequest<'a> {
    /// The repository the run copied.
    pub source: &'a Path,
    /// The run's shadow git directory (`shadow.git` in its run folder), for a source without git.
    pub shadow: &'a Path,
    /// The verified patch, and the SHA-256 it must have.
    pub patch: &'a Path,
    pub patch_sha256: &'a str,
    /// The branch the commit is on (`plumb/<task>`), its message and author.
    pub branch: &'a str,
    pub message: &'a str,
    pub identity: &'a Identity,
    /// An empty folder for the scratch repository (removed by the caller).
    pub scratch: &'a Path,
    /// Where the bundle is written.
    pub out: &'a Path,
}

/// What a bundle holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeBundle {
    /// The new commit, on `refs/heads/<branch>`.
    pub commit: String,
    /// Its parent.
    pub base: String,
    /// Whether `base` is the source's own `HEAD` (and the bundle's prerequisite) rather than a
    /// commit carried in the bundle.
    pub base_is_source_head: bool,
}

/// Why no bundle was made.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("the patch's SHA-256 is {actual}, not the verified {expected}")]
    PatchChanged { expected: String, actual: String },
    #[error("the change does not apply to {base} ({detail})")]
    NotOnBase { base: String, detail: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Git(#[from] WorkspaceError),
}

/// Makes the bundle `request.out`.
pub fn bundle_change(request: &BundleRequest<'_>) -> Result<MadeBundle, BundleError> {
    check_patch(request.patch, request.patch_sha256, request.patch_sha256).map_err(
        |err| match err {
            crate::home::HomeError::PatchChanged { expected, actual } => {
                BundleError::PatchChanged { expected, actual }
            }
            other => BundleError::Io {
                path: request.patch.to_path_buf(),
                source: std::io::Error::other(other.to_string()),
            },
        },
    )?;
    let home = request.scratch.join("home");
    let bare = request.scratch.join("bundle.git");
    std::fs::create_dir_all(&home).map_err(|source| io(&home, source))?;
    let (base, objects, shallow, base_is_source_head) = match source_head(request, &home) {
        Some((head, common)) => (
            head,
            common.join("objects"),
            Some(common.join("shallow")),
            true,
        ),
        None => {
            let shadow = Git::new(
                request.shadow.to_path_buf(),
                request.scratch.into(),
                home.clone(),
            );
            let baseline = shadow
                .run(&["rev-parse", "--verify", "--quiet", crate::BASELINE_REF])?
                .text("rev-parse")?
                .to_owned();
            (baseline, request.shadow.join("objects"), None, false)
        }
    };
    let git = Git::new(bare.clone(), request.scratch.to_path_buf(), home);
    git.init()?;
    let alternates = bare.join("objects/info/alternates");
    let borrowed = format!("{}\n", objects.display());
    std::fs::write(&alternates, borrowed).map_err(|source| io(&alternates, source))?;
    // A shallow clone's boundary, so walking back from the base stops where its history does.
    if let Some(shallow) = shallow.filter(|path| path.is_file()) {
        let to = bare.join("shallow");
        std::fs::copy(&shallow, &to).map_err(|source| io(&to, source))?;
    }
    let index = request.scratch.join("bundle.index");
    git.run_with_index(&["read-tree", &base], &index)?;
    let patch = request.patch.to_string_lossy();
    git.run_with_index(
        &["apply", "--cached", "--whitespace=nowarn", "--", &patch],
        &index,
    )
    .map_err(|err| BundleError::NotOnBase {
        base: base.clone(),
        detail: match err {
            WorkspaceError::Git { stderr, .. } => {
                stderr.lines().next().unwrap_or_default().to_owned()
            }
            other => other.to_string(),
        },
    })?;
    let tree = git
        .run_with_index(&["write-tree"], &index)?
        .text("write-tree")?
        .to_owned();
    let identity = request.identity;
    let who = [
        ("GIT_AUTHOR_NAME", OsStr::new(&identity.name)),
        ("GIT_AUTHOR_EMAIL", OsStr::new(&identity.email)),
        ("GIT_COMMITTER_NAME", OsStr::new(&identity.name)),
        ("GIT_COMMITTER_EMAIL", OsStr::new(&identity.email)),
    ];
    let commit = git
        .run_with_env(
            &["commit-tree", &tree, "-p", &base, "-F", "-"],
            &who,
            Some(request.message.as_bytes()),
        )?
        .text("commit-tree")?
        .to_owned();
    let refname = format!("refs/heads/{}", request.branch);
    git.run(&["update-ref", &refname, &commit])?;
    let out = request.out.to_string_lossy();
    let not_base = format!("^{base}");
    let mut args = vec!["bundle", "create", "--quiet", &out, &refname];
    if base_is_source_head {
        args.push(&not_base);
    }
    git.run(&args)?;
    Ok(MadeBundle {
        commit,
        base,
        base_is_source_head,
    })
}

/// The source's `HEAD` commit and its git common directory, when the source is the top of a git
/// repository with a commit.
fn source_head(request: &BundleRequest<'_>, home: &Path) -> Option<(String, PathBuf)> {
    let git = Git::new(
        PathBuf::new(),
        request.source.to_path_buf(),
        home.to_path_buf(),
    );
    let read = |args: &[&str]| {
        git.run_in_folder(args, &[], None)
            .ok()
            .and_then(|out| out.text("rev-parse").ok().map(str::to_owned))
    };
    let top = PathBuf::from(read(&["rev-parse", "--show-toplevel"])?);
    let source = request.source.canonicalize().ok()?;
    if top.canonicalize().ok()? != source {
        return None;
    }
    let head = read(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])?;
    let common = PathBuf::from(read(&["rev-parse", "--git-common-dir"])?);
    let common = if common.is_absolute() {
        common
    } else {
        source.join(common)
    };
    Some((head, common.canonicalize().ok()?))
}

fn io(path: &Path, source: std::io::Error) -> BundleError {
    BundleError::Io {
        path: path.to_path_buf(),
        source,
    }
}
