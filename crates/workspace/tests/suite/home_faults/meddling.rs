//! The window of the race in the finding, without racing: the user's write at a chosen step.

use std::cell::RefCell;
use std::fs;
use std::io;

use pretty_assertions::assert_eq;

use plumb_workspace::{Faults, Step, apply_to_tree, undo_with};

use super::{apply, files, record_bytes, tree_prototype};

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
