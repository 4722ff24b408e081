//! `plumb eval` end to end: the real binary on the repository's own task set
//! (`examples/tasks/`), on SWE-bench's marshmallow records, and on small sets made here, behind
//! the default sandbox. Each case reads what the eval left under `--out` (result.json per
//! attempt, summary.json, report.html).

mod examples;
mod queue;
mod runner;
mod swebench;

use std::path::{Path, PathBuf};
use std::process::Output;

use plumb_eval::AttemptResult;

use crate::suite::common::plumb;

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `examples/tasks/tasks.jsonl` beside freshly made repositories, in `dir`.
pub fn example_set(dir: &Path) -> PathBuf {
    let tasks = root().join("examples/tasks");
    let made = std::process::Command::new("bash")
        .arg(tasks.join("make-repos.sh"))
        .arg(dir.join("repos"))
        .output()
        .unwrap();
    assert!(made.status.success(), "make-repos.sh: {made:?}");
    let file = dir.join("tasks.jsonl");
    std::fs::copy(tasks.join("tasks.jsonl"), &file).unwrap();
    file
}

/// `plumb eval ARGS` with a private home.
pub fn eval(home: &Path, args: &[&str]) -> Output {
    let mut all = vec!["eval"];
    all.extend_from_slice(args);
    plumb(home, &all)
}

/// Every attempt's result under `out`, by id and attempt.
pub fn results(out: &Path) -> Vec<AttemptResult> {
    plumb_eval::report::collect(out).unwrap()
}

/// The ids of `results` that satisfy `keep`.
pub fn ids(results: &[AttemptResult], keep: impl Fn(&AttemptResult) -> bool) -> Vec<String> {
    results
        .iter()
        .filter(|r| keep(r))
        .map(|r| r.instance_id.clone())
        .collect()
}
