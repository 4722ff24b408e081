//! Faults and crashes at each step of an apply to the working tree, and of its undo.

use pretty_assertions::assert_eq;

use plumb_workspace::{HomeState, apply_to_tree, undo, undo_with};

use super::{Injected, apply, covers, files, record, record_bytes, tree_prototype};

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
