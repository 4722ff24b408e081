//! Committed links into the host: every part of the prompt plumb builds from the repository
//! (project notes, code up front, the repo map) and every reading tool must refuse a file whose
//! link leads out of the tree, so the secret never reaches a request.

use plumb_test_support::Script;
use serde_json::json;

use super::support::{Outside, repo_with};
use crate::suite::common::{plumb, report};

/// `plumb fix` on `repo` with a script of `turns`, without a sandbox (the prompt builder runs on
/// the host whatever the backend), and the extra flags.
fn fix(
    repo: &std::path::Path,
    home: &std::path::Path,
    script: Script,
    extra: &[&str],
) -> std::process::Output {
    let path = home.join("script.jsonl");
    script.write(&path);
    let model = format!("script:{}", path.display());
    let repo_arg = repo.display().to_string();
    let ticket = repo.join("BILL-412.md").display().to_string();
    let mut args = vec![
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
    ];
    args.extend_from_slice(extra);
    plumb(home, &args)
}

#[test]
fn a_notes_file_linked_out_of_the_tree_is_not_sent() {
    for name in ["AGENTS.md", "CLAUDE.md", ".plumb/notes.md"] {
        let outside = Outside::new();
        let secret = outside.secret();
        let repo = repo_with(&[], &[(name, secret.as_path())]);
        let home = tempfile::tempdir().unwrap();
        let output = fix(
            repo.path(),
            home.path(),
            Script::new().tool("done", json!({"summary": "nothing"})),
            &[],
        );
        let report = report(&output);
        assert!(
            report.rounds >= 1,
            "{name}: the run did not reach the model"
        );
        outside.assert_untouched(home.path(), &output);
    }
}
