//! What the guided phases tell the model, as typed cases rendered by `plumb-context`'s templates
//! (`prompts/phases/`): [`Recorded`], the sentence after a check of a write, and [`NextStep`],
//! the step shown at the end of each request. The phases choose a case and give its values; the
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
