//! pytest's summary, excerpt, narrowing and per-test outcomes.

use super::*;
use pretty_assertions::assert_eq;

#[test]
fn reads_summary_lines() {
    let actual = [
        summary_line("1 failed, 12 passed, 2 skipped, 1 deselected, 1 xfailed, 1 error in 0.12s"),
        summary_line("===== 3 passed, 2 warnings in 65.12s (0:01:05) ====="),
        summary_line("== no tests ran in 0.01s =="),
        summary_line("2 errors in 0.30s"),
        summary_line("1 passed, 3 subtests passed in 0.01s"),
        summary_line("ran 3 tests in 0.1s"),
        summary_line("3 passed in no time"),
        summary_line("3 passed"),
    ];
    let expected = [
        Some(TestCounts {
            passed: 12,
            failed: 1,
            skipped: 2,
            errors: 1,
            deselected: 1,
            xfailed: 1,
            xpassed: 0,
        }),
        Some(TestCounts {
            passed: 3,
            ..TestCounts::default()
        }),
        Some(TestCounts::default()),
        Some(TestCounts {
            errors: 2,
            ..TestCounts::default()
        }),
        Some(TestCounts {
            passed: 1,
            ..TestCounts::default()
        }),
        None,
        None,
        None,
    ];
    assert_eq!(actual, expected);
}

#[test]
fn summary_lines_lose_their_duration() {
    let actual = [
        "============ 1 failed, 2 passed in 0.12s ============",
        "1 failed, 2 passed in 0.12s",
        "== 3 passed in 65.12s (0:01:05) ==",
        "no tests ran in 0.01s",
        "E       assert x in y",
        "ran 3 tests in 0.1s",
    ]
    .map(without_duration);
    let expected = [
        "============ 1 failed, 2 passed ============",
        "1 failed, 2 passed",
        "== 3 passed ==",
        "no tests ran",
        "E       assert x in y",
        "ran 3 tests in 0.1s",
    ];
    assert_eq!(actual, expected);
}

#[test]
fn the_short_summary_does_not_repeat_a_kept_failure_message() {
    let stdout = "\
..F                                                                      [100%]
=================================== FAILURES ===================================
___________________________________ test_tax ___________________________________

def test_tax():
>       assert totals.tax == Decimal(\"162.00\")
E       AssertionError: assert Decimal('180.00') == Decimal('162.00')
E        +  where Decimal('180.00') = InvoiceTotals(tax=Decimal('180.00')).tax

tests/test_a.py:5: AssertionError
=========================== short test summary info ============================
PASSED tests/test_a.py::test_one
FAILED tests/test_a.py::test_tax - AssertionError: assert Decimal('180.00') == Decimal('162.00')
 +  where Decimal('180.00') = InvoiceTotals(tax=Decimal('180.00')).tax
ERROR tests/test_b.py - ImportError: no module named c
1 failed, 1 passed, 1 error in 0.05s
";
    let expected = "\
=================================== FAILURES ===================================
___________________________________ test_tax ___________________________________

def test_tax():
>       assert totals.tax == Decimal(\"162.00\")
E       AssertionError: assert Decimal('180.00') == Decimal('162.00')
E        +  where Decimal('180.00') = InvoiceTotals(tax=Decimal('180.00')).tax

tests/test_a.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_a.py::test_tax - AssertionError: assert Decimal('180.00') == Decimal('162.00')
ERROR tests/test_b.py - ImportError: no module named c
1 failed, 1 passed, 1 error";
    assert_eq!(excerpt(stdout, ""), expected);

    // With tracebacks off (`--tb=no`) the summary is all there is of a message: kept whole.
    let no_tracebacks = "\
=========================== short test summary info ============================
FAILED tests/test_a.py::test_tax - AssertionError: assert 1 == 2
 +  where 1 = f()
1 failed in 0.05s
";
    assert_eq!(
        excerpt(no_tracebacks, ""),
        "\
=========================== short test summary info ============================
FAILED tests/test_a.py::test_tax - AssertionError: assert 1 == 2
 +  where 1 = f()
1 failed"
    );
}

#[test]
fn object_addresses_are_left_out() {
    let actual = [
        " +  where False = <built-in method endswith of str object at 0x7fdecab925b0>('Rs 1,180.00')",
        "E  <function f at 0x10> and <Foo object at 0xABCDEF12>",
        "look at 0xcafe",
        ">   assert s == 'stop at 0xcafe>'",
        "meet at 0x1 and at 0xg",
    ]
    .map(without_addresses);
    let expected = [
        " +  where False = <built-in method endswith of str object>('Rs 1,180.00')",
        "E  <function f at 0x10> and <Foo object>",
        "look at 0xcafe",
        ">   assert s == 'stop>'",
        "meet at 0x1 and at 0xg",
    ];
    assert_eq!(
        actual, expected,
        "only ` at 0x`, four hex digits or more and `>`"
    );
}

#[test]
fn progress_lines() {
    let actual = [
        is_progress("..FsxXE                                                [100%]"),
        is_progress("tests/test_a.py::test_x PASSED                          [ 14%]"),
        is_progress("E       assert [1] == [2]"),
        is_progress("see [docs] 100%]"),
    ];
    assert_eq!(actual, [true, true, false, false]);
}

#[test]
fn node_ids_from_junit_names() {
    let summary = [
        ("PASSED", "tests/test_sub.py::TestSub::test_base"),
        ("FAILED", "tests/test_p.py::test_p[a - b] - assert 0"),
    ];
    let case = |classname: &str, name: &str, file: Option<&str>| Case {
        classname: classname.to_string(),
        name: name.to_string(),
        file: file.map(String::from),
        outcome: TestOutcome::Passed,
    };
    let cases = [
        case("tests.test_x", "test_y[1]", Some("tests/test_x.py")),
        case(
            "tests.test_x.TestC.Inner",
            "test_z",
            Some("tests/test_x.py"),
        ),
        case("", "tests.test_bad", Some("tests/test_bad.py")),
        // Inherited from tests/base.py: found in the short summary.
        case("tests.test_sub.TestSub", "test_base", Some("tests/base.py")),
        case("tests.test_p", "test_p[a - b]", None),
        case(
            "tests.test_gone.TestG",
            "test_skipped",
            Some("tests/base.py"),
        ),
    ];
    let actual: Vec<String> = cases.iter().map(|case| node_id(case, &summary)).collect();
    let expected = [
        "tests/test_x.py::test_y[1]",
        "tests/test_x.py::TestC::Inner::test_z",
        "tests/test_bad.py",
        "tests/test_sub.py::TestSub::test_base",
        "tests/test_p.py::test_p[a - b]",
        "tests.test_gone.TestG::test_skipped",
    ]
    .map(String::from);
    assert_eq!(actual, expected);
}

#[test]
fn junit_names_mangle_like_pytest() {
    let actual = [
        junit_names("tests/test_x.py::TestC::test_y[a::b.c]"),
        junit_names("tests/test_bad.py"),
    ];
    let expected = [
        (
            "tests.test_x.TestC".to_string(),
            "test_y[a::b.c]".to_string(),
        ),
        (String::new(), "tests.test_bad".to_string()),
    ];
    assert_eq!(actual, expected);
}
