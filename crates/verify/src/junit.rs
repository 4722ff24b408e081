//! JUnit XML as pytest (`--junitxml`), Maven Surefire (`TEST-*.xml`) and Gradle write it:
//! `<testsuites>` (optional) → `<testsuite tests=…>` → `<testcase classname=… name=… [file=…]>`
//! holding `<failure>`, `<error>` or `<skipped>` (pytest marks an xfail as
//! `<skipped type="pytest.xfail">`). Surefire's `<flakyFailure>`/`<flakyError>` (passed on a
//! rerun) and `<rerunFailure>`/`<rerunError>` (beside the final `<failure>`) change nothing.
//! Only elements and attributes are read; messages and captured output are skipped.

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::TestOutcome;

/// One `<testcase>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Case {
    pub(crate) classname: String,
    pub(crate) name: String,
    /// pytest's `file` attribute (xunit1 only).
    pub(crate) file: Option<String>,
    pub(crate) outcome: TestOutcome,
}

/// A parsed report: its test cases and the sum of the `tests` attributes of its innermost
/// suites (what the runner said it ran).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Report {
    pub(crate) cases: Vec<Case>,
    pub(crate) declared: u32,
}

/// An open `<testsuite>`: its `tests` attribute and whether it holds other suites.
struct Suite {
    tests: u32,
    holds_suites: bool,
}

/// `None` when `xml` is not well-formed (a report cut short by a crash) or has no `<testsuite>`.
pub(crate) fn parse(xml: &str) -> Option<Report> {
    let mut reader = Reader::from_str(xml);
    let mut report = Report::default();
    let mut suites: Vec<Suite> = Vec::new();
    let mut found_suite = false;
    let mut open: Option<Case> = None;
    loop {
        let event = reader.read_event().ok()?;
        match event {
            Event::Eof => break,
            Event::Start(element) => match element.local_name().as_ref() {
                b"testsuite" => {
                    found_suite = true;
                    if let Some(parent) = suites.last_mut() {
                        parent.holds_suites = true;
                    }
                    suites.push(Suite {
                        tests: tests_attribute(&element),
                        holds_suites: false,
                    });
                }
                b"testcase" => open = Some(case(&element)),
                other => apply(open.as_mut(), other, &element),
            },
            Event::Empty(element) => match element.local_name().as_ref() {
                b"testsuite" => {
                    found_suite = true;
                    if let Some(parent) = suites.last_mut() {
                        parent.holds_suites = true;
                    }
                    report.declared += tests_attribute(&element);
                }
                b"testcase" => report.cases.push(case(&element)),
                other => apply(open.as_mut(), other, &element),
            },
            Event::End(element) => match element.local_name().as_ref() {
                b"testsuite" => {
                    if let Some(suite) = suites.pop()
                        && !suite.holds_suites
                    {
                        report.declared += suite.tests;
                    }
                }
                b"testcase" => report.cases.extend(open.take()),
                _ => {}
            },
            _ => {}
        }
    }
    // A document cut short inside a suite or a test case is not a report.
    if !suites.is_empty() || open.is_some() {
        return None;
    }
    found_suite.then_some(report)
}

fn case(element: &BytesStart) -> Case {
    Case {
        classname: attribute(element, "classname").unwrap_or_default(),
        name: attribute(element, "name").unwrap_or_default(),
        file: attribute(element, "file"),
        outcome: TestOutcome::Passed,
    }
}

/// A child element of an open test case.
fn apply(case: Option<&mut Case>, name: &[u8], element: &BytesStart) {
    let Some(case) = case else {
        return;
    };
    let outcome = match name {
        b"failure" => TestOutcome::Failed,
        b"error" => TestOutcome::Error,
        b"skipped" if attribute(element, "type").as_deref() == Some("pytest.xfail") => {
            TestOutcome::XFailed
        }
        b"skipped" => TestOutcome::Skipped,
        _ => return,
    };
    case.outcome = case.outcome.worse(outcome);
}

fn tests_attribute(element: &BytesStart) -> u32 {
    attribute(element, "tests")
        .and_then(|tests| tests.trim().parse().ok())
        .unwrap_or(0)
}

fn attribute(element: &BytesStart, key: &str) -> Option<String> {
    let attribute = element.try_get_attribute(key).ok()??;
    attribute
        .unescape_value()
        .ok()
        .map(|value| value.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn case(classname: &str, name: &str, outcome: TestOutcome) -> Case {
        Case {
            classname: classname.to_string(),
            name: name.to_string(),
            file: None,
            outcome,
        }
    }

    #[test]
    fn reads_nested_suites_and_every_outcome() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="outer" tests="99">
    <testsuite name="a" tests="3">
      <testcase classname="A" name="ok &amp; fine"/>
      <testcase classname="A" name="fails"><failure message="x"><![CDATA[<not xml>]]></failure></testcase>
      <testcase classname="A" name="flaky"><flakyFailure message="once"/><system-out>hi</system-out></testcase>
    </testsuite>
    <testsuite name="b" tests="2">
      <testcase classname="B" name="errs"><error/></testcase>
      <testcase classname="B" name="skip"><skipped/></testcase>
    </testsuite>
    <testsuite name="empty" tests="0"/>
  </testsuite>
</testsuites>"#;
        let actual = parse(xml);
        let expected = Some(Report {
            cases: vec![
                case("A", "ok & fine", TestOutcome::Passed),
                case("A", "fails", TestOutcome::Failed),
                case("A", "flaky", TestOutcome::Passed),
                case("B", "errs", TestOutcome::Error),
                case("B", "skip", TestOutcome::Skipped),
            ],
            declared: 5,
        });
        assert_eq!(actual, expected);
    }

    #[test]
    fn refuses_what_is_not_a_whole_report() {
        let actual = [
            parse(""),
            parse("not xml at all"),
            parse("<results><testcase name=\"x\"/></results>"),
            parse("<testsuite tests=\"2\"><testcase name=\"a\"/><testcase name=\"b\">"),
            parse("<testsuite><testcase name=\"a\"></wrong></testsuite>"),
        ];
        assert_eq!(actual, [None, None, None, None, None]);
    }
}
