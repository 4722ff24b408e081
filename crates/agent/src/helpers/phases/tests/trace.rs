//! The figure trace's line in the fix step, and the edits back to undone lines it refuses.

use pretty_assertions::assert_eq;

use super::*;

#[test]
fn the_figure_trace_runs_once_and_names_its_line_in_the_fix_step() {
    let mut phases = Phases::new(Runner::Pytest);
    assert_eq!(phases.trace_with(), None, "nothing to trace with yet");
    phases.suggest_test_file(Some("tests/test_a.py".into()), None);
    phases.probe_with(
        Some("def test_a():\n    x = f(1)\n".into()),
        Some("a.py".into()),
    );
    assert_eq!(
        phases.trace_with(),
        Some((
            "tests/test_a.py".into(),
            "def test_a():\n    x = f(1)\n".into(),
            "a.py".into()
        ))
    );
    let found = pointer("a.py", "x = f(1)");
    phases.point_at(Some(&found)).unwrap();
    let sentence = found.sentence().unwrap();
    assert_eq!(phases.trace_with(), None, "the trace runs once");
    assert!(
        phases
            .reject_unconfirmed()
            .unwrap()
            .ends_with(&format!("Fix the code again:\n{sentence}"))
    );
    assert!(
        phases
            .next_step_text()
            .unwrap()
            .ends_with(&format!("fix the code again. {sentence}"))
    );
    // A fix undone for breaking the old tests names the line too.
    phases.record_text(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Fails, None),
    );
    assert!(phases.next_step_text().unwrap().ends_with(&format!(
        "changing only the lines the ticket is about. {sentence}"
    )));
    // Once a fix is kept, the line of the original code is no longer named.
    phases.record_text(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    assert_eq!(phases.pointer(), None);
    // Nothing found: the general sentence.
    let mut phases = Phases::new(Runner::Pytest);
    phases.point_at(None).unwrap();
    assert!(
        phases
            .reject_unconfirmed()
            .unwrap()
            .ends_with("change the line that computes what the ticket says is wrong.")
    );
}

/// A trace's pointer at `code` in `file`.
fn pointer(file: &str, code: &str) -> Pointer {
    Pointer {
        file: file.into(),
        line: 3,
        function: "f".into(),
        name: "x".into(),
        value: "180.00".into(),
        code: code.into(),
        figure: "180".into(),
        missing: Some("162".into()),
    }
}

#[test]
fn an_edit_back_to_undone_lines_is_refused_when_the_trace_names_another() {
    let mut phases = Phases::new(Runner::Pytest);
    let edit = |old: &str, new: &str| {
        call(
            "edit_file",
            json!({"path": "a.py", "old_text": old, "new_text": new}),
        )
    };
    let first = edit(
        "    if x > 1:\n        return y",
        "    if x >= 1:\n        return y",
    );
    phases.remember_undone(&first);
    let again = edit("    if x > 1:", "    if x > 0:");
    assert_eq!(phases.refusal_said(&again), None, "no line named yet");
    phases
        .point_at(Some(&pointer("a.py", "tax = f(gross)")))
        .unwrap();
    let refused = phases.refusal_said(&again).expect("the undone lines again");
    assert!(
        refused.starts_with("plumb already undid an edit of these lines (`if x > 1:`)"),
        "{refused}"
    );
    assert!(
        refused.ends_with("\nCopy that line as old_text: `tax = f(gross)`."),
        "{refused}"
    );
    // Its own undone line as old_text is rebased onto the original, and refused the same.
    assert!(
        phases
            .refusal_said(&edit("    if x >= 1:\n        return y", "    if x > 2:"))
            .is_some()
    );
    // The named line, alone or with the undone lines, and other lines, may be edited.
    assert_eq!(
        phases.refusal_said(&edit("    tax = f(gross)", "    tax = 1")),
        None
    );
    assert_eq!(
        phases.refusal_said(&edit("    if x > 1:\n    tax = f(gross)", "    tax = 1")),
        None
    );
    assert_eq!(phases.refusal_said(&edit("    z = 2", "    z = 3")), None);
    phases.remember_undone(&edit("    total = f(\n    )", "    total = g(\n    )"));
    assert_eq!(
        phases.refusal_said(&edit("    other = h(\n    )", "    other = 1")),
        None,
        "a line with no code in common is not the undone lines"
    );
    let other_file = call(
        "edit_file",
        json!({"path": "b.py", "old_text": "    if x > 1:", "new_text": ""}),
    );
    assert_eq!(phases.refusal_said(&other_file), None);
    // Once a fix is kept, the line of the original code no longer counts.
    phases.record_text(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    assert_eq!(phases.refusal_said(&again), None);
}

#[test]
fn a_failed_edit_of_the_traced_file_is_told_the_line_the_trace_names() {
    let mut phases = Phases::new(Runner::Pytest);
    let edit = |path: &str, old: &str| {
        call(
            "edit_file",
            json!({"path": path, "old_text": old, "new_text": "x"}),
        )
    };
    let missed = edit("a.py", "    tax = sum(item.tax for item in lines)");
    assert_eq!(
        phases.after_failed_edit_said(&missed),
        None,
        "no line named yet"
    );
    phases
        .point_at(Some(&pointer("a.py", "tax = f(gross)")))
        .unwrap();
    let told = phases
        .after_failed_edit_said(&missed)
        .expect("the line to copy");
    assert!(told.starts_with('\n'), "{told}");
    assert!(
        told.ends_with("\nCopy that line as old_text: `tax = f(gross)`."),
        "{told}"
    );
    assert_eq!(
        phases.after_failed_edit_said(&edit("a.py", "    tax = f(gross)\n    y = 2")),
        None,
        "an old_text with the named line failed for another reason"
    );
    assert_eq!(phases.after_failed_edit_said(&edit("b.py", "z = 1")), None);
    assert_eq!(phases.after_failed_edit_said(&edit("a.py", "")), None);
    phases.record_text(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    assert_eq!(
        phases.after_failed_edit_said(&missed),
        None,
        "once a fix is kept, the line of the original code no longer counts"
    );
}

#[test]
fn an_edit_of_undone_lines_replaces_the_lines_they_had_replaced() {
    let mut phases = Phases::new(Runner::Pytest);
    let undone = call(
        "edit_file",
        json!({"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"}),
    );
    phases.remember_undone(&undone);
    let again = call(
        "edit_file",
        json!({"path": "a.py", "old_text": "x = 2", "new_text": "x = 3"}),
    );
    let (arguments, note) = phases.rebase_said(&again).unwrap();
    assert_eq!(
        arguments,
        json!({"path": "a.py", "old_text": "x = 1", "new_text": "x = 3"})
    );
    assert!(
        note.contains("taken as the lines that edit replaced: `x = 1`"),
        "{note}"
    );
    let elsewhere = call(
        "edit_file",
        json!({"path": "b.py", "old_text": "x = 2", "new_text": "x = 3"}),
    );
    assert_eq!(phases.rebase_said(&elsewhere), None);
    phases.remember_undone(&again);
    let third = call(
        "edit_file",
        json!({"path": "a.py", "old_text": "x = 3", "new_text": "x = 4"}),
    );
    assert_eq!(
        phases.rebase_said(&third).unwrap().0["old_text"],
        "x = 1",
        "an undone rebased edit had replaced the original lines too"
    );
}
