//! One adapter per test runner behind one trait, [`RunnerAdapter`]: how to narrow its command,
//! how to ask it for per-test outcomes and read them back, its summary (`counts`), the part of
//! its output about failures (`excerpt`), and whose mistake a failure shows (`read_failure`).
//! [`Runner::adapter`] is the one place that maps a runner to its adapter; everything else asks
//! the adapter.

use std::path::Path;
use std::time::SystemTime;

use plumb_protocol::TestCounts;

use crate::failure::{FailureReading, TestPlaces};
use crate::results::TestResults;
use crate::{Runner, VerifyError};

pub(crate) mod cargo;
pub(crate) mod go;
mod go_failure;
pub(crate) mod jest;
mod js_failure;
pub(crate) mod jvm;
mod jvm_failure;
pub(crate) mod nextest;
pub(crate) mod npm;
pub(crate) mod pytest;
mod pytest_failure;
mod rust_failure;
mod wrapped;

/// A finished run of [`RunnerAdapter::with_report`]'s argv, as [`RunnerAdapter::results`] reads
/// it.
pub struct FinishedRun<'a> {
    /// The report path given to `with_report`.
    pub report_path: &'a Path,
    /// The project root: the folder above the report's folder.
    pub root: &'a Path,
    /// When the run started: a report older than this is not this run's.
    pub started: SystemTime,
    /// Stdout then stderr, colour codes removed.
    pub text: &'a str,
}

/// What plumb knows about one test runner. Nothing here runs a process: callers run the argv in
/// the sandbox and hand the output back.
pub trait RunnerAdapter: Sync {
    /// The runner this adapter is for.
    fn runner(&self) -> Runner;

    /// Whether [`RunnerAdapter::narrow`] can run single tests with this runner's commands.
    fn narrows(&self) -> bool {
        true
    }

    /// `argv` narrowed to `tests` (ids in the runner's own form, or paths); `tests` is never
    /// empty and already checked ([`crate::check_test_ids`]).
    fn narrow(&self, argv: &[String], tests: &[String]) -> Result<Vec<String>, VerifyError>;

    /// `tests` as this runner selects them, read from the tree at `root` where it must be (go
    /// selects by test name, so a test file becomes the tests it declares).
    fn named_tests(&self, _root: &Path, tests: &[String]) -> Vec<String> {
        tests.to_vec()
    }

    /// The argv that runs `argv` so that [`RunnerAdapter::results`] can read each test's outcome
    /// (see [`crate::with_report`]).
    fn with_report(&self, argv: &[String], report_path: &Path) -> Vec<String>;

    /// Variables that make the command print what [`RunnerAdapter::results`] reads, for a
    /// runner that cannot be asked through its argv.
    fn report_env(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Whether [`RunnerAdapter::results`] can give per-test outcomes (see
    /// [`Runner::reports_per_test`]).
    fn reports_per_test(&self) -> bool {
        true
    }

    /// The per-test outcomes of a finished run; `None` means the suite never ran (see
    /// [`crate::read_results`]).
    fn results(&self, run: &FinishedRun<'_>) -> Option<TestResults>;

    /// Counts from the runner's summary (colour codes removed); `None` when there is none.
    fn counts(&self, text: &str) -> Option<TestCounts>;

    /// The part of the output worth showing the model about failures (colour codes removed).
    fn excerpt(&self, stdout: &str, stderr: &str) -> String;

    /// Whose mistake the failures in `excerpt` (this runner's [`RunnerAdapter::excerpt`]) show;
    /// `places` tells test code from the code under test where the output points at a file.
    fn read_failure(&self, excerpt: &str, places: &dyn TestPlaces) -> FailureReading;

    /// A test id of this runner's form, for the model's tool descriptions; `None` when the
    /// runner cannot run single tests.
    fn test_id_example(&self) -> Option<&'static str>;
}

impl Runner {
    /// This runner's adapter.
    pub fn adapter(self) -> &'static dyn RunnerAdapter {
        match self {
            Runner::Pytest => &pytest::Pytest,
            Runner::Cargo => &cargo::Libtest,
            Runner::Nextest => &nextest::Nextest,
            Runner::Go => &go::GoTest,
            Runner::Npm => &npm::NodeScript,
            Runner::Jest => &jest::JEST,
            Runner::Vitest => &jest::VITEST,
            Runner::Maven => &jvm::MAVEN,
            Runner::Gradle => &jvm::GRADLE,
            Runner::Other => &wrapped::Wrapped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every runner's adapter is its own: `adapter().runner()` gives the runner back.
    #[test]
    fn each_runner_has_its_adapter() {
        let all = [
            Runner::Pytest,
            Runner::Cargo,
            Runner::Nextest,
            Runner::Go,
            Runner::Npm,
            Runner::Jest,
            Runner::Vitest,
            Runner::Maven,
            Runner::Gradle,
            Runner::Other,
        ];
        for runner in all {
            assert_eq!(runner.adapter().runner(), runner);
        }
    }
}
