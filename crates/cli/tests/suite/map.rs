//! `plumb map`: the ranked repo map of the billing example for BILL-412, its budget kept, its tag
//! cache outside the repository and used by the second call; bad input is exit 2 naming the flag.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::common::{Fixture, plumb_command, stderr};

fn map(fixture: &Fixture, extra: &[&str]) -> Output {
    plumb_command(fixture.home.path())
        .env("XDG_CACHE_HOME", fixture.home.path().join("cache"))
        .arg("map")
        .arg("--repo")
        .arg(fixture.repo_path())
        .args(extra)
        .output()
        .unwrap()
}

fn json(output: &Output) -> Value {
    assert!(output.status.success(), "{}", stderr(output));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn git_status(repo: &Path) -> String {
    let output = std::process::Command::new("git")
        .args(["status", "--porcelain", "--ignored"])
        .current_dir(repo)
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_map_ranks_the_tickets_files_keeps_its_budget_and_caches_outside_the_repository() {
    let fixture = Fixture::billing();
    let ticket = fixture.ticket().display().to_string();

    let first = map(&fixture, &["--ticket", &ticket, "--tokens", "4000"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let text = String::from_utf8(first.stdout.clone()).unwrap();
    // An outline: the folder, its files, and definition lines with their numbers.
    assert!(text.contains("billing/\n"), "{text}");
    assert!(text.contains("  tax.py\n"), "{text}");
    assert!(text.contains(": def "), "{text}");
    let said = stderr(&first);
    assert!(said.contains("from the cache"), "{said}");

    // The ticket speaks of tax: the tax module ranks among the first files.
    let ranked = json(&map(&fixture, &["--ticket", &ticket, "--json"]));
    let top: Vec<&str> = ranked["ranked_files"]
        .as_array()
        .unwrap()
        .iter()
        .take(3)
        .map(|file| file["path"].as_str().unwrap())
        .collect();
    assert!(top.contains(&"billing/tax.py"), "{top:?}");
    // The second call found every source file in the cache.
    assert_eq!(ranked["index"]["parsed"], 0, "{ranked}");
    assert!(
        ranked["index"]["cached"].as_u64().unwrap() >= 10,
        "{ranked}"
    );

    // The cache is in the cache folder; the repository is as it was.
    let tags = fixture.home.path().join("cache/plumb/tags");
    assert_eq!(std::fs::read_dir(&tags).unwrap().count(), 1);
    assert_eq!(git_status(fixture.repo_path()), "");

    // A small budget is kept, by the same count the map reports.
    for budget in [0_u64, 20, 60, 200] {
        let small = json(&map(&fixture, &["--json", "--tokens", &budget.to_string()]));
        let tokens = small["map"]["tokens"].as_u64().unwrap();
        assert!(tokens <= budget, "{budget}: {small}");
    }
}

#[test]
fn a_missing_repository_or_ticket_is_bad_input_naming_the_flag() {
    let fixture = Fixture::billing();
    let missing = fixture.home.path().join("no-such-folder");
    let output = plumb_command(fixture.home.path())
        .args(["map", "--repo"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--repo"), "{}", stderr(&output));

    let no_ticket = fixture
        .home
        .path()
        .join("no-ticket.md")
        .display()
        .to_string();
    let output = map(&fixture, &["--ticket", &no_ticket]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--ticket"), "{}", stderr(&output));
}
