//! A command plumb does not recognise (`make test`, `tox`, a script, `sh -c …`): it cannot be
//! narrowed or given report options, so its output is read for every summary format plumb knows,
//! and a runner found in it is read as that runner.

use std::path::Path;

use plumb_protocol::TestCounts;

use super::{FinishedRun, RunnerAdapter, cargo, go, js_failure, jvm, nextest, npm, pytest};
use crate::failure::{FailureReading, TestPlaces};
use crate::results::TestResults;
use crate::{Runner, VerifyError, output};

pub(crate) struct Wrapped;

/// Which runner's summary a wrapped command's output holds, in the order they are looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inside {
    Pytest,
    Cargo,
    Node,
    Go,
    Nextest,
    Maven,
}

/// The runner whose summary `text` holds, if any.
fn inside(text: &str) -> Option<Inside> {
    if pytest::counts(text).is_some() {
        Some(Inside::Pytest)
    } else if cargo::counts(text).is_some() {
        Some(Inside::Cargo)
    } else if npm::counts(text).is_some() {
        Some(Inside::Node)
    } else if go::counts(text).is_some() {
        Some(Inside::Go)
    } else if nextest::counts(text).is_some() {
        Some(Inside::Nextest)
    } else if jvm::maven_counts(text).is_some() {
        Some(Inside::Maven)
    } else {
        None
    }
}

impl RunnerAdapter for Wrapped {
    fn runner(&self) -> Runner {
        Runner::Other
    }

    fn narrows(&self) -> bool {
        false
    }

    fn narrow(&self, argv: &[String], _tests: &[String]) -> Result<Vec<String>, VerifyError> {
        Err(VerifyError::CannotNarrow {
            command: shell_words::join(argv),
        })
    }

    fn with_report(&self, argv: &[String], _report_path: &Path) -> Vec<String> {
        argv.to_vec()
    }

    /// `PYTEST_ADDOPTS` asking pytest, if that is what runs inside, for a short summary that
    /// names each test (the command's own `-r` wins, as it comes later).
    fn report_env(&self) -> Vec<(String, String)> {
        vec![(
            "PYTEST_ADDOPTS".to_string(),
            pytest::REPORT_CHARS.to_string(),
        )]
    }

    /// Only when its output names each test it counts, so not counted here.
    fn reports_per_test(&self) -> bool {
        false
    }

    fn results(&self, run: &FinishedRun<'_>) -> Option<TestResults> {
        wrapped_results(run.text)
    }

    fn counts(&self, text: &str) -> Option<TestCounts> {
        match inside(text)? {
            Inside::Pytest => pytest::counts(text),
            Inside::Cargo => cargo::counts(text),
            Inside::Node => npm::counts(text),
            Inside::Go => go::counts(text),
            Inside::Nextest => nextest::counts(text),
            Inside::Maven => jvm::maven_counts(text),
        }
    }

    /// As pytest or cargo when the output has their summary, else the tail.
    fn excerpt(&self, stdout: &str, stderr: &str) -> String {
        let text = output::joined(stdout, stderr);
        match inside(&text) {
            Some(Inside::Pytest) => pytest::excerpt(stdout, stderr),
            Some(Inside::Cargo) => cargo::excerpt(stdout, stderr),
            _ => output::tail(&text),
        }
    }

    /// As the runner whose summary the excerpt holds; without one, by pytest's words (what
    /// plumb read every runner's output by before the adapters).
    fn read_failure(&self, excerpt: &str, places: &dyn TestPlaces) -> FailureReading {
        match inside(excerpt) {
            Some(Inside::Cargo | Inside::Nextest) => cargo::read_failure(excerpt),
            Some(Inside::Node) => js_failure::read(excerpt, places),
            Some(Inside::Go) => go::read_failure(excerpt, places),
            Some(Inside::Maven) => jvm::read_failure(excerpt, places),
            Some(Inside::Pytest) | None => pytest::read_failure(excerpt),
        }
    }

    fn test_id_example(&self) -> Option<&'static str> {
        None
    }
}

/// Per-test outcomes of a wrapped runner from its output alone: pytest's short summary (with
/// [`Wrapped::report_env`]'s `-r`), libtest's `test x ... ok` lines, nextest's status lines, `go
/// test -json` events. Only results that account for every test the same output's summary counts
/// are taken (skips aside: pytest's summary groups them without ids), so that a summary cut
/// short (the command's own `-r`, two runs in one script) reads as "no per-test results", and
/// the caller judges from the counts, never from a partial list.
fn wrapped_results(text: &str) -> Option<TestResults> {
    let candidates = [
        (pytest::summary_results(text), pytest::counts(text)),
        (cargo::results(text), cargo::counts(text)),
        (nextest::results(text), nextest::counts(text)),
        (go::results(text), go::counts(text)),
    ];
    candidates
        .into_iter()
        .find_map(|(results, counts)| match (results, counts) {
            (Some(results), Some(counts)) if accounts_for(&results.counts, &counts) => {
                Some(results)
            }
            _ => None,
        })
}

/// Whether per-test counts agree with a summary's, skips aside.
fn accounts_for(found: &TestCounts, summary: &TestCounts) -> bool {
    let key = |c: &TestCounts| (c.passed, c.failed, c.errors, c.xfailed, c.xpassed);
    found.total() > 0 && key(found) == key(summary)
}
