//! The figure search and its assert text, on fixed files.

use pretty_assertions::assert_eq;

use super::asserts::{checked_attributes, same_form};
use super::*;
use crate::policy::RunHandle;

#[test]
fn a_replaced_asserts_failure_is_cut_to_its_first_assertion_line() {
    let excerpt = "=================================== FAILURES ===================================\n\
        ____ test_new ____\n\n    def test_new():\n>       assert totals.taxable_value == Decimal('820.00')\n\
        E       AssertionError: assert Decimal('900.00') == Decimal('820.00')\n\
        E        +  where Decimal('900.00') = InvoiceTotals(...).taxable_value\n\n\
        tests/test_invoice_totals.py:137: AssertionError\n";

    let actual = [
        replaced_failure(excerpt).unwrap(),
        replaced_failure("ERROR collecting\n").unwrap(),
    ];

    assert_eq!(
        actual,
        [
            "(the failure, of an assert plumb then replaced: AssertionError: assert Decimal('900.00') == Decimal('820.00'))\n"
                .to_string(),
            String::new()
        ]
    );
}

const FILE: &str = "from decimal import Decimal\n\n\ndef test_old():\n    assert 1 == 1\n\n\ndef test_new():\n    totals = compute(item(\"1000.00\", discount=\"100.00\"))\n    assert totals.taxable_value == Decimal('900.00')\n    assert totals.tax == Decimal('180.00')\n\n\nx = 1\n";

#[test]
fn only_tests_the_run_added_are_searched() {
    let lines: Vec<&str> = FILE.lines().collect();
    let baseline = "def test_old():\n    pass\n";
    assert_eq!(
        new_tests(&lines, Some(baseline)),
        vec![Function {
            name: "test_new".into(),
            start: 7,
            end: 11
        }]
    );
    assert_eq!(new_tests(&lines, None).len(), 2);
    assert!(!renames_a_test(&lines, Some(baseline)));
    assert!(
        renames_a_test(&lines, Some("def test_gone():\n    pass\n")),
        "a project test renamed is not a new test to rewrite"
    );
    let replaced = with_function(
        &lines,
        &new_tests(&lines, Some(baseline))[0],
        "def test_new():\n    pass",
        true,
    );
    assert!(
        replaced.ends_with(
            "def test_old():\n    assert 1 == 1\n\n\ndef test_new():\n    pass\n\n\nx = 1\n"
        ),
        "{replaced}"
    );
}

#[test]
fn each_assert_gets_each_figure_of_the_ticket_in_its_own_form() {
    let function = "def test_new():\n    totals = compute(item(\"1000.00\"))\n    assert totals.taxable_value == Decimal('900.00')\n    assert totals.tax == Decimal('180.00')";
    let figures = ["162".to_string(), "180".to_string(), "0.18".to_string()];
    let tried = versions(function, &figures, "");
    let kept: Vec<&str> = tried.iter().map(|v| v.kept.as_str()).collect();
    assert_eq!(
        kept,
        [
            "    assert totals.taxable_value == Decimal('162.00')",
            "    assert totals.taxable_value == Decimal('180.00')",
            "    assert totals.taxable_value == Decimal('0.18')",
            "    assert totals.tax == Decimal('162.00')",
            "    assert totals.tax == Decimal('0.18')",
        ],
        "the figure already there is not tried again"
    );
    assert_eq!(
        tried[3].text,
        "def test_new():\n    totals = compute(item(\"1000.00\"))\n    assert totals.tax == Decimal('162.00')",
        "the setup and one assert"
    );
    assert_eq!(
        tried[3].written,
        "    assert totals.tax == Decimal('180.00')"
    );
}

#[test]
fn the_values_other_tests_check_on_the_same_variable_are_tried_too() {
    let file = "def test_old():\n    assert totals.tax == Decimal('180.00')\n    assert line.gross == 1\n    assert totals.taxable_value == 9\n    assert f(x).y == 2\n";
    assert_eq!(
        checked_attributes(file),
        [
            ("totals".to_string(), "tax".to_string()),
            ("line".to_string(), "gross".to_string()),
            ("totals".to_string(), "taxable_value".to_string()),
        ]
    );
    let function = "def test_new():\n    totals = compute()\n    assert totals.taxable_value == Decimal('162.00')";
    let kept: Vec<String> = versions(function, &["162".to_string(), "900".to_string()], file)
        .into_iter()
        .map(|v| v.kept)
        .collect();
    assert_eq!(
        kept,
        [
            "    assert totals.taxable_value == Decimal('900.00')",
            "    assert totals.tax == Decimal('162.00')",
            "    assert totals.tax == Decimal('900.00')",
        ],
        "the model's own value first; `line.gross` is another variable's"
    );
}

#[test]
fn an_asserts_message_is_left_out_of_every_version() {
    assert_eq!(
        without_message("== Decimal('810.00'), 'Expected GST to be Rs 810.00, not 900'"),
        "== Decimal('810.00')"
    );
    assert_eq!(without_message("== f(1, 2)"), "== f(1, 2)");
    assert_eq!(without_message("== 'a,b'"), "== 'a,b'");
    let function = "def test_new():\n    totals = make()\n    assert totals.tax == Decimal('810.00'), 'Expected Rs 810.00'";
    let found = versions(function, &["162".to_string()], "");
    assert_eq!(
        found.iter().map(|v| v.kept.as_str()).collect::<Vec<_>>(),
        vec!["    assert totals.tax == Decimal('162.00')"]
    );
}

#[test]
fn a_figure_the_original_code_gives_another_value_does_not_show_the_fix() {
    use TestOutcome::{Failed, Passed};
    let version = |kept: &str, input: Option<&str>| Version {
        text: String::new(),
        written: String::new(),
        kept: kept.to_string(),
        input: input.map(|line| Input {
            written: String::new(),
            kept: line.to_string(),
        }),
    };
    let versions = [
        version("    assert totals.tax == Decimal('162.00')", None),
        version(
            "    assert totals.total == Decimal('900.00'), 'moved'",
            None,
        ),
        version("    assert totals.taxable_value == Decimal('900.00')", None),
    ];
    let run = |outcomes: [TestOutcome; 3]| outcomes.map(Some);
    assert_eq!(
        pick(
            &versions,
            &run([Failed, Passed, Passed]),
            &run([Failed, Failed, Passed])
        ),
        Shown::MadeBefore,
        "the total came to the taxable value the original code gave"
    );
    assert_eq!(
        pick(
            &versions,
            &run([Passed, Passed, Passed]),
            &run([Failed, Failed, Passed])
        ),
        Shown::At(0)
    );
    assert_eq!(
        pick(
            &versions,
            &run([Failed, Passed, Failed]),
            &run([Failed, Failed, Failed])
        ),
        Shown::At(1),
        "no other value had the figure on the original code"
    );
    assert_eq!(
        pick(
            &versions,
            &run([Failed, Failed, Passed]),
            &run([Failed, Failed, Passed])
        ),
        Shown::NoneOf
    );
    let other_input = [
        version("    assert totals.total == Decimal('900.00')", None),
        version(
            "    assert totals.taxable_value == Decimal('900.00')",
            Some("x = 2"),
        ),
    ];
    assert_eq!(
        pick(
            &other_input,
            &[Some(Passed), Some(Passed)],
            &[Some(Failed), Some(Passed)]
        ),
        Shown::At(0),
        "a version of another setup says nothing about this one"
    );
}

#[test]
fn a_multi_line_assert_or_a_name_with_digits_is_left_alone() {
    let multi = "def test_a():\n    assert f(\n        1) == 2\n";
    assert_eq!(versions(multi, &["3".to_string()], ""), vec![]);
    assert_eq!(
        numbers_in("== x2 + 18.5 + 7."),
        vec![(8, "18.5"), (15, "7")]
    );
    assert_eq!(same_form("162", "180.00"), "162.00");
    assert_eq!(same_form("162", "180"), "162");
    assert_eq!(same_form("0.18", "180.00"), "0.18");
    assert_eq!(plain("180.00"), "180");
}

/// A fake run whose probe versions all fail both ways but the first (the test's own assert), and,
/// with `grounded`, whose second version (a figure of the ticket) passes on the original code.
fn probe_run(ticket: &str, grounded: bool) -> crate::fake_run::FakeRun {
    use crate::fake_run::{FakeRun, Side, test_run};
    let file = "from shop import count_items\n\n\ndef test_count():\n    order = make_order(5)\n    assert count_items(order) == 5\n";
    let mut run = FakeRun {
        ticket: ticket.to_string(),
        ..FakeRun::default()
    };
    run.files.insert("tests/test_shop.py".into(), file.into());
    let ids: Vec<String> = (0..40)
        .map(|i| format!("tests/test_shop.py::test_plumb_fix_probe__figure_{i}"))
        .collect();
    let outcomes = |original: bool| -> Vec<(&str, TestOutcome)> {
        ids.iter()
            .enumerate()
            .map(|(i, id)| {
                let passes = i == 0 || (original && grounded && i == 1);
                let outcome = if passes {
                    TestOutcome::Passed
                } else {
                    TestOutcome::Failed
                };
                (id.as_str(), outcome)
            })
            .collect()
    };
    run.runs
        .push_back((Side::Workspace, test_run(&outcomes(false), "")));
    run.runs
        .push_back((Side::Original, test_run(&outcomes(true), "")));
    run
}

#[tokio::test]
async fn the_fix_probe_rejects_a_fix_only_when_the_tickets_figures_are_values_the_test_checks() {
    let example =
        "def test_count():\n    order = make_order(5)\n    assert count_items(order) == 5\n";
    // Order 1234 and 3 items: numbers that are ids and counts, which no checked value has on
    // the original code. A fix that does not make them appear says nothing.
    let ticket = "Order 1234 lists 3 items twice.";
    let mut ungrounded = probe_run(ticket, false);
    let found = probe_fix(&mut ungrounded, "tests/test_shop.py", example)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert!(
        matches!(found, FigureSearch::NotTried),
        "no grounds to reject the fix"
    );
    // The same runs where a figure of the ticket is a value the original code gives (the bug's
    // own figure, as BILL-412's Rs 180): a fix that gives none of them is rejected.
    let mut grounded = probe_run(ticket, true);
    let found = probe_fix(&mut grounded, "tests/test_shop.py", example)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert!(matches!(found, FigureSearch::NoneShowed(_)));
    assert_eq!(
        grounded.read("tests/test_shop.py"),
        ungrounded.read("tests/test_shop.py"),
        "the probe leaves the test file as it was"
    );
}

/// The figures helper's notes through `figures/notes.md`, against the sentences the code wrote
/// before they became a template, byte for byte.
#[test]
fn the_notes_read_as_the_sentences_they_replaced() {
    let found = |written: &str, kept: &str, input: Option<Input>| FigureFound {
        written: written.into(),
        kept: kept.into(),
        input,
        function: "def test_gst():\n    assert gst(900) == 162".into(),
    };
    let function = "def test_gst():\n    assert gst(900) == 162";
    let alone = found(
        "    assert gst(900) == 162\n",
        "    assert gst(900) == 162\n",
        None,
    );
    assert_eq!(
        note(&alone, "tests/test_tax.py").unwrap(),
        format!(
            "\n\nplumb tried your test's asserts one at a time: `assert gst(900) == 162` alone passes with your fix and fails on the original code, so tests/test_tax.py now has this version of your test (its other asserts left out):\n{function}\n"
        )
    );
    let figure = found("assert gst(900) == 180", "assert gst(900) == 162", None);
    assert_eq!(
        note(&figure, "tests/test_tax.py").unwrap(),
        format!(
            "\n\nplumb tried your test with each figure the ticket gives in place of the one an assert expects: with `assert gst(900) == 162` instead of `assert gst(900) == 180` it passes with your fix and fails on the original code, so tests/test_tax.py now has this version of your test (its other asserts left out):\n{function}\n"
        )
    );
    let input = Input {
        written: "item(1000, discount=150)".into(),
        kept: "item(1000, discount=100)".into(),
    };
    let with_input = found(
        "assert gst(900) == 180",
        "assert gst(900) == 162",
        Some(input),
    );
    assert_eq!(
        note(&with_input, "tests/test_tax.py").unwrap(),
        format!(
            "\n\nplumb tried your test with the ticket's figures: none of them as the figure an assert expects shows the fix, but with the ticket's figure as an input, `item(1000, discount=100)` instead of `item(1000, discount=150)`, and `assert gst(900) == 162`, it passes with your fix and fails on the original code. So tests/test_tax.py now has this version of your test (its other asserts left out):\n{function}\n"
        )
    );
    assert_eq!(
        probe_note(&FigureSearch::Found(with_input)).unwrap(),
        Some("\n\nplumb checked your fix with the example of the closest test: with it `item(1000, discount=100)` and `assert gst(900) == 162` passes, a figure the ticket gives, and on the original code it fails. So the fix changes what the ticket is about.".into())
    );
    assert_eq!(
        probe_note(&FigureSearch::Found(figure)).unwrap(),
        Some("\n\nplumb checked your fix with the example of the closest test: with it `assert gst(900) == 162` passes, a figure the ticket gives, and on the original code it fails. So the fix changes what the ticket is about.".into())
    );
    assert_eq!(
        probe_note(&FigureSearch::NoneShowed(3)).unwrap(),
        Some("\n\nBut plumb checked your change with the example of the closest test, and none of the values the tests there check comes out as a figure the ticket gives with it (and differently without it): it does not fix what the ticket describes.".into())
    );
    assert_eq!(probe_note(&FigureSearch::NotTried).unwrap(), None);
    assert_eq!(
        kept_version_below().unwrap(),
        "The version of the test plumb kept is shown below.\n"
    );
    assert_eq!(
        none_showed(4).unwrap(),
        "\nplumb also tried your test with each figure the ticket gives in place of the one an assert expects (4 versions): none passes with your fix and fails on the original code. So either the assert checks a value the ticket's figure is not about (assert the value the ticket names), or the fix does not produce the ticket's figure yet.\n"
    );
}
