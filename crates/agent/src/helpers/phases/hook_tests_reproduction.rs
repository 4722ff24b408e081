//! The file that holds both a helper and the tests that show the bug (HumanEvalFix's example
//! test: `def check(unique)` and the test calling it, in `tests/test_unique.py`): every note the
//! model gets about it points the same way, to the code's file.

use plumb_protocol::ToolCall;
use plumb_verify::TestOutcome::Failed;
use serde_json::json;

use super::Guided;
use crate::facts::{Briefing, RunFacts};
use crate::fake_run::{FakeRun, baseline};
use crate::policy::{Gate, Policy, ToolOutcome};

const TEST_FILE: &str = "tests/test_unique.py";
const EXAMPLES: &str = "tests/test_unique.py::test_examples";
const CODE: &str = "unique.py";

/// The files as HumanEvalFix Python/34 lays them out.
fn humaneval_run() -> FakeRun {
    let mut run = FakeRun {
        baseline: baseline(&[(EXAMPLES, Failed)]),
        ..FakeRun::default()
    };
    run.files.insert(
        CODE.into(),
        "def unique(l: list):\n    return sorted(l)\n".into(),
    );
    run.files.insert(
        TEST_FILE.into(),
        "from unique import *\n\ndef check(unique):\n    assert unique([5, 3, 5, 2, 3, 3, 9, 0, 123]) == [0, 2, 3, 5, 9, 123]\n\n\ndef test_examples():\n    check(unique)\n".into(),
    );
    run
}

fn guided(run: &FakeRun) -> Guided {
    let briefing = Briefing {
        source_file: Some(CODE.into()),
        ..Briefing::default()
    };
    let settings = plumb_config::Helpers::default();
    Guided::new(
        &RunFacts {
            ticket: &run.ticket,
            runner: plumb_verify::Runner::Pytest,
            baseline: &run.baseline,
            fail_to_pass: &[],
            profile: plumb_protocol::ModelProfile::Small,
            can_sample: false,
            briefing: &briefing,
            settings: &settings,
        },
        false,
        false,
    )
}

fn replace(path: &str, name: &str) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: "replace_function".into(),
        arguments: json!({"path": path, "name": name, "code": format!("def {name}(l):\n    return l\n")}),
    }
}

/// What `replace_function` answers for a call whose file does not define the name that one
/// other file does (crates/tools' `replace.rs`).
fn refused(path: &str, name: &str, home: &str) -> ToolOutcome {
    let text = format!(
        "{path} does not define {name}; {home} does: call replace_function with path {home}."
    );
    ToolOutcome {
        ok: false,
        ran: true,
        summary: text.clone(),
        text,
        ..ToolOutcome::default()
    }
}

/// The call as the phases let it run (rewritten or not), and what the model is told after the
/// tool refused it.
async fn told(guided: &mut Guided, run: &mut FakeRun, call: ToolCall) -> String {
    let ran = match guided.before_tool(&call) {
        Gate::Rewrite { arguments, .. } => ToolCall { arguments, ..call },
        Gate::Run => call,
        Gate::Refuse(note) => return note,
        Gate::Fail(why) => panic!("{why}"),
    };
    let path = ran.arguments["path"].as_str().unwrap().to_string();
    let name = ran.arguments["name"].as_str().unwrap().to_string();
    let mut outcome = refused(&path, &name, TEST_FILE);
    guided
        .after_tool(run, &ran, &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    outcome.text
}

#[tokio::test]
async fn a_helper_of_the_reproductions_file_is_never_where_the_model_is_sent() {
    let mut run = humaneval_run();
    let mut guided = guided(&run);
    // The test file's `check`, sent to unique.py by the phases, which does not define it; and
    // the same name asked of unique.py directly: the tool's answer would send the model back
    // to the test file both times.
    let sent_over = told(&mut guided, &mut run, replace(TEST_FILE, "check")).await;
    let direct = told(&mut guided, &mut run, replace(CODE, "check")).await;
    // Changing the test file's lines is refused with the same direction.
    let edit = ToolCall {
        id: "c2".into(),
        name: "edit_file".into(),
        arguments: json!({"path": TEST_FILE, "old_text": "check(unique)", "new_text": "check(sorted)"}),
    };
    let Gate::Refuse(edit_note) = guided.before_tool(&edit) else {
        panic!("an edit of the reproduction's lines runs");
    };
    for note in [&sent_over, &direct, &edit_note] {
        assert!(
            !note.contains(&format!("with path {TEST_FILE}")),
            "a note sends the model to the test file: {note}"
        );
        assert!(
            note.contains(&format!("{TEST_FILE} holds the tests that show the bug")),
            "{note}"
        );
        assert!(note.contains(&format!("in {CODE}")), "{note}");
    }
    assert!(
        sent_over.contains("call replace_function with path unique.py")
            && sent_over.contains("which defines unique"),
        "{sent_over}"
    );
    assert_eq!(sent_over, direct);
}

#[tokio::test]
async fn a_refusal_about_a_name_the_test_file_does_not_define_is_left_as_the_tool_gave_it() {
    let mut run = humaneval_run();
    let mut guided = guided(&run);
    let call = replace(CODE, "uniq");
    let mut outcome = refused(CODE, "uniq", "other.py");
    let before = outcome.text.clone();
    guided
        .after_tool(&mut run, &call, &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert_eq!(outcome.text, before);
}
