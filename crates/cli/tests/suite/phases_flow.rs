//! The guided phases end to end off BILL-412: a scripted model works through small projects of
//! other shapes — a ticket with no figures, a test that already fails at the baseline, the task's
//! named failing tests, a Rust crate whose tests live beside the code, a JavaScript package under
//! node's runner and under jest, a custom test command — and
//! each run must reach a verified fix, with the checks saying how the bug was shown.

use std::path::Path;
use std::process::Output;

use plumb_protocol::{CheckStep, Event, FinalReport, Outcome};
use plumb_test_support::{Script, git_repo_from};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{journal_events, plumb, report, stderr};

/// The phases on, as a small model has them, for a scripted model.
const SMALL: [&str; 2] = ["-c", "helpers.profile=small"];

/// A git repository holding `files` and the ticket `TICKET.md`.
fn repo(files: &[(&str, &str)], ticket: &str) -> tempfile::TempDir {
    let src = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = src.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(src.path().join("TICKET.md"), ticket).unwrap();
    git_repo_from(src.path())
}

/// `plumb fix` on `repo` with a script of `calls`, the phases on, JSON report.
fn fix(repo: &Path, calls: &[(&str, Value)], extra: &[&str]) -> (Output, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let script = home.path().join("script.jsonl");
    let mut written = Script::new();
    for (tool, args) in calls {
        written = written.tool(tool, args.clone());
    }
    written.write(&script);
    let model = format!("script:{}", script.display());
    let repo_arg = repo.display().to_string();
    let ticket = repo.join("TICKET.md").display().to_string();
    let mut args = vec![
        "fix", "--repo", &repo_arg, "--ticket", &ticket, "--model", &model, "--json",
    ];
    args.extend_from_slice(&SMALL);
    args.extend_from_slice(extra);
    (plumb(home.path(), &args), home)
}

fn evidence(report: &FinalReport, step: CheckStep) -> String {
    report
        .checks
        .iter()
        .find(|check| check.step == step)
        .map(|check| check.evidence.clone())
        .unwrap_or_default()
}

/// The answers the model got, in order.
fn answers(report: &FinalReport) -> Vec<String> {
    journal_events(report)
        .into_iter()
        .filter_map(|event| match event {
            Event::ToolFinished { output, .. } => Some(output),
            _ => None,
        })
        .collect()
}

/// A fix-then-test run's end: verified, the second answer saying the new test passes with the fix
/// and fails on the original code, the reproduce step's evidence naming `reproduced_by`.
fn assert_fixed_then_tested(output: &Output, reproduced_by: &str) {
    let report = report(output);
    let answers = answers(&report);
    let actual = (
        output.status.code(),
        report.outcome,
        answers
            .get(1)
            .is_some_and(|a| a.contains("passes with your fix and fails on the original code")),
        evidence(&report, CheckStep::Reproduce).contains(reproduced_by),
    );
    assert_eq!(
        actual,
        (Some(0), Outcome::Success, true, true),
        "{answers:#?}\n{}",
        stderr(output)
    );
}

const GREET: &str = "def greeting(user):\n    name = \"guest\"\n    return f\"Hello, {name}!\"\n";
const GREET_TEST: &str = "from greet import greeting\n\n\ndef test_greeting_is_friendly():\n    assert greeting(None).startswith(\"Hello\")\n";

#[test]
fn a_ticket_without_figures_is_fixed_then_tested_and_verified() {
    let repo = repo(
        &[("greet.py", GREET), ("tests/test_greet.py", GREET_TEST)],
        "The greeting ignores the user's name and always greets the guest. It should greet the user by name.\n",
    );
    let calls = [
        (
            "replace_function",
            json!({"path": "greet.py", "name": "greeting", "code": "def greeting(user):\n    name = user or \"guest\"\n    return f\"Hello, {name}!\"\n"}),
        ),
        (
            "edit_file",
            json!({"path": "tests/test_greet.py", "old_text": "", "new_text": "def test_greeting_uses_the_name():\n    assert greeting(\"Asha\") == \"Hello, Asha!\"\n"}),
        ),
        ("done", json!({"summary": "greets by name"})),
    ];
    let (output, _home) = fix(repo.path(), &calls, &["--sandbox", "none"]);
    let report = report(&output);
    let answers = answers(&report);
    let actual = (
        output.status.code(),
        report.outcome,
        answers
            .first()
            .is_some_and(|a| a.contains("The existing tests still pass")),
        evidence(&report, CheckStep::Reproduce).contains("test_greet.py"),
    );
    assert_eq!(
        actual,
        (Some(0), Outcome::Success, true, true),
        "{answers:#?}\n{}",
        stderr(&output)
    );
}

const MEDIAN: &str = "def median(l):\n    l = sorted(l)\n    if len(l) % 2 == 1:\n        return l[len(l) // 2]\n    return (l[len(l) - 1 // 2] + l[len(l) // 2]) / 2.0\n";
const MEDIAN_TEST: &str = "from median import median\n\n\ndef test_examples():\n    assert median([3, 1, 2, 4, 5]) == 3\n    assert median([-10, 4, 6, 1000, 10, 20]) == 8.0\n";
const MEDIAN_FIX: &str = "def median(l):\n    l = sorted(l)\n    if len(l) % 2 == 1:\n        return l[len(l) // 2]\n    return (l[len(l) // 2 - 1] + l[len(l) // 2]) / 2.0\n";

/// HumanEvalFix's shape: the example test fails at the baseline, and it is what shows the bug.
/// A wrong fix after which it still fails is kept and answered with the failure (before, plumb
/// undid it saying tests that passed before failed, which was untrue); the right fix opens
/// `done` at once, and the ladder takes the test that failed at baseline as the reproduction.
#[test]
fn a_test_failing_at_baseline_shows_the_bug_and_done_needs_no_new_test() {
    let repo = repo(
        &[("median.py", MEDIAN), ("tests/test_median.py", MEDIAN_TEST)],
        "`median` in `median.py` is buggy: its tests fail. Fix it.\n",
    );
    let calls = [
        (
            "edit_file",
            json!({"path": "median.py", "old_text": "    l = sorted(l)\n", "new_text": "    l = sorted(l, reverse=True)\n"}),
        ),
        (
            "replace_function",
            json!({"path": "median.py", "name": "median", "code": MEDIAN_FIX}),
        ),
        (
            "done",
            json!({"summary": "the even case averages the middle two"}),
        ),
    ];
    let (output, _home) = fix(repo.path(), &calls, &["--sandbox", "none"]);
    let report = report(&output);
    let answers = answers(&report);
    let actual = (
        output.status.code(),
        report.outcome,
        answers
            .first()
            .is_some_and(|a| a.contains("still fail") && !a.contains("passed before fail")),
        answers.get(1).is_some_and(|a| a.contains("Call done")),
        evidence(&report, CheckStep::Reproduce)
            .contains("failed at baseline and pass with the change (SWE-bench's fail-to-pass); no new test was written"),
    );
    assert_eq!(
        actual,
        (Some(0), Outcome::Success, true, true, true),
        "{answers:#?}\n{}",
        stderr(&output)
    );
}

/// The task names the test that shows the bug (`--fail-to-pass`): the phases run a fix against
/// it, and the ladder checks it instead of asking for a new test.
#[test]
fn the_tasks_named_failing_test_is_the_reproduction() {
    let repo = repo(
        &[("median.py", MEDIAN), ("tests/test_median.py", MEDIAN_TEST)],
        "The median of an even-length list is wrong.\n",
    );
    let calls = [
        (
            "replace_function",
            json!({"path": "median.py", "name": "median", "code": MEDIAN_FIX}),
        ),
        ("done", json!({"summary": "fixed"})),
    ];
    let (output, _home) = fix(
        repo.path(),
        &calls,
        &[
            "--sandbox",
            "none",
            "--fail-to-pass",
            "tests/test_median.py::test_examples",
        ],
    );
    let report = report(&output);
    let actual = (
        output.status.code(),
        report.outcome,
        evidence(&report, CheckStep::Reproduce).contains("tests/test_median.py::test_examples"),
    );
    assert_eq!(
        actual,
        (Some(0), Outcome::Success, true),
        "{:#?}\n{}",
        answers(&report),
        stderr(&output)
    );
}

/// A test command plumb cannot narrow (a script) runs whole after every write, and the phases
/// read it the same.
#[test]
fn a_custom_test_command_runs_whole_under_the_phases() {
    let repo = repo(
        &[
            ("greet.py", GREET),
            ("tests/test_greet.py", GREET_TEST),
            (
                "run-tests.sh",
                "exec python3 -m pytest -q -rA -p no:cacheprovider tests\n",
            ),
        ],
        "The greeting ignores the user's name. It should greet the user by name.\n",
    );
    let calls = [
        (
            "edit_file",
            json!({"path": "greet.py", "old_text": "    name = \"guest\"\n", "new_text": "    name = user or \"guest\"\n"}),
        ),
        (
            "edit_file",
            json!({"path": "tests/test_greet.py", "old_text": "", "new_text": "def test_greeting_uses_the_name():\n    assert greeting(\"Asha\") == \"Hello, Asha!\"\n"}),
        ),
        ("done", json!({"summary": "greets by name"})),
    ];
    let (output, _home) = fix(
        repo.path(),
        &calls,
        &["--sandbox", "none", "--test-cmd", "sh run-tests.sh"],
    );
    let report = report(&output);
    assert_eq!(
        (output.status.code(), report.outcome),
        (Some(0), Outcome::Success),
        "{:#?}\n{}",
        answers(&report),
        stderr(&output)
    );
}

const ADDER: &str = "[package]\nname = \"adder\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
const ADDER_LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn zero() {\n        assert_eq!(add(0, 0), 0);\n    }\n}\n";

/// A Rust crate whose tests live in `src/`: the fix first, then a test added to the crate's own
/// `mod tests` — run by name with the fix and on the original code — and `done`.
#[test]
fn a_rust_crate_with_its_tests_beside_the_code_finishes_under_the_phases() {
    let repo = repo(
        &[
            ("Cargo.toml", ADDER),
            ("src/lib.rs", ADDER_LIB),
            (".gitignore", "/target\n"),
        ],
        "`add(2, 3)` returns -1; it should return 5.\n",
    );
    let calls = [
        (
            "replace_function",
            json!({"path": "src/lib.rs", "name": "add", "code": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}"}),
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "        assert_eq!(add(0, 0), 0);\n    }\n", "new_text": "        assert_eq!(add(0, 0), 0);\n    }\n\n    #[test]\n    fn two_and_three() {\n        assert_eq!(add(2, 3), 5);\n    }\n"}),
        ),
        ("done", json!({"summary": "add adds"})),
    ];
    let (output, _home) = fix(repo.path(), &calls, &["--sandbox", "bwrap"]);
    assert_fixed_then_tested(&output, "two_and_three");
}

/// The same crate with a bare test module (no `use super::*;`, as HumanEvalPack's Rust tasks
/// have it), the test sent as `replace_function` of a name the file does not define: it is
/// added to the module, which gets `use super::*;`, and the run finishes verified. The fix sent a
/// second time is refused as changing nothing.
#[test]
fn a_rust_test_sent_as_replace_function_is_added_to_the_test_module() {
    let bare = ADDER_LIB
        .replace("    use super::*;\n\n", "")
        .replace("assert_eq!(add(0, 0)", "assert_eq!(super::add(0, 0)");
    let repo = repo(
        &[
            ("Cargo.toml", ADDER),
            ("src/lib.rs", &bare),
            (".gitignore", "/target\n"),
        ],
        "`add(2, 3)` returns -1; it should return 5.\n",
    );
    let calls = [
        (
            "replace_function",
            json!({"path": "src/lib.rs", "name": "add", "code": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}"}),
        ),
        // The same fix again changes nothing, and is answered so (Rust/67: the 1.5B model sent
        // its right fix six rounds running, each answered "Edited").
        (
            "replace_function",
            json!({"path": "src/lib.rs", "name": "add", "code": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}"}),
        ),
        (
            "replace_function",
            json!({"path": "src/lib.rs", "name": "test_two_and_three", "code": "fn test_two_and_three() { assert_eq!(add(2, 3), 5); }"}),
        ),
        ("done", json!({"summary": "add adds"})),
    ];
    let (output, _home) = fix(repo.path(), &calls, &["--sandbox", "bwrap"]);
    let report = report(&output);
    let answers = answers(&report);
    let actual = (
        output.status.code(),
        report.outcome,
        answers
            .get(1)
            .is_some_and(|a| a.contains("so nothing would change")),
        answers.get(2).is_some_and(|a| {
            a.contains("use super::*;")
                && a.contains("passes with your fix and fails on the original code")
        }),
        evidence(&report, CheckStep::Reproduce).contains("test_two_and_three"),
    );
    assert_eq!(
        actual,
        (Some(0), Outcome::Success, true, true, true),
        "{answers:#?}\n{}",
        stderr(&output)
    );
}

/// The fix sent with a copy of the file's test module after it (what the 1.5B model did on
/// HumanEvalFix Rust/8, copying the whole file it was shown): only the function is replaced —
/// two `mod tests` would not compile and the right fix would be undone — and the model is told
/// what was left out; the run then finishes verified.
#[test]
fn a_fix_sent_with_a_copy_of_the_test_module_replaces_the_function_alone() {
    let repo = repo(
        &[
            ("Cargo.toml", ADDER),
            ("src/lib.rs", ADDER_LIB),
            (".gitignore", "/target\n"),
        ],
        "`add(2, 3)` returns -1; it should return 5.\n",
    );
    let module = ADDER_LIB.split_once("\n\n").unwrap().1;
    let calls = [
        (
            "replace_function",
            json!({"path": "src/lib.rs", "name": "add", "code": format!("pub fn add(a: i32, b: i32) -> i32 {{\n    a + b\n}}\n\n{module}")}),
        ),
        (
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "        assert_eq!(add(0, 0), 0);\n    }\n", "new_text": "        assert_eq!(add(0, 0), 0);\n    }\n\n    #[test]\n    fn two_and_three() {\n        assert_eq!(add(2, 3), 5);\n    }\n"}),
        ),
        ("done", json!({"summary": "add adds"})),
    ];
    let (output, _home) = fix(repo.path(), &calls, &["--sandbox", "bwrap"]);
    let report = report(&output);
    let answers = answers(&report);
    let actual = (
        output.status.code(),
        report.outcome,
        answers.first().is_some_and(|a| {
            a.contains("plumb used only add from code: what followed it (mod tests)")
                && a.contains("existing tests still pass")
        }),
        report.patch.contains("+mod tests") || report.patch.contains("+#[cfg(test)]"),
    );
    assert_eq!(
        actual,
        (Some(0), Outcome::Success, true, false),
        "{answers:#?}\n{}",
        stderr(&output)
    );
}

const CLAMP: &str = "function clamp(x, low, high) {\n  if (x < low) return low;\n  if (x > high) return x;\n  return x;\n}\n\nmodule.exports = { clamp };\n";

/// A JavaScript package whose `npm test` runs `runner`: the fix first, then a test appended to
/// the package's test file — run with the fix and on the original code — and `done`. `header` is what a test file of
/// that runner starts with; `expect` asserts `actual` equals `expected`; the reproduce step's
/// evidence names `reproduced_by` (the test by name where the runner can run one test, else its
/// file).
fn javascript_package_is_fixed_then_tested(
    runner: &str,
    header: &str,
    expect: fn(&str, &str) -> String,
    reproduced_by: &str,
) {
    let test_body = |name: &str, actual: &str, expected: &str| {
        format!(
            "\ntest(\"{name}\", () => {{\n  {};\n}});\n",
            expect(actual, expected)
        )
    };
    let test_file = format!(
        "{header}const {{ clamp }} = require(\"../src/clamp\");\n{}",
        test_body("keeps a value inside the range", "clamp(5, 0, 10)", "5")
    );
    let package = format!(
        "{{\"name\": \"clamp\", \"version\": \"1.0.0\", \"scripts\": {{\"test\": \"{runner}\"}}}}\n"
    );
    let repo = repo(
        &[
            ("package.json", &package),
            ("src/clamp.js", CLAMP),
            ("test/clamp.test.js", &test_file),
        ],
        "clamp lets values above the upper bound through unchanged; they should be cut to the bound.\n",
    );
    let calls = [
        (
            "replace_function",
            json!({"path": "src/clamp.js", "name": "clamp", "code": "function clamp(x, low, high) {\n  if (x < low) return low;\n  if (x > high) return high;\n  return x;\n}"}),
        ),
        (
            "edit_file",
            json!({"path": "test/clamp.test.js", "old_text": "", "new_text": test_body("cuts a value above the range", "clamp(15, 0, 10)", "10")}),
        ),
        ("done", json!({"summary": "values above the range are cut"})),
    ];
    let (output, _home) = fix(repo.path(), &calls, &["--sandbox", "bwrap"]);
    assert_fixed_then_tested(&output, reproduced_by);
}

/// node's own runner (`node --test`), the one the imported HumanEvalFix tasks use.
#[test]
fn a_javascript_package_tested_by_node_is_fixed_then_tested_under_the_phases() {
    javascript_package_is_fixed_then_tested(
        "node --test",
        "const test = require(\"node:test\");\nconst assert = require(\"node:assert\");\n",
        |actual, expected| format!("assert.strictEqual({actual}, {expected})"),
        "test/clamp.test.js",
    );
}

/// jest, installed on the machine (`scripts/setup-test-deps.sh --tests` puts it on PATH).
#[test]
fn a_javascript_package_tested_by_jest_is_fixed_then_tested_under_the_phases() {
    assert!(
        which("jest"),
        "jest is not on PATH: run scripts/setup-test-deps.sh --tests (npm install -g jest)"
    );
    javascript_package_is_fixed_then_tested(
        "jest",
        "",
        |actual, expected| format!("expect({actual}).toBe({expected})"),
        "cuts a value above the range",
    );
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// `replace_function` given the test file that calls the function (HumanEvalFix Python/7 and 14:
/// the 1.5B model sent its fix with the test file's path round after round): under the phases it
/// goes to the code's file when that file holds the tests that show the bug; without them the
/// tool's answer names the file that defines the function.
#[test]
fn replace_function_on_the_test_file_reaches_the_file_that_defines_it() {
    let repo = repo(
        &[("median.py", MEDIAN), ("tests/test_median.py", MEDIAN_TEST)],
        "`median` in `median.py` is buggy: its tests fail. Fix it.\n",
    );
    let wrong_path = (
        "replace_function",
        json!({"path": "tests/test_median.py", "name": "median", "code": MEDIAN_FIX}),
    );
    let done = ("done", json!({"summary": "the middle pair"}));
    let (output, _home) = fix(
        repo.path(),
        &[wrong_path.clone(), done.clone()],
        &["--sandbox", "none"],
    );
    let guided = report(&output);
    let (output, _home) = fix(
        repo.path(),
        &[wrong_path, done],
        &["--sandbox", "none", "-c", "helpers.phases=false"],
    );
    let unguided = report(&output);
    let first = |report: &FinalReport| answers(report).first().cloned().unwrap_or_default();
    assert!(
        first(&guided).starts_with(
            "plumb sent this to median.py: tests/test_median.py holds the tests that show the bug"
        ),
        "{}",
        first(&guided)
    );
    assert_eq!(
        (guided.outcome, first(&unguided)),
        (
            Outcome::Success,
            "Error: tests/test_median.py does not define median; median.py does: call replace_function with path median.py.".to_string()
        )
    );
}

/// Which helpers were on, and why, is in the report.
#[test]
fn the_report_lists_each_helper_and_why() {
    let repo = repo(
        &[("median.py", MEDIAN), ("tests/test_median.py", MEDIAN_TEST)],
        "`median` in `median.py` is buggy: its tests fail. Fix it.\n",
    );
    let (output, _home) = fix(
        repo.path(),
        &[],
        &["--sandbox", "none", "-c", "helpers.figures=false"],
    );
    let report = report(&output);
    let states: Vec<(String, bool)> = report
        .helpers
        .iter()
        .map(|h| (h.name.clone(), h.on))
        .collect();
    let why = |name: &str| {
        report
            .helpers
            .iter()
            .find(|h| h.name == name)
            .map(|h| h.why.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        states,
        vec![
            ("phases".to_string(), true),
            ("figures".to_string(), false),
            ("trace".to_string(), false),
            ("candidates".to_string(), false),
            ("python_notes".to_string(), true),
            ("undo_failing_fixes".to_string(), false),
            ("thought".to_string(), true),
            ("code_up_front".to_string(), true),
            ("show_file_on_failed_edit".to_string(), true),
            ("python_rewrites".to_string(), true),
        ]
    );
    assert_eq!(
        (why("figures"), why("candidates")),
        (
            "off: helpers.figures=false".to_string(),
            "steps aside: the model cannot give another sample".to_string()
        )
    );
}
