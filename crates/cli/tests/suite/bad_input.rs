//! Bad input gets exit 2 and one sentence that says what to change.

use pretty_assertions::assert_eq;

use super::common::{Fixture, plumb, stderr};

fn fix(fixture: &Fixture, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["fix"];
    all.extend_from_slice(args);
    let output = plumb(fixture.home.path(), &all);
    (output.status.code(), stderr(&output))
}

#[test]
fn each_bad_input_names_what_to_change() {
    let fixture = Fixture::billing();
    let repo = fixture.repo_path().display().to_string();
    let ticket = fixture.ticket().display().to_string();
    let file_as_repo = fixture.ticket().display().to_string();
    let missing = fixture.home.path().join("nowhere").display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--repo", &repo, "--ticket", &ticket, "--frobnicate"],
            "--frobnicate",
        ),
        (
            vec![
                "--repo", &missing, "--ticket", &ticket, "--model", "script:x",
            ],
            "does not exist; pass the folder",
        ),
        (
            vec!["--repo", &repo, "--ticket", &missing, "--model", "script:x"],
            "cannot be read (no such file)",
        ),
        (
            vec![
                "--repo",
                &file_as_repo,
                "--ticket",
                &ticket,
                "--model",
                "script:x",
            ],
            "is a file, not a folder",
        ),
        (
            vec!["--repo", &repo, "--ticket", &ticket, "--model", "gpt4"],
            "has no provider prefix",
        ),
        (
            vec![
                "--repo",
                &repo,
                "--ticket",
                &ticket,
                "--model",
                "script:/no/such/script.jsonl",
            ],
            "could not read the model script",
        ),
        (
            vec![
                "--repo",
                &repo,
                "--ticket",
                &ticket,
                "--model",
                "script:x",
                "-c",
                "limits.max_roundz=3",
            ],
            "max_roundz",
        ),
    ];
    let actual: Vec<(Option<i32>, bool)> = cases
        .iter()
        .map(|(args, needle)| {
            let (code, err) = fix(&fixture, args);
            (code, err.contains(needle))
        })
        .collect();
    let expected: Vec<(Option<i32>, bool)> = cases.iter().map(|_| (Some(2), true)).collect();
    assert_eq!(actual, expected);
}
