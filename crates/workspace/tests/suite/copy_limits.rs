//! The copy's size limits: a file over `max_file_bytes` is left out whole and named (a sparse one
//! as sparse), a tree over `max_total_bytes` is refused, and the source is only read either way.

use std::fs;

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use plumb_workspace::{CopyLimits, SkippedFile, Workspace, WorkspaceLimits};

use super::{entries, listing, snapshot, write};

const LIMITS: CopyLimits = CopyLimits {
    max_file_bytes: 1000,
    max_total_bytes: 10 << 20,
    workspace: WorkspaceLimits::DEFAULT,
};

#[test]
fn a_file_over_the_cap_is_left_out_whole_and_named() {
    let tmp = TempDir::new().unwrap();
    let repo = tmp.path().join("repo");
    write(&repo, "src/app.py", "X = 1\n");
    write(&repo, "data/big.bin", &"b".repeat(2000));
    // A megabyte that holds nothing: no block of it is written.
    fs::File::create(repo.join("data/disk.img"))
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let before = snapshot(&repo);

    let (ws, report) = Workspace::prepare_with(&repo, &tmp.path().join("run"), &LIMITS).unwrap();
    let mut skipped: Vec<SkippedFile> = report.skipped.clone();
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    let actual = (
        listing(ws.root()),
        skipped
            .iter()
            .map(|s| (s.path.clone(), s.bytes, s.allocated < s.bytes / 2))
            .collect::<Vec<_>>(),
        skipped[1].to_string(),
        report.bytes,
        snapshot(&repo) == before,
    );

    let expected = (
        entries(&[("data/", ""), ("src/", ""), ("src/app.py", "X = 1\n")]),
        vec![
            ("data/big.bin".to_string(), 2000, false),
            ("data/disk.img".to_string(), 1 << 20, true),
        ],
        "data/disk.img was left out of the workspace: it is 1.0 MiB (0 bytes of it on disk: a sparse \
         file), over limits.max_file_bytes (1000 bytes); the agent does not see it and your repository \
         still has it. Raise limits.max_file_bytes if the fix needs it"
            .to_string(),
        6,
        true,
    );
    assert_eq!(actual, expected);
}

#[test]
fn a_tree_over_the_total_cap_is_refused_as_bad_input() {
    let tmp = TempDir::new().unwrap();
    let repo = tmp.path().join("repo");
    write(&repo, "a.txt", &"a".repeat(600));
    write(&repo, "b.txt", &"b".repeat(600));
    let limits = CopyLimits {
        max_file_bytes: 1000,
        max_total_bytes: 1000,
        workspace: WorkspaceLimits::DEFAULT,
    };

    let err = Workspace::prepare_with(&repo, &tmp.path().join("run"), &limits).unwrap_err();
    let actual = (err.is_infra(), err.to_string());

    let expected = (
        false,
        format!(
            "the files of {} add up to more than limits.max_copy_bytes (1000 bytes); list the large folders \
             that a fix does not need in .plumbignore, or raise limits.max_copy_bytes",
            repo.canonicalize().unwrap().display()
        ),
    );
    assert_eq!(actual, expected);
}
