//! The readings of real output: `fixtures/` holds what node 20's `node --test` (TAP, as it
//! prints to a pipe) and jest 29 (colours and all) printed for a test that fails on an
//! assertion (`add`), a test that uses a name it never defined (`ref`), a test whose code uses
//! one (`total`), and a test file with a syntax error (`syntax`).

use pretty_assertions::assert_eq;

use super::*;
use crate::Runner;
use crate::failure::TestFileNames;

fn reading(runner: Runner, output: &str) -> FailureReading {
    read(&crate::failure_excerpt(runner, output, ""), &TestFileNames)
}

fn node(output: &str) -> FailureReading {
    reading(Runner::Npm, output)
}

fn jest(output: &str) -> FailureReading {
    reading(Runner::Jest, output)
}

#[test]
fn node_test_tells_the_tests_mistake_from_the_codes() {
    let actual = [
        node(include_str!("fixtures/node_add.txt")).kind,
        node(include_str!("fixtures/node_ref.txt")).kind,
        node(include_str!("fixtures/node_total.txt")).kind,
        node(include_str!("fixtures/node_syntax.txt")).kind,
    ];
    let expected = [
        FailureKind::Assertion,
        FailureKind::TestMistake,
        FailureKind::CodeStopped,
        FailureKind::TestMistake,
    ];
    assert_eq!(actual, expected);
    assert_eq!(
        node(include_str!("fixtures/node_add.txt")).compared,
        ["-1 !== 5", "expected: 5", "actual: -1"].map(String::from)
    );
    assert_eq!(
        node(include_str!("fixtures/node_ref.txt"))
            .evidence
            .as_deref(),
        Some("error: 'expected is not defined'")
    );
    assert_eq!(
        node(include_str!("fixtures/node_syntax.txt"))
            .evidence
            .as_deref(),
        Some("SyntaxError: missing ) after argument list")
    );
}

#[test]
fn jest_tells_the_tests_mistake_from_the_codes() {
    let actual = [
        jest(include_str!("fixtures/jest_add.txt")).kind,
        jest(include_str!("fixtures/jest_ref.txt")).kind,
        jest(include_str!("fixtures/jest_total.txt")).kind,
        jest(include_str!("fixtures/jest_syntax.txt")).kind,
    ];
    let expected = [
        FailureKind::Assertion,
        FailureKind::TestMistake,
        FailureKind::CodeStopped,
        FailureKind::TestMistake,
    ];
    assert_eq!(actual, expected);
    assert_eq!(
        jest(include_str!("fixtures/jest_add.txt")).compared,
        ["Expected: 5", "Received: -1"].map(String::from)
    );
    assert_eq!(
        jest(include_str!("fixtures/jest_total.txt"))
            .evidence
            .as_deref(),
        Some("ReferenceError: offset is not defined")
    );
}

#[test]
fn a_call_of_what_the_code_does_not_have_and_a_throw_from_the_code() {
    let not_a_function = "  ● adds\n\n    TypeError: (0 , _calc.addTwo) is not a function\n\n      at Object.<anonymous> (src/calc.test.js:3:10)\n";
    let thrown = "  ● totals\n\n    TypeError: Cannot read properties of undefined (reading 'length')\n\n      at total (src/calc.js:5:14)\n      at Object.<anonymous> (src/calc.test.js:3:10)\n";
    let missing = "    Error: Cannot find module './calcs' from 'src/calc.test.js'\n\n      at Resolver._throwModNotFoundError (node_modules/jest-resolve/build/resolver.js:427:11)\n      at Object.<anonymous> (src/calc.test.js:1:1)\n";
    assert_eq!(
        [
            read(not_a_function, &TestFileNames).kind,
            read(thrown, &TestFileNames).kind,
            read(missing, &TestFileNames).kind,
        ],
        [
            FailureKind::TestMistake,
            FailureKind::Other,
            FailureKind::TestMistake
        ]
    );
}
