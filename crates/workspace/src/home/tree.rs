//! The change into the user's working tree, and back out, all or nothing. The order of writes:
//!
//! 1. each touched path is read once: it must hold its bytes from the run's start (else the apply
//!    is refused, naming every path that does not), and those bytes are saved in the run's
//!    `applied/`;
//! 2. the approved patch (its SHA-256 checked again) is applied with `git apply` to a scratch copy
//!    of those files in the run folder, never to the user's; what it makes must be what the
//!    verified change holds, and is saved in `applied/` too;
//! 3. `applied.json` says `applying` — the first write the user's tree does not see;
//! 4. each path moves to its new bytes (`swap.rs`: moved aside, checked, replaced, never over a
//!    write of the user's);
//! 5. `applied.json` says `applied`.
//!
//! A failure at 4 or 5 moves every path back before it is reported, then puts the record back as
//! it was. Undo is the same walk the other way (`undoing`, the paths, `undone`), and a failure
//! puts the change back. A crash leaves `applying` or `undoing` over paths that each hold one
//! side or the other; `plumb undo` then brings them all to their old bytes.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::faults::{Faults, NoFaults, Step};
use super::record::{Applied, Blob, HomeState, Records, Slot, run_name};
use super::state::{FileKind, FileState, content_at, content_of};
use super::swap::{Failure, Files, Side};
use super::{
    ChangeRecord, Destination, HomeError, SAVED_DIR, Touched, check_patch, now_ms, refuse_if_home,
};
use crate::git::Git;

/// Applies the approved patch (`patch_path`, whose SHA-256 must be `approved_sha`) to the user's
/// working tree, and returns the record `plumb undo` needs (also written as `applied.json`).
pub fn apply_to_tree(
    record: &ChangeRecord,
    patch_path: &Path,
    approved_sha: &str,
    run_dir: &Path,
) -> Result<Applied, HomeError> {
    apply_to_tree_with(record, patch_path, approved_sha, run_dir, &NoFaults)
}

/// [`apply_to_tree`] with a fault-injection seam.
#[doc(hidden)]
pub fn apply_to_tree_with(
    record: &ChangeRecord,
    patch_path: &Path,
    approved_sha: &str,
    run_dir: &Path,
    faults: &dyn Faults,
) -> Result<Applied, HomeError> {
    let records = Records::lock(run_dir, faults)?;
    refuse_if_home(&records, run_dir)?;
    check_patch(patch_path, approved_sha, &record.patch_sha256)?;
    let saved = run_dir.join(SAVED_DIR);
    std::fs::create_dir_all(&saved).map_err(|err| HomeError::write(&saved, err))?;
    let plan = slots_of(&record.files);
    let before = save_before(&record.repo, &plan, &saved, faults, patch_path)?;
    let after = make_after(record, &plan, &before, patch_path, &saved, faults)?;
    let slots: Vec<Slot> = plan
        .into_iter()
        .zip(before.into_iter().zip(after))
        .map(|(planned, (before, after))| Slot {
            made: if after.is_some() {
                missing_folders(&record.repo, &planned.path)
            } else {
                Vec::new()
            },
            path: planned.path,
            before,
            after,
        })
        .collect();
    let mut applied = Applied {
        repo: record.repo.clone(),
        patch_sha256: record.patch_sha256.clone(),
        destination: Destination::WorkingTree,
        files: record.files.clone(),
        at_ms: now_ms(),
        state: HomeState::Applying,
        slots,
    };
    records.write(&applied)?;
    let changed = |files: Vec<String>| HomeError::ChangedSinceStart {
        files,
        patch: patch_path.to_path_buf(),
    };
    let files = Files {
        root: &record.repo,
        saved: &saved,
        tag: tag(run_dir),
        faults,
        changed: &changed,
    };
    if let Err(failure) = files.switch(&applied.slots, Side::After, true) {
        return Err(undone_by(
            failure,
            &records,
            run_dir,
            "every file is back as it was",
        ));
    }
    applied.state = HomeState::Applied;
    applied.at_ms = now_ms();
    if let Err(cause) = records.write(&applied) {
        let left = files.put_back_all(&applied.slots, Side::Before);
        return Err(undone_by(
            Failure { cause, left },
            &records,
            run_dir,
            "every file is back as it was",
        ));
    }
    Ok(applied)
}

/// Reverses an apply to the working tree: refused, naming the files, when any no longer holds
/// what plumb left. An apply or undo that was interrupted is finished toward the old bytes.
pub(crate) fn undo_in_tree(
    records: &Records<'_>,
    applied: &Applied,
    run_dir: &Path,
    patch_path: &Path,
    faults: &dyn Faults,
) -> Result<Applied, HomeError> {
    let saved = run_dir.join(SAVED_DIR);
    let recovering = applied.state != HomeState::Applied;
    let slots = if applied.slots.is_empty() {
        slots_of_an_older_plumb(applied, &saved, faults, patch_path)?
    } else {
        applied.slots.clone()
    };
    let changed = |files: Vec<String>| HomeError::ChangedSinceApply {
        files,
        patch: patch_path.to_path_buf(),
    };
    let files = Files {
        root: &applied.repo,
        saved: &saved,
        tag: tag(run_dir),
        faults,
        changed: &changed,
    };
    let accepted: &[Side] = if recovering {
        &[Side::Before, Side::After]
    } else {
        &[Side::After]
    };
    let not_as_left = files.not_holding(&slots, accepted)?;
    if !not_as_left.is_empty() {
        return Err(changed(not_as_left));
    }
    let mut undoing = Applied {
        state: HomeState::Undoing,
        at_ms: now_ms(),
        slots,
        ..applied.clone()
    };
    records.write(&undoing)?;
    let back = "the files hold the change again, as before the undo";
    if let Err(failure) = files.switch(&undoing.slots, Side::Before, !recovering) {
        if recovering {
            return Err(unfinished(failure.cause, &undoing.slots, run_dir));
        }
        return Err(undone_by(failure, records, run_dir, back));
    }
    undoing.state = HomeState::Undone;
    undoing.at_ms = now_ms();
    if let Err(cause) = records.write(&undoing) {
        if recovering {
            return Err(unfinished(cause, &undoing.slots, run_dir));
        }
        let left = files.put_back_all(&undoing.slots, Side::After);
        return Err(undone_by(Failure { cause, left }, records, run_dir, back));
    }
    Ok(undoing)
}

/// The error of a failed switch: when every path was moved back, the record goes back as it was
/// too (if that write fails, the record still says `applying` or `undoing`, which covers the
/// files) and the cause is reported; otherwise which paths may not be back.
fn undone_by(
    failure: Failure,
    records: &Records<'_>,
    run_dir: &Path,
    back: &'static str,
) -> HomeError {
    if !failure.left.is_empty() {
        return HomeError::PartlyDone {
            cause: Box::new(failure.cause),
            left: failure.left.into_iter().map(|(path, _)| path).collect(),
            run: run_name(run_dir),
        };
    }
    let _ = records.restore();
    match failure.cause {
        // These say themselves that nothing was done.
        cause @ (HomeError::ChangedSinceStart { .. } | HomeError::ChangedSinceApply { .. }) => {
            cause
        }
        cause => HomeError::Reverted {
            cause: Box::new(cause),
            back,
        },
    }
}

/// An interrupted apply or undo that could not be finished either: the record still says it is
/// under way, which is what the files are.
fn unfinished(cause: HomeError, slots: &[Slot], run_dir: &Path) -> HomeError {
    HomeError::PartlyDone {
        cause: Box::new(cause),
        left: slots.iter().map(|slot| slot.path.clone()).collect(),
        run: run_name(run_dir),
    }
}

/// A slot before its bytes are saved: its path, and what it holds on each side.
struct Planned {
    path: String,
    before: Option<FileState>,
    after: Option<FileState>,
}

/// The slots of the touched files: a rename is its old path (emptied) and its new one (filled).
fn slots_of(files: &[Touched]) -> Vec<Planned> {
    let mut slots = Vec::new();
    for touched in files {
        if let Some(from) = &touched.from {
            slots.push(Planned {
                path: from.clone(),
                before: touched.before.clone(),
                after: None,
            });
            slots.push(Planned {
                path: touched.path.clone(),
                before: None,
                after: touched.after.clone(),
            });
        } else {
            slots.push(Planned {
                path: touched.path.clone(),
                before: touched.before.clone(),
                after: touched.after.clone(),
            });
        }
    }
    slots
}

/// Step 1: each path read once; refused, naming them, when any is not as the run found it; else
/// its bytes saved as `<n>.before`.
fn save_before(
    root: &Path,
    plan: &[Planned],
    saved: &Path,
    faults: &dyn Faults,
    patch_path: &Path,
) -> Result<Vec<Option<Blob>>, HomeError> {
    let mut changed = Vec::new();
    let mut read = Vec::new();
    for planned in plan {
        let content = content_of(root, &planned.path)?;
        if content.as_ref().map(|c| &c.state) != planned.before.as_ref() {
            changed.push(planned.path.clone());
        }
        read.push(content);
    }
    if !changed.is_empty() {
        return Err(HomeError::ChangedSinceStart {
            files: changed,
            patch: patch_path.to_path_buf(),
        });
    }
    read.into_iter()
        .enumerate()
        .map(|(index, content)| {
            content
                .map(|content| {
                    let name = format!("{index}.before");
                    save(saved, &name, &content.bytes, faults)?;
                    Ok(Blob {
                        state: content.state,
                        name,
                        mode: content.mode,
                    })
                })
                .transpose()
        })
        .collect()
}

/// Step 2: the patch applied to a scratch copy of the old bytes; what it makes must be the
/// verified change, and is saved as `<n>.after`.
fn make_after(
    record: &ChangeRecord,
    plan: &[Planned],
    before: &[Option<Blob>],
    patch_path: &Path,
    saved: &Path,
    faults: &dyn Faults,
) -> Result<Vec<Option<Blob>>, HomeError> {
    let scratch = saved.join("scratch");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|err| HomeError::write(&scratch, err))?;
    let made = apply_in_scratch(record, plan, before, patch_path, saved, &scratch, faults);
    let _ = std::fs::remove_dir_all(&scratch);
    made
}

fn apply_in_scratch(
    record: &ChangeRecord,
    plan: &[Planned],
    before: &[Option<Blob>],
    patch_path: &Path,
    saved: &Path,
    scratch: &Path,
    faults: &dyn Faults,
) -> Result<Vec<Option<Blob>>, HomeError> {
    for (planned, blob) in plan.iter().zip(before) {
        if let Some(blob) = blob {
            copy_into(scratch, &planned.path, saved, blob, faults)?;
        }
    }
    // No repository around the scratch folder (git looks no higher than it): a plain patch.
    let git = Git::new(PathBuf::new(), scratch.to_path_buf(), saved.to_path_buf());
    faults
        .before(&Step::Git("apply"))
        .map_err(|err| HomeError::write(scratch, err))?;
    let patch = patch_path.to_string_lossy();
    git.run_in_folder(&["apply", "--whitespace=nowarn", "--", &patch], &[], None)
        .map_err(|err| HomeError::DoesNotApply {
            repo: record.repo.clone(),
            detail: err.to_string(),
        })?;
    let mut differ = Vec::new();
    let mut made = Vec::new();
    for planned in plan {
        let content = content_at(&scratch.join(&planned.path), &planned.path)?;
        if content.as_ref().map(|c| &c.state) != planned.after.as_ref() {
            differ.push(planned.path.clone());
        }
        made.push(content);
    }
    if !differ.is_empty() {
        return Err(HomeError::AppliedDifferently { files: differ });
    }
    made.into_iter()
        .enumerate()
        .map(|(index, content)| {
            content
                .map(|content| {
                    let name = format!("{index}.after");
                    save(saved, &name, &content.bytes, faults)?;
                    // A file that stays itself keeps its permission bits; git's are for the rest.
                    let mode = match &before[index] {
                        Some(old) if old.state.kind == content.state.kind => old.mode,
                        _ => content.mode,
                    };
                    Ok(Blob {
                        state: content.state,
                        name,
                        mode,
                    })
                })
                .transpose()
        })
        .collect()
}

/// Writes `blob`'s saved bytes at `rel` in the scratch folder.
fn copy_into(
    scratch: &Path,
    rel: &str,
    saved: &Path,
    blob: &Blob,
    faults: &dyn Faults,
) -> Result<(), HomeError> {
    let path = scratch.join(rel);
    faults
        .before(&Step::Save(format!("scratch/{rel}")))
        .map_err(|err| HomeError::write(&path, err))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|err| HomeError::write(parent, err))?;
    }
    let source = saved.join(&blob.name);
    let bytes = std::fs::read(&source).map_err(|err| HomeError::io(&source, err))?;
    if blob.state.kind == FileKind::Symlink {
        return std::os::unix::fs::symlink(OsStr::from_bytes(&bytes), &path)
            .map_err(|err| HomeError::write(&path, err));
    }
    std::fs::write(&path, &bytes).map_err(|err| HomeError::write(&path, err))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(blob.mode))
        .map_err(|err| HomeError::write(&path, err))
}

/// Writes `bytes` as `name` in the run's `applied/`, whole on disk before anything relies on it.
fn save(saved: &Path, name: &str, bytes: &[u8], faults: &dyn Faults) -> Result<(), HomeError> {
    use std::io::Write;
    let path = saved.join(name);
    faults
        .before(&Step::Save(name.to_string()))
        .map_err(|err| HomeError::write(&path, err))?;
    std::fs::File::create(&path)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        })
        .map_err(|err| HomeError::write(&path, err))
}

/// A record from a plumb before the states kept only the old bytes (`applied/<n>` listed in
/// `applied/saved.json`, one entry per touched file); the new bytes are read from the files,
/// which must hold them.
fn slots_of_an_older_plumb(
    applied: &Applied,
    saved: &Path,
    faults: &dyn Faults,
    patch_path: &Path,
) -> Result<Vec<Slot>, HomeError> {
    #[derive(Deserialize)]
    struct Saved {
        name: String,
        mode: u32,
    }
    let list = saved.join("saved.json");
    let text = std::fs::read_to_string(&list).map_err(|err| HomeError::io(&list, err))?;
    let old: Vec<Option<Saved>> = serde_json::from_str(&text)
        .map_err(|err| HomeError::io(&list, std::io::Error::other(err.to_string())))?;
    if old.len() != applied.files.len() {
        return Err(HomeError::SavedChanged { file: list });
    }
    let mut slots = Vec::new();
    for (touched, old) in applied.files.iter().zip(old) {
        let before = match (&touched.before, old) {
            (Some(state), Some(old)) => Some(Blob {
                state: state.clone(),
                name: old.name,
                mode: old.mode,
            }),
            (None, _) => None,
            (Some(_), None) => return Err(HomeError::SavedChanged { file: list }),
        };
        if let Some(from) = &touched.from {
            slots.push(Slot {
                path: from.clone(),
                before,
                after: None,
                made: Vec::new(),
            });
            slots.push(Slot {
                path: touched.path.clone(),
                before: None,
                after: None,
                made: every_folder_above(&touched.path),
            });
        } else {
            slots.push(Slot {
                path: touched.path.clone(),
                made: if before.is_none() {
                    every_folder_above(&touched.path)
                } else {
                    Vec::new()
                },
                before,
                after: None,
            });
        }
        let last = slots.len() - 1;
        if let Some(after) = &touched.after {
            let content = content_of(&applied.repo, &touched.path)?;
            let Some(content) = content.filter(|c| &c.state == after) else {
                return Err(HomeError::ChangedSinceApply {
                    files: vec![touched.path.clone()],
                    patch: patch_path.to_path_buf(),
                });
            };
            let name = format!("{last}.after");
            save(saved, &name, &content.bytes, faults)?;
            slots[last].after = Some(Blob {
                state: content.state,
                name,
                mode: content.mode,
            });
        }
    }
    Ok(slots)
}

/// Every folder above `rel`: an older plumb did not record which ones its apply made, so its
/// undo removes any of them left empty, as `git apply` would.
fn every_folder_above(rel: &str) -> Vec<String> {
    folders_above(rel, |_| true)
}

/// The folders above `rel` that do not exist in `root`, outermost first.
fn missing_folders(root: &Path, rel: &str) -> Vec<String> {
    folders_above(rel, |dir| {
        std::fs::symlink_metadata(root.join(dir)).is_err()
    })
}

/// The folders above `rel`, from the deepest up while `keep` holds, listed outermost first.
fn folders_above(rel: &str, keep: impl Fn(&Path) -> bool) -> Vec<String> {
    let mut folders: Vec<String> = Path::new(rel)
        .ancestors()
        .skip(1)
        .filter(|dir| !dir.as_os_str().is_empty())
        .take_while(|dir| keep(dir))
        .map(|dir| dir.display().to_string())
        .collect();
    folders.reverse();
    folders
}

/// The run's id as it goes into temporary names beside the user's files: letters, digits and
/// dashes only, and short.
fn tag(run_dir: &Path) -> String {
    let tag: String = run_name(run_dir)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect();
    if tag.is_empty() {
        "run".to_string()
    } else {
        tag
    }
}
