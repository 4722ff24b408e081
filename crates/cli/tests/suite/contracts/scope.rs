//! The scope of the reading tools (docs/contracts.md §3: every path any tool takes is confined to
//! the workspace, reads included): `search_code` and `list_files` given a `path` that escapes —
//! `..`, an absolute path, a committed link out of the tree — are refused with a note and the run
//! goes on; over the whole tree they do not follow that link. The secret outside never reaches
//! anything plumb writes.

use plumb_test_support::Script;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::finished_tools;
use crate::suite::attack::support::{Outside, repo_with};
use crate::suite::common::{journal_events, plumb, report, stderr};

#[test]
fn search_code_and_list_files_refuse_a_path_that_escapes_and_do_not_follow_links_out() {
    let outside = Outside::new();
    let repo = repo_with(
        &[],
        &[
            ("escape", outside.path()),
            ("billing/secret-link.txt", outside.secret().as_path()),
        ],
    );
    let home = tempfile::tempdir().unwrap();
    let absolute = outside.path().display().to_string();
    // The query is the token's first part: a hit would print the whole token, while the query
    // alone (in the script and the journal) does not hold it.
    let query = outside
        .token()
        .split('-')
        .take(2)
        .collect::<Vec<_>>()
        .join("-");
    let search = |path: Option<&str>| match path {
        Some(path) => ("search_code", json!({"query": query, "path": path})),
        None => ("search_code", json!({ "query": query })),
    };
    let list = |path: &str| ("list_files", json!({ "path": path }));
    let refused: Vec<(&str, Value)> = vec![
        search(Some("..")),
        search(Some("billing/../..")),
        search(Some(&absolute)),
        search(Some("/etc")),
        search(Some("escape")),
        search(Some("escape/secret.txt")),
        search(Some("billing/secret-link.txt")),
        list(".."),
        list("tests/../../"),
        list(&absolute),
        list("escape"),
    ];
    let whole_tree: Vec<(&str, Value)> = vec![search(None), ("list_files", json!({}))];
    let mut script = Script::new();
    for (tool, args) in refused.iter().chain(&whole_tree) {
        script = script.tool(tool, args.clone());
    }
    let path = home.path().join("scope.jsonl");
    script.write(&path);
    let repo_arg = repo.path().display().to_string();
    let ticket = repo.path().join("BILL-412.md").display().to_string();
    let model = format!("script:{}", path.display());

    let output = plumb(
        home.path(),
        &[
            "fix",
            "--repo",
            &repo_arg,
            "--ticket",
            &ticket,
            "--model",
            &model,
            "--json",
            "--sandbox",
            "none",
        ],
    );

    let report = report(&output);
    let results = finished_tools(&journal_events(&report));
    let actual: Vec<(String, bool, bool)> = results
        .iter()
        .map(|(name, ok, text)| {
            (
                name.clone(),
                *ok,
                text.starts_with("Error:") && text.contains("inside the project folder"),
            )
        })
        .collect();
    let mut expected: Vec<(String, bool, bool)> = refused
        .iter()
        .map(|(tool, _)| (tool.to_string(), false, true))
        .collect();
    expected.extend(
        whole_tree
            .iter()
            .map(|(tool, _)| (tool.to_string(), true, false)),
    );
    assert_eq!(
        actual,
        expected,
        "{results:#?}\nstderr: {}",
        stderr(&output)
    );
    outside.assert_untouched(home.path(), &output);
}
