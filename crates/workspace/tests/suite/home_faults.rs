//! Bringing a change home is all or nothing, shown with a fault at every write in turn (not by
//! racing): for each step of an apply and of an undo, into the working tree and onto a branch,
//! the step fails (then the step and the next, the first of the putting back), or every step
//! from it on fails as a crash would. After each, the user's files are compared byte for byte
//! (mode, bytes, link targets, folders) with their state before, and `applied.json` with the
//! files; after a crash, `plumb undo` (with no fault) brings the files back to their old bytes.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use plumb_workspace::{
    APPLIED_FILE, Applied, ChangeRecord, Destination, Faults, HomeError, HomeState, NewBranch,
    Step, apply_to_tree, apply_to_tree_with, commit_on_branch_with, undo, undo_with,
};

use super::home::{Run, checked_out, four_kinds, identity, run_on};
use super::{git, link, sample_repo, snapshot, write};

/// The repository and run of [`every_kind`], with the user's empty folder.
fn tree_prototype() -> Case {
    let case = Case::new(every_kind);
    fs::create_dir(case.repo.join("empty")).unwrap();
    case
}

/// A repository and a finished run of it: made once with git, then copied for each fault.
struct Case {
    _tmp: TempDir,
    /// The run that made the prototype (its folder holds the patch).
    _run: Option<Run>,
    repo: PathBuf,
    dir: PathBuf,
    record: ChangeRecord,
    patch: PathBuf,
    sha: String,
}

impl Case {
    fn new(edit: impl FnOnce(&Path)) -> Self {
        let tmp = TempDir::new().unwrap();
        let repo = sample_repo(tmp.path());
        let run = run_on(&repo, edit);
        Self {
            repo,
            dir: run.dir.clone(),
            record: run.record.clone(),
            patch: run.patch.clone(),
            sha: run.sha.clone(),
            _tmp: tmp,
            _run: Some(run),
        }
    }

    /// The repository and the run's patch in a fresh folder, every byte, mode and link as is.
    fn copy(&self) -> Self {
        let tmp = TempDir::new().unwrap();
        let repo = tmp.path().join("repo");
        let dir = tmp.path().join("r19a2b3c4d5e-0a1b2c");
        copy_tree(&self.repo, &repo);
        fs::create_dir(&dir).unwrap();
        let patch = dir.join("patch.diff");
        fs::copy(&self.patch, &patch).unwrap();
        // A change already brought home: its saved bytes, and its record for the copy.
        if self.dir.join("applied").is_dir() {
            copy_tree(&self.dir.join("applied"), &dir.join("applied"));
        }
        if let Some(mut applied) = record(self) {
            applied.repo = repo.clone();
            plumb_workspace::write_record(&dir.join(APPLIED_FILE), &applied).unwrap();
        }
        Self {
            record: ChangeRecord {
                repo: repo.clone(),
                ..self.record.clone()
            },
            repo,
            dir,
            patch,
            sha: self.sha.clone(),
            _tmp: tmp,
            _run: None,
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir(to).unwrap();
    fs::set_permissions(to, fs::metadata(from).unwrap().permissions()).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, dest) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&source).unwrap(), &dest).unwrap();
        } else if kind.is_dir() {
            copy_tree(&source, &dest);
        } else {
            fs::copy(&source, &dest).unwrap();
        }
    }
}

/// Which steps fail: those numbered in `fail`, and with `crash_from`, every step from that one
/// on (a process that died writes nothing more).
#[derive(Default)]
struct Injected {
    seen: RefCell<Vec<Step>>,
    fail: Vec<usize>,
    crash_from: Option<usize>,
}

impl Injected {
    fn failing(fail: &[usize]) -> Self {
        Self {
            fail: fail.to_vec(),
            ..Self::default()
        }
    }

    fn crashing_at(step: usize) -> Self {
        Self {
            crash_from: Some(step),
            ..Self::default()
        }
    }

    fn steps(&self) -> Vec<Step> {
        self.seen.borrow().clone()
    }
}

impl Faults for Injected {
    fn before(&self, step: &Step) -> io::Result<()> {
        let number = self.seen.borrow().len();
        self.seen.borrow_mut().push(step.clone());
        if self.fail.contains(&number) || self.crash_from.is_some_and(|from| number >= from) {
            return Err(io::Error::other(format!(
                "injected fault at step {number} ({step})"
            )));
        }
        Ok(())
    }
}

/// Every kind of change: a file changed, one added in new folders, one added in a folder the
/// user has (empty, so git knows nothing of it), one deleted, one renamed, a link retargeted, an
/// executable bit dropped.
fn every_kind(root: &Path) {
    four_kinds(root);
    write(root, "new/deep/file.py", "DEEP = 1\n");
    write(root, "empty/file.py", "FILLED = 1\n");
    fs::remove_file(root.join("link.txt")).unwrap();
    link(root, "link.txt", "src/app.py");
    fs::set_permissions(
        root.join("run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
}

/// The user's tree outside `.git`, byte for byte: each file's mode and SHA-256, each link's
/// target, each folder.
fn files(repo: &Path) -> BTreeMap<String, String> {
    snapshot(repo)
        .into_iter()
        .filter(|(path, _)| path != "." && !path.starts_with(".git/"))
        .map(|(path, value)| {
            let kept = if path.ends_with('/') {
                "/".to_string()
            } else if value.starts_with("->") {
                value
            } else {
                let parts: Vec<&str> = value.split(' ').collect();
                format!("{} {}", parts[0], parts[parts.len() - 1])
            };
            (path, kept)
        })
        .collect()
}

fn record(run: &Case) -> Option<Applied> {
    let text = fs::read_to_string(run.dir.join(APPLIED_FILE)).ok()?;
    Some(serde_json::from_str(&text).unwrap())
}

fn record_bytes(run: &Case) -> Option<Vec<u8>> {
    fs::read(run.dir.join(APPLIED_FILE)).ok()
}

/// A file plumb moved aside or wrote under a temporary name beside its path.
fn is_plumbs(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with(".plumb-") && (name.ends_with(".old") || name.ends_with(".new"))
}

/// Whether `now` is a state a record of `state` covers: all old bytes, all new bytes, or, while
/// under way, each path one or the other (folders aside; a path moved aside by the step that was
/// cut short counts when a file beside it holds one of its sides).
fn covers(
    state: Option<HomeState>,
    now: &BTreeMap<String, String>,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> bool {
    match state {
        None | Some(HomeState::Undone) => now == before,
        Some(HomeState::Applied) => now == after,
        Some(HomeState::Applying | HomeState::Undoing) => {
            let asides: Vec<(&str, &String)> = now
                .iter()
                .filter(|(path, _)| is_plumbs(path) && path.ends_with(".old"))
                .map(|(path, value)| (path.rsplit_once('/').map_or("", |(dir, _)| dir), value))
                .collect();
            let paths: std::collections::BTreeSet<&String> = now
                .keys()
                .chain(before.keys())
                .chain(after.keys())
                .filter(|path| !path.ends_with('/'))
                .collect();
            paths.into_iter().all(|path| {
                let held = now.get(path);
                if is_plumbs(path) {
                    return held.is_some_and(|value| {
                        before.values().any(|v| v == value) || after.values().any(|v| v == value)
                    });
                }
                let (old, new) = (before.get(path), after.get(path));
                if held == old || held == new {
                    return true;
                }
                let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
                held.is_none()
                    && asides
                        .iter()
                        .any(|(d, value)| *d == dir && (Some(*value) == old || Some(*value) == new))
            })
        }
    }
}

fn apply(run: &Case, faults: &dyn Faults) -> Result<Applied, HomeError> {
    apply_to_tree_with(&run.record, &run.patch, &run.sha, &run.dir, faults)
}

#[test]
fn a_fault_at_any_step_of_an_apply_to_the_tree_leaves_every_file_as_it_was() {
    let prototype = tree_prototype();
    let before = files(&prototype.repo);
    let counted = Injected::default();
    let clean = prototype.copy();
    apply(&clean, &counted).unwrap();
    let after = files(&clean.repo);
    let steps = counted.steps();
    assert!(steps.len() > 20, "{steps:?}");

    let mut wrong = Vec::new();
    for (at, step) in steps.iter().enumerate() {
        for fail in [vec![at], vec![at, at + 1]] {
            let run = prototype.copy();
            let repo = &run.repo;
            let failed = apply(&run, &Injected::failing(&fail));
            let now = files(repo);
            let state = record(&run).map(|r| r.state);
            // One fault: all put back, the record as it was (none). Two: the putting back may be
            // cut short too, and then the record says `applying` over what the files hold.
            let fine = failed.is_err()
                && if fail.len() == 1 {
                    now == before && record_bytes(&run).is_none()
                } else {
                    covers(state, &now, &before, &after)
                        && (state.is_none() || state == Some(HomeState::Applying))
                };
            if !fine {
                wrong.push(format!("{fail:?} {step}: {failed:?} {state:?}"));
            }
            if state.is_some() {
                undo(&run.dir, &run.patch).unwrap();
                if files(repo) != before {
                    wrong.push(format!("{fail:?}: undo after it left files changed"));
                }
            }
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn a_crash_at_any_step_of_an_apply_to_the_tree_leaves_a_record_that_covers_the_files_and_undo_finishes()
 {
    let prototype = tree_prototype();
    let before = files(&prototype.repo);
    let counted = Injected::default();
    let clean = prototype.copy();
    apply(&clean, &counted).unwrap();
    let after = files(&clean.repo);
    let steps = counted.steps();

    let mut wrong = Vec::new();
    for (at, step) in steps.iter().enumerate() {
        let run = prototype.copy();
        let repo = &run.repo;
        let crashed = apply(&run, &Injected::crashing_at(at));
        let now = files(repo);
        let state = record(&run).map(|r| r.state);
        if crashed.is_ok() || !covers(state, &now, &before, &after) {
            wrong.push(format!("crash at {at} ({step}): {state:?} {now:#?}"));
            continue;
        }
        if state.is_some() {
            let finished = undo(&run.dir, &run.patch);
            let (now, state) = (files(repo), record(&run).map(|r| r.state));
            if finished.is_err() || now != before || state != Some(HomeState::Undone) {
                wrong.push(format!(
                    "undo after a crash at {at}: {finished:?} {state:?}"
                ));
            }
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn a_fault_or_a_crash_at_any_step_of_an_undo_leaves_the_files_as_the_record_says() {
    let fresh = tree_prototype();
    let before = files(&fresh.repo);
    let prototype = fresh.copy();
    apply_to_tree(
        &prototype.record,
        &prototype.patch,
        &prototype.sha,
        &prototype.dir,
    )
    .unwrap();
    let after = files(&prototype.repo);
    let counted = Injected::default();
    let run = prototype.copy();
    undo_with(&run.dir, &run.patch, &counted).unwrap();
    let steps = counted.steps();
    assert!(steps.len() > 10, "{steps:?}");

    let mut wrong = Vec::new();
    for (at, step) in steps.iter().enumerate() {
        for faults in [
            Injected::failing(&[at]),
            Injected::failing(&[at, at + 1]),
            Injected::crashing_at(at),
        ] {
            let run = prototype.copy();
            let repo = &run.repo;
            let applied = record_bytes(&run);
            let single = faults.fail.len() == 1;
            let failed = undo_with(&run.dir, &run.patch, &faults);
            let now = files(repo);
            let state = record(&run).map(|r| r.state);
            let fine = failed.is_err()
                && if single {
                    now == after && record_bytes(&run) == applied
                } else {
                    covers(state, &now, &before, &after)
                };
            if !fine {
                wrong.push(format!(
                    "{:?}/{:?} {}: {failed:?} {state:?}",
                    faults.fail, faults.crash_from, step
                ));
            }
            let finished = undo(&run.dir, &run.patch);
            if finished.is_err() || files(repo) != before {
                wrong.push(format!(
                    "{:?}/{:?}: undo again: {:?} {:#?}",
                    faults.fail,
                    faults.crash_from,
                    finished.err(),
                    files(repo)
                ));
            }
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

/// The repository as branch mode must leave it: everything but git's object store (objects
/// nothing refers to may stay until `git gc`), with the refs as git lists them.
fn repository(repo: &Path) -> (Vec<(String, String)>, String) {
    let tree: Vec<(String, String)> = checked_out(repo)
        .into_iter()
        .chain(
            snapshot(repo)
                .into_iter()
                .filter(|(path, _)| {
                    path.starts_with(".git/refs/") || path.starts_with(".git/logs/")
                })
                .map(|(path, value)| {
                    let kept = if path.ends_with('/') {
                        "/".to_string()
                    } else {
                        value.split(' ').next_back().unwrap().to_string()
                    };
                    (path, kept)
                }),
        )
        .collect();
    (tree, git(repo, &["for-each-ref"]))
}

fn commit(run: &Case, faults: &Injected) -> Result<(), HomeError> {
    let who = identity();
    let branch = NewBranch {
        name: "plumb/fix",
        message: "Fix\n",
        identity: &who,
    };
    commit_on_branch_with(&run.record, &run.patch, &run.sha, &branch, &run.dir, faults).map(|_| ())
}

/// The branch's commit, if the branch exists.
fn branch_at(repo: &Path) -> Option<String> {
    let listed = git(
        repo,
        &[
            "for-each-ref",
            "--format=%(objectname)",
            "refs/heads/plumb/fix",
        ],
    );
    Some(listed.trim().to_string()).filter(|id| !id.is_empty())
}

/// Whether the record and the branch agree: no record or `undone` and no branch, `applied` and
/// the branch at the recorded commit, under way and either.
fn branch_covered(record: Option<&Applied>, at: Option<&String>) -> bool {
    let Some(record) = record else {
        return at.is_none();
    };
    let Destination::Branch { commit, .. } = &record.destination else {
        return false;
    };
    match record.state {
        HomeState::Undone => at.is_none(),
        HomeState::Applied => at == Some(commit),
        HomeState::Applying | HomeState::Undoing => at.is_none() || at == Some(commit),
    }
}

#[test]
fn a_fault_or_a_crash_at_any_step_of_a_branch_apply_or_undo_leaves_the_branch_as_the_record_says() {
    // Only committed files change, so the change applies to HEAD.
    let prototype = Case::new(|root| {
        write(
            root,
            "src/util.py",
            "def helper():\n    return 'more help'\n",
        );
        write(root, "src/added.py", "ADDED = 1\n");
    });
    let committed = prototype.copy();
    let counted = Injected::default();
    commit(&committed, &counted).unwrap();
    let apply_steps = counted.steps();
    let counted = Injected::default();
    undo_with(&committed.copy().dir, &committed.patch, &counted).unwrap();
    let undo_steps = counted.steps();

    let mut wrong = Vec::new();
    for undoing in [false, true] {
        let steps = if undoing { &undo_steps } else { &apply_steps };
        for (at, step) in steps.iter().enumerate() {
            for faults in [
                Injected::failing(&[at]),
                Injected::failing(&[at, at + 1]),
                Injected::crashing_at(at),
            ] {
                let run = if undoing {
                    committed.copy()
                } else {
                    prototype.copy()
                };
                let repo = &run.repo;
                let before = repository(repo);
                let record_before = record_bytes(&run);
                let failed = if undoing {
                    undo_with(&run.dir, &run.patch, &faults).map(|_| ())
                } else {
                    commit(&run, &faults)
                };
                let now = record(&run);
                let at_commit = branch_at(repo);
                let single = faults.fail.len() == 1;
                let fine = failed.is_err()
                    && branch_covered(now.as_ref(), at_commit.as_ref())
                    && (!single
                        || (repository(repo) == before && record_bytes(&run) == record_before));
                if !fine {
                    wrong.push(format!(
                        "{} {:?}/{:?} {}: {failed:?} {:?} {at_commit:?}",
                        if undoing { "undo" } else { "apply" },
                        faults.fail,
                        faults.crash_from,
                        step,
                        now.map(|r| r.state)
                    ));
                }
                if record(&run).is_some_and(|r| r.state != HomeState::Undone) {
                    let finished = undo(&run.dir, &run.patch);
                    if finished.is_err() || branch_at(repo).is_some() {
                        wrong.push(format!("undo again after {at}: {finished:?}"));
                    }
                }
            }
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

/// Which step a [`Meddler`] acts before.
type Picks = fn(&Step) -> bool;

/// The user's hand at one moment: just before the first step that `at` picks, `edit` runs once
/// (as an editor saving a file would), and every step goes ahead.
struct Meddler<'a> {
    at: Picks,
    edit: Box<dyn Fn() + 'a>,
    done: RefCell<bool>,
}

impl Faults for Meddler<'_> {
    fn before(&self, step: &Step) -> io::Result<()> {
        if (self.at)(step) && !self.done.replace(true) {
            (self.edit)();
        }
        Ok(())
    }
}

/// The window of the race: a file the user writes after plumb checked it and before plumb
/// writes it. A change to a file plumb is about to replace (saved by rewriting it, or by a new
/// file renamed over it), or a new file where plumb was about to create one, is never written
/// over: the apply or undo is refused naming it, the user's bytes stay, and every other file and
/// the record are as they were.
#[test]
fn a_file_the_user_writes_between_the_check_and_the_write_is_never_written_over() {
    let prototype = tree_prototype();
    let before = files(&prototype.repo);
    let applied = prototype.copy();
    apply_to_tree(&applied.record, &applied.patch, &applied.sha, &applied.dir).unwrap();
    let after = files(&applied.repo);

    let mut seen = Vec::new();
    let cases: [(&str, Picks, &str, bool); 4] = [
        (
            "rewritten",
            |s| *s == Step::Aside("src/app.py".into()),
            "src/app.py",
            false,
        ),
        (
            "renamed over",
            |s| *s == Step::Aside("src/app.py".into()),
            "src/app.py",
            true,
        ),
        (
            "created",
            |s| *s == Step::Place("src/added.py".into()),
            "src/added.py",
            false,
        ),
        (
            "undo: rewritten",
            |s| *s == Step::Aside("src/app.py".into()),
            "src/app.py",
            false,
        ),
    ];
    for (what, at, path, by_rename) in cases {
        let undoing = what.starts_with("undo");
        let run = if undoing {
            applied.copy()
        } else {
            prototype.copy()
        };
        let target = run.repo.join(path);
        let mine = b"# the user's own bytes\n";
        let meddler = Meddler {
            at,
            edit: Box::new(|| {
                if by_rename {
                    let saved = target.with_extension("swp");
                    fs::write(&saved, mine).unwrap();
                    fs::rename(&saved, &target).unwrap();
                } else {
                    fs::write(&target, mine).unwrap();
                }
            }),
            done: RefCell::new(false),
        };
        let record_before = record_bytes(&run);

        let refused = if undoing {
            undo_with(&run.dir, &run.patch, &meddler).map(|_| ())
        } else {
            apply(&run, &meddler).map(|_| ())
        };

        let mut expected = if undoing {
            after.clone()
        } else {
            before.clone()
        };
        let mut now = files(&run.repo);
        let theirs = now.remove(path);
        expected.remove(path);
        seen.push((
            what,
            refused.map_err(|err| {
                err.to_string()
                    .split(" changed since")
                    .next()
                    .unwrap_or_default()
                    .to_string()
            }),
            theirs.map(|t| t.ends_with(&plumb_workspace::sha256_hex(mine))),
            now == expected,
            record_bytes(&run) == record_before,
        ));
    }

    let refused = |what, path: &str| (what, Err(path.to_string()), Some(true), true, true);
    assert_eq!(
        seen,
        vec![
            refused("rewritten", "src/app.py"),
            refused("renamed over", "src/app.py"),
            refused("created", "src/added.py"),
            refused("undo: rewritten", "src/app.py"),
        ]
    );
}
