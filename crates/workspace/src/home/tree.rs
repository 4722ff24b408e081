//! The change into the user's working tree, and back out. Before: every touched file must hold the
//! bytes it had when the run started, and those bytes are saved in the run folder. Then `git apply`
//! of the approved patch file, whose SHA-256 is checked again first. After: every touched file must
//! hold what the verified change holds, or every file is put back. Undo checks that the files still
//! hold what plumb left, then writes the saved bytes back.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::state::{FileKind, FileState, inside, state_of};
use super::{
    Applied, ChangeRecord, Destination, HomeError, SAVED_DIR, Touched, check_patch, now_ms,
    write_record,
};
use crate::git::Git;

/// The bytes one touched file had just before the apply, as saved in the run's `applied/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Saved {
    /// The file's name in `applied/`.
    name: String,
    /// Its permission bits (a link has none worth keeping).
    mode: u32,
}

/// Applies the approved patch (`patch_path`, whose SHA-256 must be `approved_sha`) to the user's
/// working tree, and returns the record `plumb undo` needs (also written as `applied.json`).
pub fn apply_to_tree(
    record: &ChangeRecord,
    patch_path: &Path,
    approved_sha: &str,
    run_dir: &Path,
) -> Result<Applied, HomeError> {
    check_patch(patch_path, approved_sha, &record.patch_sha256)?;
    let root = &record.repo;
    let changed = changed_since(root, &record.files, as_started)?;
    if !changed.is_empty() {
        return Err(HomeError::ChangedSinceStart {
            files: changed,
            patch: patch_path.to_path_buf(),
        });
    }
    let saved_dir = run_dir.join(SAVED_DIR);
    std::fs::create_dir_all(&saved_dir).map_err(|err| HomeError::write(&saved_dir, err))?;
    let saved = save(root, &record.files, &saved_dir)?;
    let git = Git::new(std::path::PathBuf::new(), root.clone(), saved_dir.clone());
    let patch_arg = patch_path.as_os_str();
    if let Err(err) = git.run_in_folder(
        &[
            "apply",
            "--whitespace=nowarn",
            "--",
            &patch_arg.to_string_lossy(),
        ],
        &[],
        None,
    ) {
        return Err(HomeError::DoesNotApply {
            repo: root.clone(),
            detail: err.to_string(),
        });
    }
    let differ = changed_since(root, &record.files, as_changed)?;
    if !differ.is_empty() {
        restore(root, &record.files, &saved, &saved_dir)?;
        return Err(HomeError::AppliedDifferently { files: differ });
    }
    let applied = Applied {
        repo: root.clone(),
        patch_sha256: record.patch_sha256.clone(),
        destination: Destination::WorkingTree,
        files: record.files.clone(),
        at_ms: now_ms(),
        undone: false,
    };
    write_record(&saved_dir.join("saved.json"), &saved)?;
    write_record(&run_dir.join(super::APPLIED_FILE), &applied)?;
    Ok(applied)
}

/// Reverses an apply to the working tree: refused, naming the files, when any no longer holds
/// what plumb left.
pub fn undo_in_tree(applied: &Applied, run_dir: &Path, patch_path: &Path) -> Result<(), HomeError> {
    let root = &applied.repo;
    let changed = changed_since(root, &applied.files, as_changed)?;
    if !changed.is_empty() {
        return Err(HomeError::ChangedSinceApply {
            files: changed,
            patch: patch_path.to_path_buf(),
        });
    }
    let saved_dir = run_dir.join(SAVED_DIR);
    let list = saved_dir.join("saved.json");
    let text = std::fs::read_to_string(&list).map_err(|err| HomeError::io(&list, err))?;
    let saved: Vec<Option<Saved>> = serde_json::from_str(&text)
        .map_err(|err| HomeError::io(&list, std::io::Error::other(err.to_string())))?;
    restore(root, &applied.files, &saved, &saved_dir)?;
    write_record(
        &run_dir.join(super::APPLIED_FILE),
        &Applied {
            undone: true,
            ..applied.clone()
        },
    )
}

/// Each path of a touched file, and what it should hold (`None`: nothing).
type Expected<'a> = Vec<(&'a str, Option<FileState>)>;

/// What a touched file's paths hold when the run started: `before` (at a rename's old path),
/// and nothing at a rename's new path.
fn as_started(touched: &Touched) -> Expected<'_> {
    let mut expected = vec![(touched.before_path(), touched.before.clone())];
    if touched.from.is_some() {
        expected.push((touched.path.as_str(), None));
    }
    expected
}

/// What a touched file's paths hold once the change is in: `after`, and nothing at a rename's
/// old path.
fn as_changed(touched: &Touched) -> Expected<'_> {
    let mut expected = vec![(touched.path.as_str(), touched.after.clone())];
    if let Some(from) = &touched.from {
        expected.push((from.as_str(), None));
    }
    expected
}

/// The paths (of those `expected` names for each touched file) that do not hold what it says.
fn changed_since(
    root: &Path,
    files: &[Touched],
    expected: fn(&Touched) -> Expected<'_>,
) -> Result<Vec<String>, HomeError> {
    let mut changed = Vec::new();
    for touched in files {
        for (path, state) in expected(touched) {
            if state_of(root, path)? != state {
                changed.push(path.to_string());
            }
        }
    }
    Ok(changed)
}

/// Saves what each touched file holds now (its `before`) into `saved_dir`.
fn save(root: &Path, files: &[Touched], saved_dir: &Path) -> Result<Vec<Option<Saved>>, HomeError> {
    files
        .iter()
        .enumerate()
        .map(|(index, touched)| {
            let Some(before) = &touched.before else {
                return Ok(None);
            };
            let path = inside(root, touched.before_path())?;
            let name = format!("{index}");
            let dest = saved_dir.join(&name);
            let (bytes, mode) = if before.kind == FileKind::Symlink {
                let target = std::fs::read_link(&path).map_err(|err| HomeError::io(&path, err))?;
                (target.as_os_str().as_bytes().to_vec(), 0o777)
            } else {
                let meta = std::fs::metadata(&path).map_err(|err| HomeError::io(&path, err))?;
                let bytes = std::fs::read(&path).map_err(|err| HomeError::io(&path, err))?;
                (bytes, meta.permissions().mode() & 0o7777)
            };
            std::fs::write(&dest, bytes).map_err(|err| HomeError::write(&dest, err))?;
            Ok(Some(Saved { name, mode }))
        })
        .collect()
}

/// Puts every touched file back as `saved` holds it: the new paths removed, the old bytes,
/// permissions and links written back.
fn restore(
    root: &Path,
    files: &[Touched],
    saved: &[Option<Saved>],
    saved_dir: &Path,
) -> Result<(), HomeError> {
    for touched in files {
        remove(root, &touched.path)?;
    }
    for (touched, saved) in files.iter().zip(saved) {
        let (Some(before), Some(saved)) = (&touched.before, saved) else {
            continue;
        };
        let path = inside(root, touched.before_path())?;
        remove(root, touched.before_path())?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|err| HomeError::write(parent, err))?;
        }
        let source = saved_dir.join(&saved.name);
        let bytes = std::fs::read(&source).map_err(|err| HomeError::io(&source, err))?;
        if before.kind == FileKind::Symlink {
            std::os::unix::fs::symlink(OsStr::from_bytes(&bytes), &path)
                .map_err(|err| HomeError::write(&path, err))?;
        } else {
            std::fs::write(&path, &bytes).map_err(|err| HomeError::write(&path, err))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(saved.mode))
                .map_err(|err| HomeError::write(&path, err))?;
        }
    }
    Ok(())
}

/// Removes the file or link at `rel`, if any.
fn remove(root: &Path, rel: &str) -> Result<(), HomeError> {
    let path = inside(root, rel)?;
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() => Err(HomeError::NotAFile {
            path: rel.to_string(),
        }),
        Ok(_) => std::fs::remove_file(&path).map_err(|err| HomeError::write(&path, err)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(HomeError::io(&path, err)),
    }
}
