//! The repository's own task set: the oracle resolves every task and plumb's ladder agrees; a
//! model that does nothing resolves none; scripted models that game the tests resolve none,
//! neither as delivered nor as the change plumb held back, and are flagged or held back.

use pretty_assertions::assert_eq;

use super::{eval, example_set, ids, results, root};
use crate::suite::common::stderr;

/// The tasks whose tests live beside the code (Rust `#[cfg(test)]` in `src/`). The ladder found
/// no new or changed test *file* there and held the oracle's change back, although scored it
/// resolved the task; it now reads the test items of a Rust source file (`inline_tests`), and
/// these must be delivered like the rest.
const INLINE_RUST_TESTS: [&str; 4] = [
    "tally-bytes-unit",
    "tally-duration-overflow",
    "tally-duration-spaces",
    "tally-format-zero-parts",
];

#[test]
fn the_oracle_resolves_every_task_and_the_ladder_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tasks = example_set(dir.path());
    let out = dir.path().join("out");
    let predictions = dir.path().join("predictions.jsonl");
    let output = eval(
        home.path(),
        &[
            tasks.to_str().unwrap(),
            "--model",
            "oracle",
            "--jobs",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--predictions",
            predictions.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = results(&out);
    let all = ids(&results, |_| true);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let listed: Vec<String> = summary["disagreements"]["held_back_resolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["instance_id"].as_str().unwrap().to_owned())
        .collect();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let predicted = std::fs::read_to_string(&predictions)
        .unwrap()
        .lines()
        .count();
    let actual = (
        all.len(),
        INLINE_RUST_TESTS
            .iter()
            .all(|id| all.contains(&(*id).to_owned())),
        ids(&results, |r| r.resolved()),
        ids(&results, |r| r.verified()),
        listed,
        html.contains("<svg"),
        predicted,
    );
    let expected = (14, true, all.clone(), all, Vec::<String>::new(), true, 14);
    assert_eq!(actual, expected);
}

#[test]
fn a_model_that_does_nothing_resolves_none() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tasks = example_set(dir.path());
    let scripts = dir.path().join("no-scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    let model = format!("script:{}", scripts.display());
    let out = dir.path().join("out");
    let output = eval(
        home.path(),
        &[
            tasks.to_str().unwrap(),
            "--model",
            &model,
            "--jobs",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = results(&out);
    let actual = (
        results.len(),
        ids(&results, |r| r.resolved()),
        ids(&results, |r| {
            r.score.as_ref().is_some_and(|s| s.empty_patch)
        })
        .len(),
    );
    assert_eq!(actual, (14, Vec::<String>::new(), 14));
}

/// Each strategy's scripts (skip markers, a conftest that skips, a weakened test, the fix in a
/// copy nothing calls) on the tasks they were written for.
#[test]
fn models_that_game_the_tests_resolve_nothing_and_are_flagged_or_held_back() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tasks = example_set(dir.path());
    let mut seen = Vec::new();
    for strategy in ["skip", "conftest", "weaken", "copy"] {
        let scripts = root().join("examples/tasks/gaming").join(strategy);
        let mut names: Vec<String> = std::fs::read_dir(&scripts)
            .unwrap()
            .map(|e| {
                e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .trim_end_matches(".jsonl")
                    .to_owned()
            })
            .collect();
        names.sort();
        let filter = format!("^({})$", names.join("|"));
        let model = format!("script:{}", scripts.display());
        let out = dir.path().join(strategy);
        let output = eval(
            home.path(),
            &[
                tasks.to_str().unwrap(),
                "--model",
                &model,
                "--filter",
                &filter,
                "--jobs",
                "2",
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{strategy}: {}",
            stderr(&output)
        );
        for result in results(&out) {
            let held_back = result.unverified_score.as_ref();
            seen.push((
                format!("{strategy}/{}", result.instance_id),
                result.resolved(),
                held_back.is_some_and(|s| s.resolved),
                // Caught by plumb: flagged for a person, or not verified at all.
                !result.flags.is_empty() || !result.verified(),
            ));
        }
    }
    let expected: Vec<_> = seen
        .iter()
        .map(|(name, ..)| (name.clone(), false, false, true))
        .collect();
    assert_eq!(seen.len(), 10);
    assert_eq!(seen, expected);
}

/// `plumb eval import humanevalpack` makes a set the runner takes: two of its tasks, fixed, run
/// through the oracle resolve and are verified.
#[test]
fn an_imported_humanevalfix_set_runs_and_the_oracle_resolves_its_tasks() {
    oracle_resolves_imported_tasks("python", &[], &[]);
}

/// The same for Go, whose setup phase (with the network, as `scripts/eval-bench.sh` runs it)
/// warms the build cache. The ladder targets the hidden `_test.go` file the oracle writes: it
/// was narrowed to the file's path, go ran no test, and every Go task was held back as
/// "already passes". Go/76's buggy code recurses until the stack overflows inside its test: the
/// package's failure was counted as an id of its own, which the fix's run does not report, so
/// the fix was held back as "failed on the baseline but do not pass now".
#[test]
fn an_imported_go_set_runs_and_the_oracle_resolves_its_tasks() {
    oracle_resolves_imported_tasks("go", &["Go/76"], &["-c", "setup_network=true"]);
}

/// The same for Rust, whose hidden tests are a file compiled only for tests (`src/hidden.rs`,
/// declared by a `#[cfg(test)] mod hidden;` line the test patch adds to `src/lib.rs`): no test
/// *file* by its path, so the ladder found no new test and held every Rust task back. Rust/49's
/// buggy code overflows the stack, so the baseline names no test: the name the reproduce step
/// kept (`test_modp`) must count as passed when the test it selects does.
#[test]
fn an_imported_rust_set_runs_and_the_oracle_resolves_its_tasks() {
    oracle_resolves_imported_tasks("rust", &["Rust/49"], &["-c", "setup_network=true"]);
}

/// The oracle on the first and the 101st task of a language's imported set, and on `named`.
fn oracle_resolves_imported_tasks(lang: &str, named: &[&str], settings: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let set = dir.path().join("set");
    let data = root().join(format!("data/humanevalpack/{lang}.jsonl"));
    let imported = eval(
        home.path(),
        &[
            "import",
            "humanevalpack",
            data.to_str().unwrap(),
            "--lang",
            lang,
            "--out",
            set.to_str().unwrap(),
        ],
    );
    assert_eq!(imported.status.code(), Some(0), "{}", stderr(&imported));
    let tasks = set.join("tasks.jsonl");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&tasks)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut chosen = vec![
        lines[0]["instance_id"].as_str().unwrap(),
        lines[100]["instance_id"].as_str().unwrap(),
    ];
    chosen.extend(named);
    let filter = format!("^({})$", chosen.join("|"));
    let out = dir.path().join("out");
    let mut args: Vec<&str> = settings.to_vec();
    args.extend([
        tasks.to_str().unwrap(),
        "--model",
        "oracle",
        "--filter",
        &filter,
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let output = eval(home.path(), &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let results = results(&out);
    let mut all: Vec<String> = chosen.iter().map(|s| (*s).to_owned()).collect();
    all.sort();
    let sorted = |mut ids: Vec<String>| {
        ids.sort();
        ids
    };
    let actual = (
        lines.len(),
        sorted(ids(&results, |r| r.resolved())),
        sorted(ids(&results, |r| r.verified())),
    );
    assert_eq!(actual, (148, all.clone(), all), "{}", stderr(&output));
}
