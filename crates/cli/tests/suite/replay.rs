//! `plumb replay` re-runs a journal and reaches the same patch, byte for byte.

use plumb_protocol::Outcome;
use plumb_test_support::billing_example;
use pretty_assertions::assert_eq;

use super::common::{Fixture, plumb, report, stderr};

#[test]
fn replaying_the_bill_412_journal_reproduces_the_patch() {
    let fixture = Fixture::billing();
    let script = billing_example().join("bill-412.script.jsonl");
    let first = report(&fixture.fix_with_script(&script, &[]));

    let output = plumb(fixture.home.path(), &["replay", &first.journal, "--json"]);

    let replayed = report(&output);
    let actual = (
        output.status.code(),
        replayed.outcome,
        replayed.patch == first.patch,
        replayed.patch_sha256 == first.patch_sha256,
    );
    assert_eq!(
        actual,
        (Some(0), Outcome::Success, true, true),
        "stderr: {}",
        stderr(&output)
    );
    assert!(!first.patch.is_empty());
    assert!(stderr(&output).contains("same patch as the journal"));
}

#[test]
fn a_replay_against_a_changed_repository_is_refused() {
    let fixture = Fixture::billing();
    let script = billing_example().join("bill-412.script.jsonl");
    let first = report(&fixture.fix_with_script(&script, &[]));
    std::fs::write(fixture.repo_path().join("billing/tax.py"), "# changed\n").unwrap();

    let output = plumb(fixture.home.path(), &["replay", &first.journal]);

    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("is not the tree the journal was written against"),
        "{}",
        stderr(&output)
    );
}
