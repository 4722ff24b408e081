//! Whose mistake a pytest failure shows, from its excerpt (the ERRORS and FAILURES sections).
//!
//! Python reports a test's own mistakes as exceptions like any other, so the exception's name
//! decides: a `NameError`, an import that fails, a fixture pytest cannot find, a call with
//! arguments the function does not take, with no `assert` in sight, is the test's mistake. The
//! same names where the test reached an `assert` line are the code's: the failing call is inside
//! the assertion. These are the readings the guided phases were built on (they read pytest's
//! text before the adapters), kept as they were.

use crate::failure::{FailureKind, FailureReading};

/// Exceptions that, in a fresh test's failure, almost always mean the test is wrong rather than
/// the code: Python names and imports, and calls made with arguments that do not exist.
const TEST_MISTAKES: [&str; 12] = [
    "NameError",
    "got multiple values for",
    "object has no attribute",
    "object is not callable",
    "UnboundLocalError",
    "ImportError",
    "ModuleNotFoundError",
    "SyntaxError",
    "IndentationError",
    "unexpected keyword argument",
    "required positional argument",
    "fixture '",
];

/// Errors that, raised where the test calls the code, mean the code can no longer run at all: a
/// name it uses is not defined, a local read before it is set, an import or the syntax broken.
/// (`ReferenceError` is JavaScript's, kept for a wrapped command whose output has no summary
/// plumb knows.)
const CODE_STOPS: [&str; 7] = [
    "NameError",
    "UnboundLocalError",
    "ImportError",
    "ModuleNotFoundError",
    "SyntaxError",
    "IndentationError",
    "ReferenceError",
];

/// The reading of a pytest excerpt: a test mistake when one of [`TEST_MISTAKES`] shows and no
/// assertion does (`AssertionError`, an `assert ` line, in the traceback or the message); else
/// the code stopped when a line names one of [`CODE_STOPS`]; else an assertion when a value was
/// compared (an `E assert …` line, `AssertionError`); else `Other` (the code raised).
pub(crate) fn read(excerpt: &str) -> FailureReading {
    let mistake = excerpt
        .lines()
        .find(|line| TEST_MISTAKES.iter().any(|m| line.contains(m)));
    let asserted = excerpt.contains("AssertionError") || excerpt.contains("assert ");
    let stopped = excerpt
        .lines()
        .find(|line| CODE_STOPS.iter().any(|error| line.contains(error)));
    let compared = compared(excerpt);
    let compares = !compared.is_empty() || excerpt.contains("AssertionError");
    let mut reading = match (mistake, stopped) {
        (Some(line), _) if !asserted => FailureReading::new(FailureKind::TestMistake, Some(line)),
        (_, Some(line)) => FailureReading::new(FailureKind::CodeStopped, Some(line)),
        _ if compares => FailureReading::new(FailureKind::Assertion, None),
        _ => FailureReading::other(),
    };
    reading.compared = compared;
    reading
}

/// pytest's `E` lines, without the `where` lines that print whole objects, when they compare a
/// value (`assert …`, `AssertionError`); empty for other failures (`DID NOT RAISE`, an
/// exception), which say nothing about a value.
fn compared(excerpt: &str) -> Vec<String> {
    let lines: Vec<String> = excerpt
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("E "))
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('+') && !line.contains(" where "))
        .map(String::from)
        .collect();
    let compares = lines
        .iter()
        .any(|line| line.starts_with("assert ") || line.starts_with("AssertionError"));
    if compares { lines } else { Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// pytest 9.2's output for `tests/test_calc.py` (see each case), read as the excerpt the
    /// model is shown.
    fn excerpt_of(case: &str) -> String {
        let stdout = match case {
            "assertion" => PYTEST_ASSERTION,
            "name_in_test" => PYTEST_NAME_IN_TEST,
            "raises" => PYTEST_RAISES,
            "name_in_code" => PYTEST_NAME_IN_CODE,
            _ => PYTEST_FIXTURE,
        };
        crate::failure_excerpt(crate::Runner::Pytest, stdout, "")
    }

    #[test]
    fn pytest_failures_read_by_the_exception() {
        let kind = |case| read(&excerpt_of(case)).kind;
        assert_eq!(
            [
                kind("assertion"),
                kind("name_in_test"),
                kind("raises"),
                kind("name_in_code"),
                kind("fixture"),
            ],
            [
                FailureKind::Assertion,
                // The name is missing inside an assert line: read as the code's, as before.
                FailureKind::CodeStopped,
                FailureKind::Other,
                FailureKind::CodeStopped,
                FailureKind::TestMistake,
            ]
        );
        assert_eq!(
            read(&excerpt_of("assertion")).compared,
            ["assert -1 == 5".to_string()]
        );
        let own = "E       UnboundLocalError: cannot access local variable 'item'";
        assert_eq!(read(own).kind, FailureKind::TestMistake);
        assert_eq!(
            read(own).evidence.as_deref(),
            Some("E       UnboundLocalError: cannot access local variable 'item'")
        );
    }

    const PYTEST_ASSERTION: &str = "\
F                                                                        [100%]
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(2, 3) == 5
E       assert -1 == 5
E        +  where -1 = add(2, 3)

tests/test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert -1 == 5
1 failed, 4 deselected in 0.03s
";

    const PYTEST_NAME_IN_TEST: &str = "\
F                                                                        [100%]
=================================== FAILURES ===================================
______________________________ test_name_in_test _______________________________

    def test_name_in_test():
>       assert add(1, 1) == expected
                            ^^^^^^^^
E       NameError: name 'expected' is not defined

tests/test_calc.py:9: NameError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_name_in_test - NameError: name 'expected' is ...
1 failed, 4 deselected in 0.03s
";

    const PYTEST_RAISES: &str = "\
F                                                                        [100%]
=================================== FAILURES ===================================
__________________________________ test_ratio __________________________________

    def test_ratio():
>       assert ratio(1, 0) == 0
               ^^^^^^^^^^^

tests/test_calc.py:17: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

a = 1, b = 0

    def ratio(a, b):
>       return a / b
               ^^^^^
E       ZeroDivisionError: division by zero

calc.py:6: ZeroDivisionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_ratio - ZeroDivisionError: division by zero
1 failed, 4 deselected in 0.03s
";

    const PYTEST_NAME_IN_CODE: &str = "\
F                                                                        [100%]
=================================== FAILURES ===================================
__________________________________ test_total __________________________________

    def test_total():
>       assert total([1, 2]) == 3
               ^^^^^^^^^^^^^

tests/test_calc.py:21: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

xs = [1, 2]

    def total(xs):
>       return sum(x for x in xs) + undefined_offset
                                    ^^^^^^^^^^^^^^^^
E       NameError: name 'undefined_offset' is not defined

calc.py:10: NameError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_total - NameError: name 'undefined_offset' is...
1 failed, 4 deselected in 0.03s
";

    const PYTEST_FIXTURE: &str = "\
E                                                                        [100%]
==================================== ERRORS ====================================
________________________ ERROR at setup of test_fixture ________________________
file /tmp/rs-samples/py/tests/test_calc.py, line 12
  def test_fixture(tax_rate):
E       fixture 'tax_rate' not found
>       available fixtures: capfd, capfdbinary, caplog, capsys, monkeypatch, tmp_path
>       use 'pytest --fixtures [testpath]' for help on them.

/tmp/rs-samples/py/tests/test_calc.py:12
=========================== short test summary info ============================
ERROR tests/test_calc.py::test_fixture
4 deselected, 1 error in 0.04s
";
}
