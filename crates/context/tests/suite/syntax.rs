use std::path::Path;

use plumb_context::syntax::{Language, SyntaxProblem, check_edit, syntax_problems};
use pretty_assertions::assert_eq;

fn problem(line: usize, message: &str) -> SyntaxProblem {
    SyntaxProblem {
        line,
        message: message.to_string(),
    }
}

/// One language's case: a valid file, the same file after a broken edit, and the problem expected.
struct Case {
    path: &'static str,
    valid: &'static str,
    broken: &'static str,
    expected: SyntaxProblem,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            path: "billing/totals.py",
            valid: "def total(lines):\n    return sum(lines)\n\n\nTAX = 0.2\n",
            broken: "def total(lines):\n    return sum(lines\n\n\nTAX = 0.2\n",
            expected: problem(2, "`(` is never closed"),
        },
        Case {
            path: "src/lib.rs",
            valid: "pub fn total(lines: &[u32]) -> u32 {\n    let sum = lines.iter().sum();\n    sum\n}\n",
            broken: "pub fn total(lines: &[u32]) -> u32 {\n    let sum = lines.iter().sum()\n    sum\n}\n",
            expected: problem(2, "missing `;`"),
        },
        Case {
            path: "web/totals.mjs",
            valid: "export function total(lines) {\n  return lines.reduce((a, b) => a + b, 0);\n}\n",
            broken: "export function total(lines) {\n  return lines.reduce((a, b) => a + b, 0;\n}\n",
            expected: problem(2, "missing `)`"),
        },
        Case {
            path: "web/totals.ts",
            valid: "export function total(lines: number[]): number {\n  const tax: number = 0.2;\n  return tax;\n}\n",
            broken: "export function total(lines: number[]): number {\n  const tax: number = ;\n  return tax;\n}\n",
            expected: problem(2, "unexpected `=`"),
        },
        Case {
            path: "web/Total.tsx",
            valid: "export const Total = (p: { n: number }) => (\n  <div>\n    <b>{p.n}</b>\n  </div>\n);\n",
            broken: "export const Total = (p: { n: number }) => (\n  <div>\n    <b>{p.n}</b>\n  </span>\n);\n",
            expected: problem(
                4,
                "closing tag `</span>` does not match `<div>` opened on line 2",
            ),
        },
        Case {
            path: "billing/totals.go",
            valid: "package billing\n\nfunc Total(lines []int) int {\n\tsum := 0\n\treturn sum\n}\n",
            broken: "package billing\n\nfunc Total(lines []int) int {\n\tsum := \n\treturn sum\n}\n",
            expected: problem(5, "unexpected `return`"),
        },
        Case {
            path: "src/main/java/Totals.java",
            valid: "class Totals {\n  int total() {\n    int x = 1;\n    return x;\n  }\n}\n",
            broken: "class Totals {\n  int total() {\n    int x = 1\n    return x;\n  }\n}\n",
            expected: problem(3, "missing `;`"),
        },
        Case {
            path: "src/totals.c",
            valid: "int total(const int *xs, int n) {\n    int sum = 0;\n    return sum;\n}\n",
            broken: "int total(const int *xs, int n) {\n    int sum = 0\n    return sum;\n}\n",
            expected: problem(2, "missing `;`"),
        },
        Case {
            path: "src/ledger.hpp",
            valid: "class Ledger {\n public:\n  int total() const { return 0; }\n};\n",
            broken: "class Ledger {\n public:\n  int total() const { return 0; }\n}\n",
            expected: problem(4, "missing `;`"),
        },
    ]
}

#[test]
fn every_language_accepts_a_valid_file() {
    let actual: Vec<(&str, Result<(), SyntaxProblem>)> = cases()
        .iter()
        .map(|c| (c.path, check_edit(Path::new(c.path), None, c.valid)))
        .collect();
    let expected: Vec<(&str, Result<(), SyntaxProblem>)> =
        cases().iter().map(|c| (c.path, Ok(()))).collect();
    assert_eq!(actual, expected);
}

#[test]
fn every_language_refuses_a_broken_edit_with_its_line() {
    let actual: Vec<(&str, Result<(), SyntaxProblem>)> = cases()
        .iter()
        .map(|c| {
            (
                c.path,
                check_edit(Path::new(c.path), Some(c.valid), c.broken),
            )
        })
        .collect();
    let expected: Vec<(&str, Result<(), SyntaxProblem>)> = cases()
        .into_iter()
        .map(|c| (c.path, Err(c.expected)))
        .collect();
    assert_eq!(actual, expected);
}

#[test]
fn javascript_covers_jsx_and_commonjs() {
    let actual = [
        check_edit(Path::new("a.jsx"), None, "const a = <div>{x}</div>;\n"),
        check_edit(Path::new("a.cjs"), None, "module.exports = { a: 1 };\n"),
        check_edit(Path::new("a.jsx"), None, "const a = <div>{x}</p>;\n"),
    ];
    let expected = [
        Ok(()),
        Ok(()),
        Err(problem(
            1,
            "closing tag `</p>` does not match `<div>` opened on line 1",
        )),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn unclosed_parenthesis_in_python_is_on_line_one() {
    let actual = check_edit(Path::new("tax.py"), None, "tax = (0\n");
    assert_eq!(actual, Err(problem(1, "`(` is never closed")));
}

#[test]
fn python_indentation_errors_are_refused() {
    let before = "def total(lines):\n    return sum(lines)\n";
    let actual = [
        check_edit(
            Path::new("a.py"),
            Some(before),
            "def total(lines):\nreturn sum(lines)\n",
        ),
        check_edit(
            Path::new("a.py"),
            Some(before),
            "def total(lines):\n    x = 1\n      return x\n",
        ),
        check_edit(
            Path::new("a.py"),
            Some(before),
            "def total(lines):\n    x = 1\n  return x\n",
        ),
    ];
    let expected = [
        Err(problem(1, "expected an indented block after this line")),
        Err(problem(3, "unexpected indent")),
        Err(problem(
            3,
            "unindent does not match any outer indentation level",
        )),
    ];
    assert_eq!(actual, expected);
}

const BROKEN_FILE: &str = "\
def broken(:
    return 1


def total(lines):
    return sum(lines)
";

#[test]
fn already_broken_file_accepts_an_unrelated_edit() {
    // Two lines inserted above the old error shift it; the edit itself is fine.
    let after = "\
import os
import sys
def broken(:
    return 1


def total(lines):
    return sum(lines) * 2
";
    let actual = check_edit(Path::new("a.py"), Some(BROKEN_FILE), after);
    assert_eq!(actual, Ok(()));
}

#[test]
fn already_broken_file_refuses_a_second_error() {
    let after = "\
def broken(:
    return 1


def total(lines):
    return sum(lines]
";
    let actual = check_edit(Path::new("a.py"), Some(BROKEN_FILE), after);
    assert_eq!(actual, Err(problem(6, "`]` does not match `(` on line 6")));
}

#[test]
fn editing_the_broken_line_without_fixing_it_is_accepted() {
    // The edit spans the broken line and carries it along unchanged.
    let after = "\
# header
def broken(:
    return 2


def total(lines):
    return sum(lines)
";
    let actual = check_edit(Path::new("a.py"), Some(BROKEN_FILE), after);
    assert_eq!(actual, Ok(()));
}

#[test]
fn new_file_with_an_error_is_refused() {
    let actual = check_edit(Path::new("lib.rs"), None, "fn main() {\n");
    assert_eq!(actual, Err(problem(1, "`{` is never closed")));
}

#[test]
fn files_of_other_languages_always_pass() {
    let actual = [
        check_edit(Path::new("notes.txt"), None, "((("),
        check_edit(Path::new("Makefile"), Some("a:"), "((("),
        check_edit(Path::new("page.html"), None, "<div></p>"),
    ];
    assert_eq!(actual, [Ok(()), Ok(()), Ok(())]);
}

#[test]
fn problems_come_in_source_order() {
    let source = "fn a() {\n    let x = 1\n}\nfn b() {\n    let y = 2\n}\n";
    let actual = syntax_problems(Language::Rust, source);
    assert_eq!(
        actual,
        vec![problem(2, "missing `;`"), problem(5, "missing `;`")]
    );
}

#[test]
fn long_error_text_is_cut_to_one_line() {
    let source = "x = 1 +\n\ndef alpha_beta_gamma_delta_epsilon(): pass\n";
    let actual = syntax_problems(Language::Python, source);
    let expected = vec![
        problem(1, "unexpected `x = 1 + def alpha_beta_gamma_d…`"),
        problem(3, "unexpected `def`"),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn any_input_parses_without_panicking() {
    let deep = "(".repeat(20_000);
    let inputs = [
        "",
        "\0\u{1}\u{7f}",
        "\u{feff}ünïcödé 😀 '''\"\"\"`${",
        deep.as_str(),
        "}}}}]]]))) end",
        "\r\n\r\n\t\t\u{c}",
    ];
    let mut parsed = 0;
    for lang in Language::ALL {
        for input in inputs {
            let _ = syntax_problems(lang, input);
            let _ = plumb_context::outline::definitions(lang, input);
            parsed += 1;
        }
    }
    assert_eq!(parsed, Language::ALL.len() * inputs.len());
}
