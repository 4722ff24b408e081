//! What a test run with the fix and on the original code is read as.

use pretty_assertions::assert_eq;

use super::*;

/// A pytest excerpt as the phases read it.
fn pytest(excerpt: &str) -> FailureReading {
    plumb_verify::read_failure(Runner::Pytest, excerpt, &plumb_verify::TestFileNames)
}

fn same_assertion(one: &str, other: &str) -> bool {
    pytest(one).same_assertion(&pytest(other))
}

#[test]
fn a_fix_that_did_not_touch_the_asserted_figure_is_named() {
    let with_fix = "    def test_gst_after_discount():\n>       assert totals.tax == Decimal(\"162.00\")\nE       AssertionError: assert Decimal('180.00') == Decimal('162.00')\nE        +  where Decimal('180.00') = InvoiceTotals(lines=(1,)).tax\n";
    let original = with_fix.replace("(1,)", "(2,)");
    assert!(
        same_assertion(with_fix, &original),
        "the where lines print whole objects and may differ"
    );
    let right_fix = with_fix.replace("180.00", "171.00");
    assert!(!same_assertion(&right_fix, &original));
    let raises = "E       Failed: DID NOT RAISE InvoiceError\n";
    assert!(
        !same_assertion(raises, raises),
        "only a compared value says the fix missed a figure"
    );
    assert!(!same_assertion("", ""));

    let mut phases = Phases::new(Runner::Pytest);
    phases.record_text(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    let missed = CheckVerdict {
        now: TestVerdict::Fails,
        original: Some(TestVerdict::Fails),
        same_failure: true,
        broke_old: false,
        broke_code: false,
        passes_more: false,
    };
    assert!(
        phases
            .record_text(&PhaseCheck::BothWays(TEST.into()), missed)
            .contains("your change did not touch the figure it checks")
    );
    assert!(
        phases
            .next_step_text()
            .unwrap()
            .contains("the fix is in the wrong place")
    );
    let again = PhaseCheck::Again(TEST.into());
    let missed_again = CheckVerdict {
        original: None,
        ..missed
    };
    assert!(
        phases
            .record_text(&again, missed_again)
            .contains("did not touch the figure it checks either")
    );
    phases.record_text(&again, verdict(TestVerdict::Fails, None));
    assert!(
        phases
            .next_step_text()
            .unwrap()
            .contains("Compare the figure it expects"),
        "a change that moved the figure is judged as before"
    );
}

#[test]
fn a_failure_on_the_tests_own_mistake_is_not_a_reproduction() {
    let assertion = "E       assert Decimal('180.00') == Decimal('162.00')";
    assert_eq!(
        TestVerdict::of(&counts(1, 0, 0), &pytest(assertion)),
        TestVerdict::Fails
    );
    let own = "E       UnboundLocalError: cannot access local variable 'item'";
    assert_eq!(
        TestVerdict::of(&counts(1, 0, 0), &pytest(own)),
        TestVerdict::FailsInTheTest
    );
    let bad_call =
        "E       TypeError: LineItem.__init__() got an unexpected keyword argument 'price'";
    assert_eq!(
        TestVerdict::of(&counts(1, 0, 0), &pytest(bad_call)),
        TestVerdict::FailsInTheTest
    );
    // A bug that raises is still a reproduction.
    let raised = "E       ZeroDivisionError: division by zero";
    assert_eq!(
        TestVerdict::of(&counts(1, 0, 0), &pytest(raised)),
        TestVerdict::Fails
    );
    assert_eq!(
        TestVerdict::of(&counts(0, 0, 2), &pytest("")),
        TestVerdict::Passes
    );
    assert_eq!(
        TestVerdict::of(&counts(0, 1, 0), &pytest("")),
        TestVerdict::Broken
    );
    assert_eq!(
        TestVerdict::of(&counts(0, 0, 0), &pytest("")),
        TestVerdict::Broken
    );
}

fn counts(failed: u32, errors: u32, passed: u32) -> TestCounts {
    TestCounts {
        failed,
        errors,
        passed,
        ..TestCounts::default()
    }
}

#[test]
fn a_local_that_hides_a_helper_is_explained_by_name() {
    let excerpt = "E       UnboundLocalError: cannot access local variable 'invoice' where it is not associated with a value";
    let explained = words::note(&explain_mistake(excerpt).unwrap()).unwrap();
    assert!(
        explained.starts_with("In the test, `invoice = ...` makes `invoice` a local variable"),
        "{explained}"
    );
    assert_eq!(explain_mistake("E       assert 1 == 2"), None);
}
