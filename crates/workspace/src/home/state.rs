//! What a file of the user's folder is, byte for byte: a regular file (executable or not) or a
//! link, by the SHA-256 of its bytes (a link's: of its target). Paths are walked one component at
//! a time without following links, so a change never reaches past a link in the user's tree.

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::HomeError;
use crate::diff::sha256_hex;

/// What kind of file a path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    Regular,
    Executable,
    Symlink,
}

/// A file's kind and the SHA-256 of its bytes (of its target, for a link).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    pub kind: FileKind,
    pub sha256: String,
}

impl FileState {
    pub(crate) fn of_bytes(kind: FileKind, bytes: &[u8]) -> Self {
        Self {
            kind,
            sha256: sha256_hex(bytes),
        }
    }
}

/// What `rel` is under `root`: `None` when nothing is there. A folder, a device or a path under a
/// link is an error that names it: plumb writes none of those.
pub(crate) fn state_of(root: &Path, rel: &str) -> Result<Option<FileState>, HomeError> {
    Ok(content_of(root, rel)?.map(|content| content.state))
}

/// What a path holds, with its bytes (a link's target) and permission bits.
pub(crate) struct Content {
    pub(crate) state: FileState,
    pub(crate) bytes: Vec<u8>,
    pub(crate) mode: u32,
}

/// [`state_of`] with the bytes it hashed: one read, so what is checked is what is kept.
pub(crate) fn content_of(root: &Path, rel: &str) -> Result<Option<Content>, HomeError> {
    let path = inside(root, rel)?;
    content_at(&path, rel)
}

/// What the file at `path` (named `rel` in errors) holds, never following a link.
pub(crate) fn content_at(path: &Path, rel: &str) -> Result<Option<Content>, HomeError> {
    let Some(meta) = metadata(path, rel)? else {
        return Ok(None);
    };
    let mode = meta.permissions().mode() & 0o7777;
    let kind = if meta.file_type().is_symlink() {
        FileKind::Symlink
    } else if meta.is_file() {
        if mode & 0o111 != 0 {
            FileKind::Executable
        } else {
            FileKind::Regular
        }
    } else {
        return Err(HomeError::NotAFile {
            path: rel.to_string(),
        });
    };
    let read = if kind == FileKind::Symlink {
        std::fs::read_link(path).map(|target| target.as_os_str().as_bytes().to_vec())
    } else {
        std::fs::read(path)
    };
    let bytes = match read {
        Ok(bytes) => bytes,
        // Gone between the look and the read: nothing is there.
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(HomeError::io(path, err)),
    };
    Ok(Some(Content {
        state: FileState::of_bytes(kind, &bytes),
        bytes,
        mode,
    }))
}

/// `root/rel` for a relative path of plain components whose folders are real folders (or do not
/// exist yet) — never a link.
pub(crate) fn inside(root: &Path, rel: &str) -> Result<PathBuf, HomeError> {
    let relative = Path::new(rel);
    let plain = !rel.is_empty()
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        return Err(HomeError::BadPath {
            path: rel.to_string(),
        });
    }
    let mut path = root.to_path_buf();
    let mut components = relative.components().peekable();
    while let Some(component) = components.next() {
        path.push(component);
        if components.peek().is_none() {
            break;
        }
        match metadata(&path, rel)? {
            Some(meta) if meta.file_type().is_symlink() => {
                return Err(HomeError::UnderALink {
                    path: rel.to_string(),
                    link: path
                        .strip_prefix(root)
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                });
            }
            Some(meta) if !meta.is_dir() => {
                return Err(HomeError::NotAFile {
                    path: path
                        .strip_prefix(root)
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                });
            }
            // A folder, or one that does not exist yet (a new file's).
            _ => {}
        }
    }
    Ok(path)
}

fn metadata(path: &Path, rel: &str) -> Result<Option<std::fs::Metadata>, HomeError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) if err.raw_os_error() == Some(20) => Err(HomeError::NotAFile {
            path: rel.to_string(),
        }),
        Err(err) => Err(HomeError::io(path, err)),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn files_links_and_absences_are_told_apart_by_their_bytes() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("src")).unwrap();
        std::fs::write(root.path().join("src/a.py"), "x = 1\n").unwrap();
        symlink("a.py", root.path().join("src/link")).unwrap();

        let file = state_of(root.path(), "src/a.py").unwrap().unwrap();
        let link = state_of(root.path(), "src/link").unwrap().unwrap();

        assert_eq!(file, FileState::of_bytes(FileKind::Regular, b"x = 1\n"));
        assert_eq!(link, FileState::of_bytes(FileKind::Symlink, b"a.py"));
        assert_eq!(state_of(root.path(), "src/b.py").unwrap(), None);
        assert_eq!(state_of(root.path(), "new/dir/c.py").unwrap(), None);
    }

    #[test]
    fn a_path_through_a_link_or_out_of_the_root_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), root.path().join("out")).unwrap();

        let through = state_of(root.path(), "out/a.py").unwrap_err();
        let up = state_of(root.path(), "../a.py").unwrap_err();

        assert_eq!(
            through.to_string(),
            "out/a.py lies under out, a link; plumb writes nothing through a link"
        );
        assert!(matches!(up, HomeError::BadPath { .. }), "{up}");
    }
}
