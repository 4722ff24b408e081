//! The assembled prompt of rounds 1 and 12 of the Python, Rust and JavaScript tasks, as the
//! embedded model reads it, kept as snapshots: a change to the rules, a tool's description, the
//! first message, the history's bounds or a helper's notes shows here in review. Review a change
//! with `cargo insta review` (or `INSTA_UPDATE=always` and `git diff`).

use super::tasks::{self, Task};
use super::{Measured, run_task};

/// The rounds kept: the first request, and one deep into a run whose history is bounded.
const ROUNDS: [usize; 2] = [1, 12];

/// `prompt` without what differs between two runs of the same script, none of it text plumb
/// chose: times (plumb's `0.46 s`, cargo's `finished in 0.00s`, node's `duration_ms: 0.32`) and
/// the thread ids in Rust's panic messages. The run's scratch folder (the host's path of the
/// workspace) must not be in it at all: node prints a failing test's absolute path, which the
/// tools write relative to the workspace.
fn stable(prompt: &str, scratch: &str) -> String {
    assert!(
        !prompt.contains(scratch),
        "a prompt holds the host's path of the run folder {scratch}"
    );
    let rules: [(&str, &str); 3] = [
        (r"\b\d+\.\d+ ?(s|ms)\b", "<time> $1"),
        (r"duration_ms:? \d+(\.\d+)?", "duration_ms <time>"),
        (r"(thread '[^']*') \(\d+\) panicked", "$1 (<id>) panicked"),
    ];
    let mut text = prompt.to_string();
    for (pattern, replacement) in rules {
        let pattern = regex::Regex::new(pattern).unwrap();
        text = pattern.replace_all(&text, replacement).into_owned();
    }
    text
}

async fn snapshot(task: Task) {
    let Measured {
        prompts, scratch, ..
    } = run_task(&task).await;
    assert!(
        prompts.len() >= 12,
        "{}: the run ended after {} requests",
        task.name,
        prompts.len()
    );
    for round in ROUNDS {
        insta::assert_snapshot!(
            format!("{}_round_{round}", task.name),
            stable(&prompts[round - 1], &scratch)
        );
    }
}

#[tokio::test]
async fn python_prompts() {
    snapshot(tasks::python()).await;
}

#[tokio::test]
async fn rust_prompts() {
    snapshot(tasks::rust()).await;
}

#[tokio::test]
async fn javascript_prompts() {
    snapshot(tasks::javascript()).await;
}
