//! What the guided phases tell the model, as typed cases rendered by `plumb-context`'s templates
//! (`prompts/phases/`): [`Recorded`], the sentence after a check of a write, [`NextStep`], the
//! step shown at the end of each request, and [`Note`], what they answer instead of running a
//! call or add to a call's answer. The phases choose a case and give its values; the
//! words are the template's. Without the figures helper the templates speak of the value a test
//! checks rather than the figure (`figure`/`figures` are filled with "value"/"values"): "the
//! figure the ticket gives" is the figures helper's notion (a ticket that quotes amounts,
//! searched for and probed in pytest tests), and a Rust, Go or JavaScript task, or a ticket that
//! gives no figures, has none.

use plumb_context::templates::{TemplateError, render};
use serde::Serialize;

/// What a check after a write showed, as the model is told it (`phases/recorded.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Recorded {
    FirstFails,
    FirstPasses,
    FailsInTheTest,
    FirstBroken,
    ExistingPass,
    ExistingBroke,
    Shown,
    PassesOriginalBroken,
    PassesOnOriginal,
    FailsAsOriginal,
    FailsWithFix,
    BrokenNotATest,
    UndoneBrokeOld,
    UndoneBrokeCode,
    UndoneSameFailure,
    UndoneStillFails,
    UndoneTestBroken,
    /// Nothing to say: a change of the code with no test to judge it yet.
    Nothing,
    AgainShownOwn,
    AgainShownTheirs,
    AgainPassesOnOriginal,
    AgainSameFailure,
    AgainDoesNotRun,
    AgainStillFailsOwn,
    AgainStillFailsTheirs,
}

/// The next step at one point of the phases (`phases/next_step.md`). `path` names the tests that
/// show the bug, `file` the test file shown up front, `source` the file the fix is in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "case", rename_all = "snake_case")]
pub(crate) enum NextStep {
    FixFirst,
    BrokeTests { pointer: Option<String> },
    Unconfirmed { pointer: Option<String> },
    TheirsShown { path: String },
    OwnShown { path: String },
    TheirsStillFail { path: String },
    TheirsFixTheCode { path: String },
    OwnFailsOnOriginal { path: String },
    PassesOriginalBroken { path: String },
    PassesOnOriginal { path: String },
    SameFailure { path: String },
    FailsWithFix { path: String },
    CouldNotRun { path: String },
    TestFromExample { file: String },
    TestInFile { file: String },
    TestRust { source: String },
    TestGo { source: String },
    TestJs { source: String },
    TestPytest,
    TestElsewhere,
}

/// What a call was answered with instead of running, or what its answer gains
/// (`phases/notes.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "case", rename_all = "snake_case")]
pub(crate) enum Note {
    /// `create_file` while a test is wanted in `file`, the test file shown up front.
    CreateFileNotOffered { file: String },
    /// Any other tool once the tests show the fix: call `done`.
    CallDone { tool: String },
    /// A tool the current phase does not offer yet.
    NotYet { tool: String, first: First },
    /// A rewrite of the reproduction's file `path`; `code` is the code's file, when known.
    KeepTheReproduction { path: String, code: Option<String> },
    /// A `replace_function` aimed at the reproduction's file `path`, sent to `code` instead.
    SentToTheCode { path: String, code: String },
    /// A `replace_function` of `name`, which only the reproduction's file `home` defines; `code`
    /// is the file to fix instead (with some of its `functions`), when known.
    NameInTheReproduction {
        name: String,
        home: String,
        code: Option<String>,
        functions: Vec<String>,
    },
    /// An edit back to lines plumb undid (`undone`, their first line) while the figure trace
    /// (`pointer`) names another `line`.
    UndoneLines {
        undone: String,
        pointer: String,
        line: String,
    },
    /// The figure trace's sentence and the line it names, after an edit that could not be made.
    TraceLine { pointer: String, line: String },
    /// An `old_text` that an undone edit had written, taken as the lines it replaced (`original`,
    /// their first line).
    Rebased { original: String },
    /// A test that assigns to the name of the helper it calls (Python's "cannot access local
    /// variable").
    ShadowedHelper { name: String },
}

/// What a failed check after a code edit showed, remembered with the code it failed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Showed {
    BrokeOld,
    Unconfirmed,
    CodeStopped,
    StillFailed,
}

/// Why a write was undone (`phases/undone.md`). `path` is the file written, when known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "case", rename_all = "snake_case")]
pub(crate) enum Undone<'a> {
    /// What a failed check showed, as [`showed`] says it.
    Showed { showed: Showed },
    /// The code came back to what round `round` tried, when the check `showed` that.
    SameAsBefore {
        path: &'a str,
        round: u32,
        showed: &'a str,
    },
    /// The check after it failed: its runs, what they showed and what follows.
    Checked {
        path: &'a str,
        report: &'a str,
        sentence: &'a str,
        shown: &'a str,
    },
    /// The fix probe found no figure of the ticket in it; `pointer` is the figure trace's line.
    Unconfirmed { pointer: Option<&'a str> },
}

/// The words of `undone`.
pub(crate) fn undone(undone: &Undone<'_>) -> Result<String, TemplateError> {
    render("phases/undone.md", undone).map(one_line)
}

/// What a failed check showed, in words (for the model and the journal).
pub(crate) fn showed(showed: Showed) -> Result<String, TemplateError> {
    undone(&Undone::Showed { showed })
}

/// A line framing a check's test runs (`phases/check.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "case", rename_all = "snake_case")]
pub(crate) enum CheckLine<'a> {
    /// Which run (`existing`, `both_ways`, `first` or `again`), and its headline.
    Ran {
        check: &'static str,
        headline: &'a str,
    },
    OnTheOriginal {
        headline: &'a str,
    },
    ProjectTests {
        headline: &'a str,
    },
}

/// The words of `line`, without a line end.
pub(crate) fn check_line(line: &CheckLine<'_>) -> Result<String, TemplateError> {
    render("phases/check.md", line).map(one_line)
}

/// What must come first, in a [`Note::NotYet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum First {
    MakeTheTestsPass,
    AddATest,
    FixThenTest,
}

/// The words of `note`, without a final line end.
pub(crate) fn note(note: &Note) -> Result<String, TemplateError> {
    render("phases/notes.md", note).map(one_line)
}

/// The words of `note` as the start of a call's answer: a note of where a call was sent stands
/// on its own line, one of how it was read runs on into the answer.
pub(crate) fn answer_start(note: &Note) -> Result<String, TemplateError> {
    let separator = match note {
        Note::SentToTheCode { .. } => "\n",
        _ => " ",
    };
    self::note(note).map(|words| words + separator)
}

/// The figure words as the templates use them: the figures helper's own, or plain "value".
#[derive(Serialize)]
struct FigureWords {
    figure: &'static str,
    figures: &'static str,
}

impl FigureWords {
    fn new(figures_on: bool) -> Self {
        if figures_on {
            Self {
                figure: "figure",
                figures: "figures",
            }
        } else {
            Self {
                figure: "value",
                figures: "values",
            }
        }
    }
}

/// The sentence for `case`.
pub(crate) fn recorded(case: Recorded, figures_on: bool) -> Result<String, TemplateError> {
    #[derive(Serialize)]
    struct Values {
        case: Recorded,
        #[serde(flatten)]
        words: FigureWords,
    }
    render(
        "phases/recorded.md",
        Values {
            case,
            words: FigureWords::new(figures_on),
        },
    )
    .map(one_line)
}

/// The sentence for `step`.
pub(crate) fn next_step(step: &NextStep, figures_on: bool) -> Result<String, TemplateError> {
    #[derive(Serialize)]
    struct Values<'a> {
        #[serde(flatten)]
        step: &'a NextStep,
        #[serde(flatten)]
        words: FigureWords,
    }
    render(
        "phases/next_step.md",
        Values {
            step,
            words: FigureWords::new(figures_on),
        },
    )
    .map(one_line)
}

/// The rendered case without the line end its template line leaves.
fn one_line(mut text: String) -> String {
    if text.ends_with('\n') {
        text.pop();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_renders_and_the_figure_words_follow_the_helper() {
        let cases = [
            Recorded::FirstFails,
            Recorded::FirstPasses,
            Recorded::FailsInTheTest,
            Recorded::FirstBroken,
            Recorded::ExistingPass,
            Recorded::ExistingBroke,
            Recorded::Shown,
            Recorded::PassesOriginalBroken,
            Recorded::PassesOnOriginal,
            Recorded::FailsAsOriginal,
            Recorded::FailsWithFix,
            Recorded::BrokenNotATest,
            Recorded::UndoneBrokeOld,
            Recorded::UndoneBrokeCode,
            Recorded::UndoneSameFailure,
            Recorded::UndoneStillFails,
            Recorded::UndoneTestBroken,
            Recorded::AgainShownOwn,
            Recorded::AgainShownTheirs,
            Recorded::AgainPassesOnOriginal,
            Recorded::AgainSameFailure,
            Recorded::AgainDoesNotRun,
            Recorded::AgainStillFailsOwn,
            Recorded::AgainStillFailsTheirs,
        ];
        for case in cases {
            for figures_on in [true, false] {
                let text = recorded(case, figures_on).unwrap();
                assert!(text.starts_with(char::is_uppercase), "{case:?}: {text:?}");
                assert!(
                    !text.contains('\n') && !text.contains("{{"),
                    "{case:?}: {text:?}"
                );
                if !figures_on {
                    assert!(!text.contains("figure"), "{case:?}: {text}");
                }
            }
        }
        assert_eq!(recorded(Recorded::Nothing, true).unwrap(), "");
        let path = || "tests/test_gst.py".to_string();
        let steps = [
            NextStep::FixFirst,
            NextStep::BrokeTests { pointer: None },
            NextStep::BrokeTests {
                pointer: Some("The figure comes from line 40.".into()),
            },
            NextStep::Unconfirmed { pointer: None },
            NextStep::Unconfirmed {
                pointer: Some("Line 40 computes it.".into()),
            },
            NextStep::TheirsShown { path: path() },
            NextStep::OwnShown { path: path() },
            NextStep::TheirsStillFail { path: path() },
            NextStep::TheirsFixTheCode { path: path() },
            NextStep::OwnFailsOnOriginal { path: path() },
            NextStep::PassesOriginalBroken { path: path() },
            NextStep::PassesOnOriginal { path: path() },
            NextStep::SameFailure { path: path() },
            NextStep::FailsWithFix { path: path() },
            NextStep::CouldNotRun { path: path() },
            NextStep::TestFromExample { file: path() },
            NextStep::TestInFile { file: path() },
            NextStep::TestRust {
                source: "src/lib.rs".into(),
            },
            NextStep::TestGo {
                source: "tax.go".into(),
            },
            NextStep::TestJs {
                source: "src/tax.js".into(),
            },
            NextStep::TestPytest,
            NextStep::TestElsewhere,
        ];
        for step in &steps {
            let text = next_step(step, true).unwrap();
            assert!(
                !text.is_empty() && !text.contains("{{"),
                "{step:?}: {text:?}"
            );
            assert!(!text.contains('\n'), "{step:?}: {text:?}");
            let plain = next_step(step, false).unwrap();
            // The pointer is the trace's words, shown as they are.
            let own_words = text.replace("The figure comes from line 40.", "");
            if !own_words.contains("figure") {
                assert_eq!(plain, text, "{step:?}");
            } else {
                assert!(
                    !plain
                        .replace("The figure comes from line 40.", "")
                        .contains("figure"),
                    "{step:?}: {plain}"
                );
            }
        }
        assert_eq!(
            next_step(
                &NextStep::BrokeTests {
                    pointer: Some("See line 4.".into())
                },
                true
            )
            .unwrap(),
            "your last change broke tests that passed before, so plumb undid it (see above): fix the code again, changing only the lines the ticket is about. See line 4."
        );
        assert_eq!(
            next_step(&NextStep::Unconfirmed { pointer: None }, false).unwrap(),
            "your last change did not change any value the tests check to a value the ticket gives, so plumb undid it (see above): fix the code again, in the line that computes what the ticket says is wrong."
        );
    }
}
