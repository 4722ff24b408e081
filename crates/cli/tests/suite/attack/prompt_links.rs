//! Committed links into the host: every part of the prompt plumb builds from the repository
//! (project notes, code up front, the repo map) and every reading tool must refuse a file whose
//! link leads out of the tree, so the secret never reaches a request.

use plumb_test_support::Script;
use serde_json::json;

use super::support::{Outside, fix_within, repo_with, tool_outputs};
use crate::suite::common::{journal_events, report, requests_of};

fn done() -> Script {
    Script::new().tool("done", json!({"summary": "nothing"}))
}

/// Every message of every model request of the run, as one text.
fn requests(report: &plumb_protocol::FinalReport) -> String {
    requests_of(&journal_events(report))
        .into_iter()
        .map(|request| serde_json::to_string(&request.messages).unwrap())
        .collect()
}

#[test]
fn a_notes_file_linked_out_of_the_tree_is_not_sent() {
    for name in ["AGENTS.md", "CLAUDE.md", ".plumb/notes.md"] {
        let outside = Outside::new();
        let secret = outside.secret();
        let repo = repo_with(&[], &[(name, secret.as_path())]);
        if name != "AGENTS.md" {
            // The example's own AGENTS.md would be found first.
            std::fs::remove_file(repo.path().join("AGENTS.md")).unwrap();
        }
        let home = tempfile::tempdir().unwrap();
        let output = fix_within(
            120,
            repo.path(),
            home.path(),
            done(),
            &["--sandbox", "none"],
        );
        let report = report(&output);
        assert!(
            !requests(&report).is_empty(),
            "{name}: the run did not reach the model"
        );
        outside.assert_untouched(home.path(), &output);
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("the project notes were not read"),
            "{name}: no warning said the notes were left out"
        );
    }
}

#[test]
fn notes_in_a_linked_folder_are_not_sent() {
    let mut outside = Outside::new();
    let token = outside.token().to_owned();
    outside.add("notes.md", &format!("# notes\n{token}\n"));
    let repo = repo_with(&[], &[(".plumb", outside.path())]);
    std::fs::remove_file(repo.path().join("AGENTS.md")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let output = fix_within(
        120,
        repo.path(),
        home.path(),
        done(),
        &["--sandbox", "none"],
    );
    assert!(!requests(&report(&output)).is_empty());
    outside.assert_untouched(home.path(), &output);
}

/// Notes of the folders the ticket's files are in reach the first request after the root's;
/// those of a folder not in play do not; and a nested notes file that links out of the tree is
/// refused like the root's.
#[test]
fn nested_notes_of_the_folders_in_play_are_sent_and_a_linked_one_is_not() {
    let outside = Outside::new();
    let secret = outside.secret();
    let ticket =
        std::fs::read_to_string(plumb_test_support::billing_example().join("BILL-412.md")).unwrap();
    let ticket = format!(
        "{ticket}\nThe tax is worked out in billing/tax.py and tested in tests/test_tax.py.\n"
    );
    let repo = repo_with(
        &[
            ("BILL-412.md", &ticket),
            ("billing/AGENTS.md", "BILLING-NOTES: amounts are Decimal.\n"),
            ("migrations/AGENTS.md", "MIGRATION-NOTES: never edit.\n"),
        ],
        &[("tests/AGENTS.md", secret.as_path())],
    );
    let home = tempfile::tempdir().unwrap();
    let output = fix_within(
        120,
        repo.path(),
        home.path(),
        done(),
        &["--sandbox", "none"],
    );
    let sent = requests(&report(&output));
    let actual = (
        sent.contains("# Project notes (AGENTS.md)"),
        sent.contains("# Project notes (billing/AGENTS.md)") && sent.contains("BILLING-NOTES"),
        sent.contains("MIGRATION-NOTES"),
        String::from_utf8_lossy(&output.stderr).contains("the project notes were not read"),
    );
    assert_eq!(actual, (true, true, false, true), "{sent}");
    outside.assert_untouched(home.path(), &output);
}

#[test]
fn code_up_front_and_the_repo_map_leave_out_a_linked_source_file() {
    let mut outside = Outside::new();
    let token = outside.token().to_owned();
    // The ticket's own words, more often than any real file has them (the helper counts up to
    // five of each), so the linked file would be the one shown.
    let ticket =
        std::fs::read_to_string(plumb_test_support::billing_example().join("BILL-412.md")).unwrap();
    let comments: String = ticket.lines().map(|line| format!("# {line}\n")).collect();
    let source = format!(
        "{}def leaked_gst_discount():\n    return '{token}'\n",
        comments.repeat(6)
    );
    let target = outside.add("gst_discount_invoice_totals.py", &source);
    let repo = repo_with(
        &[],
        &[
            ("billing/gst_discount_invoice_totals.py", target.as_path()),
            (
                "tests/test_gst_discount_invoice_totals.py",
                target.as_path(),
            ),
        ],
    );
    let home = tempfile::tempdir().unwrap();
    let output = fix_within(
        120,
        repo.path(),
        home.path(),
        Script::new()
            .tool("list_files", json!({}))
            .tool("done", json!({"summary": "x"})),
        &["--sandbox", "none", "-c", "helpers.code_up_front=true"],
    );
    let report = report(&output);
    outside.assert_untouched(home.path(), &output);
    assert!(
        requests(&report).contains("billing/invoice_totals.py: lines"),
        "the code up front is not the real source file"
    );
    assert_eq!(tool_outputs(&report, "list_files").len(), 1);
}

/// These refusals held before issue 20 (the tools resolved paths already); kept beside the new
/// cases so a change to the reader cannot lose them.
#[test]
fn every_reading_tool_refuses_a_committed_link_out() {
    let mut outside = Outside::new();
    let token = outside.token().to_owned();
    outside.add(
        "module.py",
        &format!("def leaked():\n    return '{token}'\n"),
    );
    let repo = repo_with(
        &[],
        &[
            ("billing/leak.py", outside.secret().as_path()),
            ("vendor", outside.path()),
        ],
    );
    let home = tempfile::tempdir().unwrap();
    let script = Script::new()
        .tool("read_file", json!({"path": "billing/leak.py"}))
        .tool("read_file", json!({"path": "vendor/module.py"}))
        .tool("search_code", json!({"query": "CANARY"}))
        .tool("search_code", json!({"query": "leaked", "path": "vendor"}))
        .tool("list_files", json!({"path": "vendor"}))
        .tool("list_files", json!({"path": "billing"}))
        .tool(
            "edit_file",
            json!({"path": "billing/leak.py", "old_text": "PLUMB", "new_text": "x"}),
        )
        .tool("done", json!({"summary": "x"}));
    let output = fix_within(120, repo.path(), home.path(), script, &[]);
    let report = report(&output);
    let reads = tool_outputs(&report, "read_file");
    assert_eq!(reads.len(), 2);
    assert!(
        reads
            .iter()
            .all(|out| out.contains("you can only read files inside the project folder")),
        "{reads:?}"
    );
    let searches = tool_outputs(&report, "search_code");
    assert!(searches[0].contains("0 matches") || !searches[0].contains("billing/leak.py"));
    outside.assert_untouched(home.path(), &output);
}
