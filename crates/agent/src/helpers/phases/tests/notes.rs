//! The phases' notes (`phases/notes.md`) as the model reads them: each case against the sentence
//! the code wrote before the notes became a template, byte for byte, so moving the words changed
//! none of them.

use super::super::words::{First, Note, answer_start, note};

const HOW_TO_FIX: &str = "with replace_function (the whole corrected function) or edit_file (old_text copied from the code shown above, new_text the corrected lines)";

fn must_stay(path: &str) -> String {
    format!(
        "{path} holds the tests that show the bug, which must stay as they are (plumb's checks reject a change to them)"
    )
}

#[test]
fn every_note_reads_as_the_sentence_it_replaced() {
    let file = "tests/test_tax.py";
    let cases: Vec<(Note, String)> = vec![
        (
            Note::CreateFileNotOffered { file: file.into() },
            format!(
                "create_file is not offered now: add a new test at the end of {file} with edit_file and an empty old_text, so it can use that file's imports and helpers; change the code with replace_function or edit_file. Nothing was done."
            ),
        ),
        (
            Note::CallDone {
                tool: "edit_file".into(),
            },
            "edit_file is not offered now: the tests that show the bug pass with your change and fail on the original code, so call done; plumb then runs the whole suite and its other checks, and if one fails every tool is offered again. Nothing was done.".into(),
        ),
        (
            Note::NotYet {
                tool: "done".into(),
                first: First::MakeTheTestsPass,
            },
            "done is not available yet: first make the tests that show the bug pass. Nothing was done.".into(),
        ),
        (
            Note::NotYet {
                tool: "run".into(),
                first: First::AddATest,
            },
            "run is not available yet: first add a test that passes with your fix and fails without it. Nothing was done.".into(),
        ),
        (
            Note::NotYet {
                tool: "done".into(),
                first: First::FixThenTest,
            },
            "done is not available yet: first fix the code, then add a test that shows the bug. Nothing was done.".into(),
        ),
        (
            Note::KeepTheReproduction {
                path: file.into(),
                code: Some("billing/tax.py".into()),
            },
            format!(
                "Change the code in billing/tax.py, not {file}: {}. Edit the code {HOW_TO_FIX}. Nothing was done.",
                must_stay(file)
            ),
        ),
        (
            Note::KeepTheReproduction {
                path: file.into(),
                code: None,
            },
            format!(
                "Change the code, not {file}: {}. Edit the code {HOW_TO_FIX}. Nothing was done.",
                must_stay(file)
            ),
        ),
        (
            Note::NameInTheReproduction {
                name: "check".into(),
                home: file.into(),
                code: Some("tax.py".into()),
                functions: vec!["apply_gst".into(), "round_money".into()],
            },
            format!(
                "check is defined in {file}: {}, so check is not to be changed. Fix the code in tax.py, which defines apply_gst, round_money: call replace_function with path tax.py and the name of the function whose result is wrong, with its whole corrected definition. Nothing was changed.",
                must_stay(file)
            ),
        ),
        (
            Note::NameInTheReproduction {
                name: "check".into(),
                home: file.into(),
                code: Some("tax.py".into()),
                functions: Vec::new(),
            },
            format!(
                "check is defined in {file}: {}, so check is not to be changed. Fix the code in tax.py: call replace_function with path tax.py and the name of the function whose result is wrong, with its whole corrected definition. Nothing was changed.",
                must_stay(file)
            ),
        ),
        (
            Note::NameInTheReproduction {
                name: "check".into(),
                home: file.into(),
                code: None,
                functions: Vec::new(),
            },
            format!(
                "check is defined in {file}: {}, so check is not to be changed. Fix the code under test instead: call replace_function with the path of the file that defines the function whose result is wrong. Nothing was changed.",
                must_stay(file)
            ),
        ),
        (
            Note::UndoneLines {
                undone: "tax = 1".into(),
                pointer: "Line 4 computes the GST.".into(),
                line: "tax = f(gross)".into(),
            },
            "plumb already undid an edit of these lines (`tax = 1`), and the figure trace names another line. Nothing was changed.\nLine 4 computes the GST.\nCopy that line as old_text: `tax = f(gross)`.".into(),
        ),
        (
            Note::TraceLine {
                pointer: "Line 4 computes the GST.".into(),
                line: "tax = f(gross)".into(),
            },
            "Line 4 computes the GST.\nCopy that line as old_text: `tax = f(gross)`.".into(),
        ),
    ];
    for (case, expected) in cases {
        assert_eq!(note(&case).unwrap(), expected, "{case:?}");
    }
}

#[test]
fn a_rewritten_calls_note_starts_its_answer_as_before() {
    let sent = Note::SentToTheCode {
        path: "tests/test_tax.py".into(),
        code: "tax.py".into(),
    };
    assert_eq!(
        answer_start(&sent).unwrap(),
        format!(
            "plumb sent this to tax.py: {}.\n",
            must_stay("tests/test_tax.py")
        )
    );
    let rebased = Note::Rebased {
        original: "x = 1".into(),
    };
    assert_eq!(
        answer_start(&rebased).unwrap(),
        "Your old_text is what an edit plumb undid had written, so it was taken as the lines that edit replaced: `x = 1`. "
    );
}

#[test]
fn the_undo_notes_and_the_check_lines_read_as_before() {
    use super::super::words::{CheckLine, Showed, Undone, check_line, showed, undone};
    let words = [
        (Showed::BrokeOld, "tests that passed before failed"),
        (
            Showed::Unconfirmed,
            "the fix probe found no figure of the ticket in it",
        ),
        (
            Showed::CodeStopped,
            "the code stopped on an error before the tests could check anything",
        ),
        (
            Showed::StillFailed,
            "the tests that show the bug still failed",
        ),
    ];
    for (case, expected) in words {
        assert_eq!(showed(case).unwrap(), expected);
    }
    assert_eq!(
        undone(&Undone::SameAsBefore {
            path: "tax.py",
            round: 3,
            showed: "tests that passed before failed",
        })
        .unwrap(),
        "plumb undid this edit of tax.py: with it the code was exactly as after your change in round 3, when tests that passed before failed. The file is as it was before this edit: try a different change."
    );
    assert_eq!(
        undone(&Undone::Checked {
            path: "",
            report: "\n\nplumb ran the existing tests: 1 failed\nE assert 1 == 2\n",
            sentence: "Your change broke a test.",
            shown: "\nshown\n",
        })
        .unwrap(),
        "plumb undid this edit of the file: the file is as it was before it (why is below).\n\nplumb ran the existing tests: 1 failed\nE assert 1 == 2\nYour change broke a test.\nshown\n"
    );
    assert_eq!(
        undone(&Undone::Unconfirmed {
            pointer: Some("Line 4 computes the GST.")
        })
        .unwrap(),
        "So plumb undid it: the code is as it was before this edit. Fix the code again:\nLine 4 computes the GST."
    );
    assert_eq!(
        undone(&Undone::Unconfirmed { pointer: None }).unwrap(),
        "So plumb undid it: the code is as it was before this edit. Fix the code again: change the line that computes what the ticket says is wrong."
    );
    let ran = |check| {
        check_line(&CheckLine::Ran {
            check,
            headline: "2 passed",
        })
        .unwrap()
    };
    assert_eq!(ran("existing"), "plumb ran the existing tests: 2 passed");
    assert_eq!(ran("both_ways"), "plumb ran it with your fix: 2 passed");
    assert_eq!(ran("first"), "plumb ran it on the original code: 2 passed");
    assert_eq!(
        ran("again"),
        "plumb ran the tests that show the bug again: 2 passed"
    );
    assert_eq!(
        check_line(&CheckLine::OnTheOriginal {
            headline: "1 failed"
        })
        .unwrap(),
        "and on the original code: 1 failed"
    );
    assert_eq!(
        check_line(&CheckLine::ProjectTests {
            headline: "1 failed"
        })
        .unwrap(),
        "and the project's tests: 1 failed"
    );
    assert_eq!(
        note(&Note::ShadowedHelper {
            name: "invoice".into()
        })
        .unwrap(),
        "In the test, `invoice = ...` makes `invoice` a local variable for the whole function, so the function `invoice` cannot be called there: give the result another name (for example `result = invoice(...)`)."
    );
}
