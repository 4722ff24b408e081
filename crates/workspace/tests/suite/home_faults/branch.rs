//! Faults and crashes at each step of a branch apply and of its undo.

use std::path::Path;

use pretty_assertions::assert_eq;

use plumb_workspace::{
    Applied, Destination, HomeError, HomeState, NewBranch, commit_on_branch_with, undo, undo_with,
};

use super::super::home::{checked_out, identity};
use super::super::{git, snapshot, write};
use super::{Case, Injected, record, record_bytes};

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
