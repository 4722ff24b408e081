//! What the model sees first on BILL-412: the rules, then the ticket on top, the project notes, the
//! test command and the repo map. Snapshots make a change in the prompt visible in review.

use std::path::Path;

use plumb_context::notes::NotesFile;
use plumb_context::prompt::{FirstMessage, first_message, rules};
use plumb_context::repo_map::{RepoMapOptions, render_outline};

fn tree(root: &std::path::Path) -> plumb_workspace::Tree {
    plumb_workspace::Tree::new(root).unwrap()
}

#[test]
fn bill_412_first_prompt_snapshot() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/billing");
    let ticket = std::fs::read_to_string(example.join("BILL-412.md")).unwrap();
    let notes = std::fs::read_to_string(example.join("AGENTS.md")).unwrap();
    let map = render_outline(
        &tree(&example),
        None,
        &RepoMapOptions {
            max_chars: 6000,
            max_files: 2000,
            tests_by_name: false,
        },
    )
    .unwrap();

    let text = first_message(&FirstMessage {
        ticket: &ticket,
        notes: &[NotesFile {
            path: "AGENTS.md".into(),
            text: notes,
        }],
        test_command: "python3 -m pytest -q -p no:cacheprovider",
        baseline: "40 passed",
        repo_map: &map,
        code: None,
    })
    .unwrap();

    assert!(text.starts_with("# Ticket\n\n# BILL-412"), "{text}");
    insta::assert_snapshot!("rules", rules(false, false, false).unwrap());
    insta::assert_snapshot!("bill_412_first_message", text);
}
