//! A task's starting tree in a folder of its own: the tree of one commit of a git repository, or the
//! contents of an archive, and nothing else — no `.git`, no history. `plumb eval` starts every attempt
//! from such a folder; a copy that kept the repository's later commits would hand the agent the gold
//! fix through its history.
//!
//! - [`export_commit`] reads the repository's objects only (read-tree and checkout-index into the
//!   destination with a private index file), with the same isolated environment and safety config as
//!   the shadow repository's git: no hooks, no filters, no line-ending conversion. The repository's
//!   working tree, index and refs are never touched.
//! - [`unpack_archive`] unpacks a `.tar`, `.tar.gz` or `.tgz` whose members are the tree's files at its
//!   top. Only files, folders and symbolic links are unpacked; an absolute member path, a `..`
//!   component, a `.git` component, a member reached through a link, a hard link or a device is
//!   refused, and the unpacked bytes are capped.

use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use crate::git::Git;

/// Why a starting tree could not be made. [`SourceTreeError::is_infra`] separates the machine's
/// failures from input to fix.
#[derive(Debug, thiserror::Error)]
pub enum SourceTreeError {
    /// The repository or archive is not what the task says.
    #[error("{0}")]
    BadInput(String),
    /// git, the disk or the archive reader failed.
    #[error("{0}")]
    Infra(String),
}

impl SourceTreeError {
    pub fn is_infra(&self) -> bool {
        matches!(self, Self::Infra(_))
    }
}

/// Writes the tree of `commit` in the git repository `repo` (a working copy or a bare repository)
/// into the empty or missing folder `dest`. Returns the full commit id. `scratch` is an empty
/// folder for git's `HOME` and the private index.
pub fn export_commit(
    repo: &Path,
    commit: &str,
    dest: &Path,
    scratch: &Path,
) -> Result<String, SourceTreeError> {
    if !(7..=64).contains(&commit.len()) || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(SourceTreeError::BadInput(format!(
            "base_commit `{}` is not a commit id; give the 7 to 40 hex digits of a commit of {}",
            commit.chars().take(80).collect::<String>(),
            repo.display()
        )));
    }
    // git runs in its scratch folder, so a relative path would name another folder.
    let repo = &repo.canonicalize().map_err(|err| {
        SourceTreeError::BadInput(format!(
            "the repository {} cannot be opened ({err}); check the task's repo",
            repo.display()
        ))
    })?;
    let git_dir = git_dir_of(repo)?;
    prepare_dest(dest)?;
    let dest = &dest
        .canonicalize()
        .map_err(|e| io_error("resolve the folder", dest, &e))?;
    fs::create_dir_all(scratch).map_err(|e| io_error("create the folder", scratch, &e))?;
    let git = Git::new(git_dir, dest.to_path_buf(), scratch.to_path_buf());
    let wanted = format!("{commit}^{{commit}}");
    let full = git
        .run(&["rev-parse", "--verify", "--quiet", "--end-of-options", &wanted])
        .ok()
        .and_then(|out| out.text("rev-parse").ok().map(|t| t.trim().to_owned()))
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            SourceTreeError::BadInput(format!(
                "{} has no commit {commit}; check base_commit, or fetch that commit into the repository",
                repo.display()
            ))
        })?;
    let index = scratch.join("export.index");
    let result = git
        .run_with_index(&["read-tree", "--end-of-options", &full], &index)
        .and_then(|_| git.run_with_index(&["checkout-index", "--all", "--force"], &index));
    let _ = fs::remove_file(&index);
    result.map_err(|err| {
        SourceTreeError::Infra(format!(
            "could not write the tree of {full} from {} into {}: {err}",
            repo.display(),
            dest.display()
        ))
    })?;
    Ok(full)
}

/// The git directory of `repo`: its `.git` (a folder, or a `gitdir:` file git resolves), or `repo`
/// itself when it is a bare repository.
fn git_dir_of(repo: &Path) -> Result<PathBuf, SourceTreeError> {
    let dot_git = repo.join(".git");
    if dot_git.exists() {
        return Ok(dot_git);
    }
    if repo.join("HEAD").is_file() && repo.join("objects").is_dir() {
        return Ok(repo.to_path_buf());
    }
    Err(SourceTreeError::BadInput(format!(
        "{} is not a git repository (no .git, and not a bare repository); name a clone or a mirror in repo",
        repo.display()
    )))
}

/// `dest` must be missing or empty; it is made.
fn prepare_dest(dest: &Path) -> Result<(), SourceTreeError> {
    if let Ok(mut entries) = fs::read_dir(dest)
        && entries.next().is_some()
    {
        return Err(SourceTreeError::Infra(format!(
            "{} is not empty; the starting tree goes into a new folder",
            dest.display()
        )));
    }
    fs::create_dir_all(dest).map_err(|e| io_error("create the folder", dest, &e))
}

fn io_error(what: &str, path: &Path, err: &io::Error) -> SourceTreeError {
    SourceTreeError::Infra(format!("could not {what} {}: {err}", path.display()))
}

/// Unpacks the archive `archive` (`.tar`, `.tar.gz` or `.tgz`) into the empty or missing folder
/// `dest`, refusing what the module header lists and stopping past `max_bytes` of file content.
pub fn unpack_archive(archive: &Path, dest: &Path, max_bytes: u64) -> Result<(), SourceTreeError> {
    let name = archive.to_string_lossy().to_lowercase();
    let file = fs::File::open(archive).map_err(|err| {
        SourceTreeError::BadInput(format!(
            "the archive {} cannot be read ({err}); check the task's repo",
            archive.display()
        ))
    })?;
    let reader: Box<dyn Read> = if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Box::new(flate2::read::GzDecoder::new(io::BufReader::new(file)))
    } else if name.ends_with(".tar") {
        Box::new(io::BufReader::new(file))
    } else {
        return Err(SourceTreeError::BadInput(format!(
            "{} is not a .tar, .tar.gz or .tgz archive; give the tree as one of those, a folder or a git repository",
            archive.display()
        )));
    };
    prepare_dest(dest)?;
    let dest = dest
        .canonicalize()
        .map_err(|e| io_error("resolve the folder", dest, &e))?;
    let bad = |detail: String| {
        SourceTreeError::BadInput(format!(
            "the archive {} cannot be used: {detail}",
            archive.display()
        ))
    };
    let mut tar = tar::Archive::new(reader);
    tar.set_preserve_permissions(false);
    tar.set_preserve_mtime(false);
    tar.set_unpack_xattrs(false);
    let entries = tar
        .entries()
        .map_err(|err| bad(format!("it is not a readable tar archive ({err})")))?;
    let mut total: u64 = 0;
    for entry in entries {
        let mut entry = entry.map_err(|err| bad(format!("a member cannot be read ({err})")))?;
        let path = entry
            .path()
            .map_err(|err| bad(format!("a member's name cannot be read ({err})")))?
            .into_owned();
        let rel = member_path(&path).map_err(&bad)?;
        let Some(rel) = rel else { continue };
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind.is_dir() || kind.is_symlink()) {
            return Err(bad(format!(
                "the member {} is a {kind:?}; only files, folders and symbolic links are unpacked",
                rel.display()
            )));
        }
        total = total.saturating_add(entry.size());
        if total > max_bytes {
            return Err(bad(format!(
                "its files add up to more than {max_bytes} bytes (limits.max_copy_bytes)"
            )));
        }
        let target = dest.join(&rel);
        ensure_no_link_above(&dest, &rel).map_err(&bad)?;
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| io_error("create the folder", parent, &e))?;
        }
        if kind.is_symlink() {
            let link = entry
                .link_name()
                .map_err(|err| bad(format!("a link's target cannot be read ({err})")))?
                .ok_or_else(|| bad(format!("the link {} has no target", rel.display())))?;
            std::os::unix::fs::symlink(&link, &target)
                .map_err(|e| io_error("make the link", &target, &e))?;
            continue;
        }
        if kind.is_dir() {
            fs::create_dir_all(&target).map_err(|e| io_error("create the folder", &target, &e))?;
            continue;
        }
        let executable = entry.header().mode().is_ok_and(|mode| mode & 0o111 != 0);
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
            .map_err(|e| io_error("create", &target, &e))?;
        io::copy(&mut entry, &mut out).map_err(|e| io_error("write", &target, &e))?;
        if executable {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&target, fs::Permissions::from_mode(0o755))
                .map_err(|e| io_error("mark executable", &target, &e))?;
        }
    }
    Ok(())
}

/// The member's path relative to the tree, `None` for the archive's own top (`./`), or why it is
/// refused.
fn member_path(path: &Path) -> Result<Option<PathBuf>, String> {
    let mut rel = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::Normal(part) if part == ".git" => {
                return Err(format!(
                    "the member {} is inside a .git folder; archive the tree without its history",
                    path.display()
                ));
            }
            Component::Normal(part) => rel.push(part),
            Component::RootDir | Component::Prefix(_) | Component::ParentDir => {
                return Err(format!(
                    "the member {} leaves the tree (an absolute path or `..`)",
                    path.display()
                ));
            }
        }
    }
    Ok((!rel.as_os_str().is_empty()).then_some(rel))
}

/// No folder on the way to `rel` inside `dest` may be a link: a member written through a link
/// unpacked earlier would land outside the tree.
fn ensure_no_link_above(dest: &Path, rel: &Path) -> Result<(), String> {
    let mut at = dest.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        at.push(part);
        if fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "the member {} lies under a link unpacked before it",
                rel.display()
            ));
        }
    }
    // The member itself may not replace an existing entry (a second member of the same name).
    if fs::symlink_metadata(dest.join(rel)).is_ok_and(|m| !m.is_dir()) {
        return Err(format!("the member {} appears twice", rel.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_that_leave_the_tree_are_refused() {
        assert_eq!(
            member_path(Path::new("./src/a.py")),
            Ok(Some(PathBuf::from("src/a.py")))
        );
        assert_eq!(member_path(Path::new("./")), Ok(None));
        for bad in ["../x", "/etc/passwd", "a/../../x", "a/.git/config"] {
            assert!(member_path(Path::new(bad)).is_err(), "{bad} was accepted");
        }
    }
}
