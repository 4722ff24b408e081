//! Path confinement: turning a model-given relative path into an absolute path inside the workspace.
//!
//! The path is resolved the way the kernel would, one component at a time, and the position is checked after
//! every component the model wrote:
//! - `.` is skipped; `..` goes to the parent of the position reached so far (which has no links left in it);
//! - an existing symbolic link is replaced by its resolved target (absolute targets from `/`, relative ones
//!   from the link's folder), recursively, with at most [`MAX_LINKS`] links per path; the intermediate steps
//!   of a link target may pass outside, only where it lands counts (so `/proc/self/root/...` is judged by
//!   where it really leads);
//! - once a component does not exist, the rest is taken as written (files and folders about to be created):
//!   names are appended and a `..` removes the last missing name, which is exact because a missing
//!   component cannot be a link.
//!
//! Refused: empty paths, absolute paths, NUL bytes, control and invisible or direction-changing characters
//! (a name with U+202E shows reversed in a patch: the Trojan Source class), any position outside the root,
//! and any `.git` component in what the model wrote or in where it resolves. Only metadata is looked at (lstat, readlink); nothing
//! outside the root is ever opened.
//!
//! The check is as good as the moment it runs: a link created between `resolve` and the use of its result
//! would not be seen. Tools resolve right before they open, and the agent's commands run between tool calls.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::ConfineError;
use plumb_protocol::chars::{is_bidi_control, is_invisible};

/// Most symbolic links followed while resolving one path (Linux's own limit is 40).
pub const MAX_LINKS: u32 = 40;

/// Resolves `user_path` inside `root` (which must be canonical).
pub(crate) fn resolve(root: &Path, user_path: &str) -> Result<PathBuf, ConfineError> {
    if user_path.trim().is_empty() {
        return Err(ConfineError::Empty);
    }
    let shown = shown_path(user_path);
    if user_path.contains('\0') {
        return Err(ConfineError::Invalid { path: shown });
    }
    if let Some(hidden) = user_path.chars().find(|c| is_hidden_char(*c)) {
        return Err(ConfineError::Hidden {
            path: shown,
            code: format!("U+{:04X}", u32::from(hidden)),
        });
    }
    let path = Path::new(user_path);
    if path.is_absolute() || path.has_root() {
        return Err(ConfineError::Absolute { path: shown });
    }
    if path.components().any(|c| is_git_component(c.as_os_str())) {
        return Err(ConfineError::GitDir { path: shown });
    }

    let mut walk = Walk {
        shown: &shown,
        links: 0,
    };
    let mut position = Position {
        path: root.to_path_buf(),
        missing: 0,
    };
    for component in path.components() {
        position = walk.step(position, component)?;
        if !position.path.starts_with(root) {
            return Err(ConfineError::Escapes { path: shown });
        }
    }

    let inside = position.path.strip_prefix(root).unwrap_or(Path::new(""));
    if inside.components().any(|c| is_git_component(c.as_os_str())) {
        return Err(ConfineError::GitDir { path: shown });
    }
    Ok(position.path)
}

/// How many characters of a refused path a message repeats: a model that wrote a path of 200,000
/// characters is told about it in a sentence, not given it back whole.
pub const MAX_SHOWN_PATH_CHARS: usize = 200;

/// `user_path` as messages show it: cut to [`MAX_SHOWN_PATH_CHARS`] characters with "…".
fn shown_path(user_path: &str) -> String {
    if user_path.chars().count() <= MAX_SHOWN_PATH_CHARS {
        return user_path.to_owned();
    }
    let mut cut: String = user_path.chars().take(MAX_SHOWN_PATH_CHARS).collect();
    cut.push('…');
    cut
}

/// A character no file name plumb writes may hold: a control character (tab included: no file
/// name needs one), a bidirectional control or an invisible formatting character.
pub fn is_hidden_char(c: char) -> bool {
    c == '\t' || is_bidi_control(c) || is_invisible(c)
}

/// `.git` in any case: harmless to over-refuse on a case-sensitive file system, needed on others.
fn is_git_component(name: &OsStr) -> bool {
    name.as_encoded_bytes().eq_ignore_ascii_case(b".git")
}

/// Where resolution stands: a path with no symbolic links left in its existing part.
struct Position {
    path: PathBuf,
    /// How many trailing components of `path` do not exist (0: all of it exists).
    missing: usize,
}

struct Walk<'a> {
    shown: &'a str,
    links: u32,
}

impl Walk<'_> {
    fn step(&mut self, at: Position, component: Component<'_>) -> Result<Position, ConfineError> {
        match component {
            Component::CurDir => Ok(at),
            Component::RootDir | Component::Prefix(_) => Ok(Position {
                path: PathBuf::from("/"),
                missing: 0,
            }),
            Component::ParentDir => {
                let mut path = at.path;
                path.pop();
                Ok(Position {
                    path,
                    missing: at.missing.saturating_sub(1),
                })
            }
            Component::Normal(name) => self.enter(at, name),
        }
    }

    fn enter(&mut self, at: Position, name: &OsStr) -> Result<Position, ConfineError> {
        let candidate = at.path.join(name);
        if at.missing > 0 {
            return Ok(Position {
                path: candidate,
                missing: at.missing + 1,
            });
        }
        let meta = match fs::symlink_metadata(&candidate) {
            Ok(meta) => meta,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Ok(Position {
                    path: candidate,
                    missing: 1,
                });
            }
            Err(err) if err.kind() == io::ErrorKind::NotADirectory => {
                return Err(ConfineError::NotADirectory {
                    path: self.shown.to_owned(),
                });
            }
            Err(err) => {
                return Err(ConfineError::Io {
                    path: self.shown.to_owned(),
                    detail: err.kind().to_string(),
                });
            }
        };
        if !meta.file_type().is_symlink() {
            return Ok(Position {
                path: candidate,
                missing: 0,
            });
        }

        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(ConfineError::TooManyLinks {
                path: self.shown.to_owned(),
            });
        }
        let target = fs::read_link(&candidate).map_err(|err| ConfineError::Io {
            path: self.shown.to_owned(),
            detail: err.kind().to_string(),
        })?;
        // Magic links under /proc (e.g. /proc/self/fd/N -> "pipe:[123]") read as relative names that do
        // not exist; they resolve to a missing path under /proc, which the root check then refuses.
        let mut position = Position {
            path: at.path,
            missing: 0,
        };
        for component in target.components() {
            position = self.step(position, component)?;
        }
        Ok(position)
    }
}
