//! A local repository packed for a `plumb serve` upload (`POST /api/uploads`): the same files a
//! `plumb fix` copy would hold — `.gitignore`, `.plumbignore` and the size limits applied, every
//! `.git` left out — as a `.tar.gz`. The server's intake takes regular files and folders only, so
//! symbolic links are left out and named rather than the whole upload being refused.

use std::fs;
use std::path::{Path, PathBuf};

use crate::copy::{CopyLimits, CopyReport, copy_tree};
use crate::error::WorkspaceError;
use crate::source_tree::SourceTreeError;
use crate::tree_archive::pack_tree;

/// The one folder at the top of the archive, holding the repository.
pub const UPLOAD_TOP: &str = "repo";

/// What [`pack_source`] packed.
#[derive(Debug)]
pub struct PackedSource {
    /// The copy's report: bytes, and files left out for their size.
    pub copied: CopyReport,
    /// The symbolic links left out, as paths relative to the repository's top.
    pub links_left_out: Vec<String>,
}

/// Packs the repository at `source` into `out` (a `.tar.gz`), through a copy in `scratch` (an
/// empty folder the caller removes). `source` is only read.
pub fn pack_source(
    source: &Path,
    scratch: &Path,
    out: &Path,
    limits: &CopyLimits,
) -> Result<PackedSource, WorkspaceError> {
    if !source.exists() {
        return Err(WorkspaceError::SourceMissing {
            path: source.to_path_buf(),
        });
    }
    if !source.is_dir() {
        return Err(WorkspaceError::SourceNotDirectory {
            path: source.to_path_buf(),
        });
    }
    let source = source
        .canonicalize()
        .map_err(|e| WorkspaceError::io("resolve the repository", source, e))?;
    // Under one top folder: the intake takes an archive's single top folder as the project's
    // top, so a repository that is one folder itself (only `src/`) would otherwise lose a level
    // and its patch's paths with it.
    let top = scratch.join("pack");
    let tree = top.join(UPLOAD_TOP);
    fs::create_dir_all(&tree).map_err(|e| WorkspaceError::io("create the folder", &tree, e))?;
    let copied = copy_tree(&source, &tree, limits)?;
    let mut links = Vec::new();
    remove_links(&tree, Path::new(""), &mut links)?;
    pack_tree(&top, out, u64::MAX).map_err(|err| match err {
        SourceTreeError::BadInput(detail) | SourceTreeError::Infra(detail) => {
            WorkspaceError::SourceUnreadable {
                path: source.clone(),
                detail,
            }
        }
    })?;
    Ok(PackedSource {
        copied,
        links_left_out: links.iter().map(|p| p.display().to_string()).collect(),
    })
}

/// Deletes every symbolic link under `root/rel` (from the copy, never the source), listing each.
fn remove_links(root: &Path, rel: &Path, links: &mut Vec<PathBuf>) -> Result<(), WorkspaceError> {
    let dir = root.join(rel);
    let entries = fs::read_dir(&dir).map_err(|e| WorkspaceError::io("read the folder", &dir, e))?;
    let mut names: Vec<_> = entries
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| WorkspaceError::io("read the folder", &dir, e))?;
    names.sort_by_key(fs::DirEntry::file_name);
    for entry in names {
        let kind = entry
            .file_type()
            .map_err(|e| WorkspaceError::io("read the entry", entry.path(), e))?;
        let name = rel.join(entry.file_name());
        if kind.is_symlink() {
            fs::remove_file(entry.path())
                .map_err(|e| WorkspaceError::io("remove the link", entry.path(), e))?;
            links.push(name);
        } else if kind.is_dir() {
            remove_links(root, &name, links)?;
        }
    }
    Ok(())
}
