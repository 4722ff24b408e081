//! The `run` tool's allow-list (docs/contracts.md §3: one command from the list, no shell syntax):
//! an empty argv, shell words and a command not on the list are each refused with a note the model
//! can act on, nothing runs, and the run goes on to the next call, which runs.

use plumb_protocol::Outcome;
use plumb_test_support::Script;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::finished_tools;
use crate::suite::common::{Fixture, journal_events, report, shadow_git, stderr};

#[test]
fn run_refuses_an_empty_argv_shell_words_and_commands_off_the_list_and_the_run_goes_on() {
    let fixture = Fixture::billing();
    // (argv, what the note must say). The test command's own prefix is on the list, so every
    // refused call but the last two starts like an allowed one.
    let refused: Vec<(Value, &str)> = vec![
        (json!([]), "argv is empty"),
        (
            json!(["python3", "-m", "pytest", "-q", "&&", "touch", "ran.txt"]),
            "`&&` is shell syntax",
        ),
        (
            json!(["python3", "-m", "pytest", "-q", ";", "touch", "ran.txt"]),
            "`;` is shell syntax",
        ),
        (
            json!(["python3", "-m", "pytest", "|", "tee", "ran.txt"]),
            "`|` is shell syntax",
        ),
        (
            json!(["python3", "-m", "pytest", ">", "ran.txt"]),
            "`>` is shell syntax",
        ),
        (
            json!(["python3", "-m", "pytest", "$(touch ran.txt)"]),
            "`$(touch ran.txt)` is shell syntax",
        ),
        (
            json!(["python3", "-m", "pytest", "`touch ran.txt`"]),
            "is shell syntax",
        ),
        (
            json!(["python3", "-c", "open('ran.txt', 'w')"]),
            "`python3 -c open('ran.txt', 'w')` is not allowed. Allowed commands start with: ",
        ),
        (
            json!(["touch", "ran.txt"]),
            "`touch ran.txt` is not allowed. Allowed commands start with: ",
        ),
    ];
    let mut script = Script::new();
    for (argv, _) in &refused {
        script = script.tool("run", json!({ "argv": argv }));
    }
    let allowed = json!(["python3", "-m", "pytest", "-q", "tests/test_tax.py"]);
    script = script.tool("run", json!({ "argv": allowed }));
    let path = fixture.script_path("run.jsonl");
    script.write(&path);

    let output = fixture.fix_with_script(&path, &[]);

    let report = report(&output);
    let results = finished_tools(&journal_events(&report));
    let actual: Vec<(bool, bool)> = results
        .iter()
        .zip(
            refused
                .iter()
                .map(|(_, note)| *note)
                .chain(["`python3 -m pytest -q tests/test_tax.py`: exit 0"]),
        )
        .map(|((_, ok, text), needle)| (*ok, text.contains(needle)))
        .collect();
    let mut expected = vec![(false, true); refused.len()];
    expected.push((true, true));
    assert_eq!(
        actual,
        expected,
        "{results:#?}\nstderr: {}",
        stderr(&output)
    );
    let rest = (
        output.status.code(),
        report.outcome,
        report.rounds as usize,
        results.len(),
        // A command that ran would have left ran.txt in a checkpoint, rolled back or not.
        plumb_test_support::git(
            &shadow_git(&report),
            &["log", "--all", "--name-only", "--format="],
        )
        .lines()
        .any(|line| line == "ran.txt"),
    );
    assert_eq!(
        rest,
        (
            Some(1),
            Outcome::ModelStopped,
            // One round more than calls: the one in which the script has nothing left.
            refused.len() + 2,
            refused.len() + 1,
            false
        )
    );
}
