//! plumb-verify: the test adapters the check ladder (docs/contracts.md §5) and the `run_tests` tool
//! stand on.
//!
//! It knows, per runner: how to find the project's test command ([`detect`]) or read the user's
//! ([`parse_command`]), how to narrow it to some tests ([`narrow`]), how many tests passed,
//! failed, were skipped… ([`parse_counts`]), which part of the output explains the failures
//! ([`failure_excerpt`]), and each test's own outcome ([`with_report`] to run it so that they can
//! be read, [`read_results`] after the run), and whose mistake a failure shows ([`read_failure`]:
//! the test's own, the code's, or an assertion about the code's answer). Each runner is one
//! implementation of [`RunnerAdapter`] in its own module under `runners/`; [`Runner::adapter`]
//! is the one place that picks it.
//!
//! Nothing here runs a process: callers run `TestCommand::argv` in the sandbox and hand the output
//! back. No shell is ever involved, so no user or model text is ever a shell word.

// Unit tests read their own fixtures; the library itself reads workspace files only through
// plumb_workspace::Tree (clippy.toml's disallowed-methods, checked on the non-test build).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod baseline_config;
mod command;
mod detect;
mod failure;
mod junit;
pub mod lint;
mod output;
mod results;
mod runners;
pub mod tamper;
mod test_files;

use plumb_protocol::TestCounts;
use serde::{Deserialize, Serialize};

pub use command::{
    MAX_TEST_ID_CHARS, MAX_TEST_IDS_CHARS, check_test_ids, narrow, parse_command, shown_id,
};
pub use detect::detect;
pub use failure::{FailureKind, FailureReading, Place, TestFileNames, TestPlaces};
pub use results::{TestOutcome, TestResults, read_results, report_env, with_report};
pub use runners::{FinishedRun, RunnerAdapter};
pub use test_files::named_tests;

/// The test runners plumb understands. `Other` is any command it does not recognise: its output
/// is still searched for every summary format plumb knows, but it cannot be narrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Runner {
    Pytest,
    Cargo,
    /// `cargo nextest run`.
    Nextest,
    Go,
    /// `npm test` and friends when plumb cannot tell which runner is behind them: mocha,
    /// `node --test`, or a script that does more than run one runner.
    Npm,
    /// jest, called directly or as the whole `test` script of package.json.
    Jest,
    /// vitest, called directly or as the whole `test` script of package.json.
    Vitest,
    /// `mvn test` (Surefire).
    Maven,
    /// `gradle test`.
    Gradle,
    Other,
}

impl Runner {
    pub fn as_str(self) -> &'static str {
        match self {
            Runner::Pytest => "pytest",
            Runner::Cargo => "cargo",
            Runner::Nextest => "nextest",
            Runner::Go => "go",
            Runner::Npm => "npm",
            Runner::Jest => "jest",
            Runner::Vitest => "vitest",
            Runner::Maven => "maven",
            Runner::Gradle => "gradle",
            Runner::Other => "other",
        }
    }
}

/// A test command as argv (run without a shell) and the runner whose output it prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCommand {
    pub argv: Vec<String>,
    pub runner: Runner,
}

impl TestCommand {
    /// The command as a person would type it, quoted where needed; for messages only.
    pub fn display(&self) -> String {
        shell_words::join(&self.argv)
    }
}

/// Bad input to this crate. Each message is a sentence naming the input and what to change; the
/// test-id errors are shown to the model, the command errors to the person who gave the command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    #[error("the test command is empty; give one, for example --test-cmd \"python -m pytest -q\".")]
    EmptyCommand,
    #[error("the test command `{text}` cannot be split into words ({reason}); check its quotes.")]
    BadQuoting { text: String, reason: String },
    #[error(
        "the test command `{text}` uses shell syntax (`{token}`), but plumb runs a single command \
         without a shell; give one command, or put the steps in a script and give the script."
    )]
    ShellSyntax { text: String, token: String },
    #[error(
        "the test command `{text}` starts with the variable setting `{token}`, which needs a shell; \
         write `env {token} …` instead."
    )]
    VariableSetting { text: String, token: String },
    #[error("one of the test ids is empty; give test names or paths.")]
    EmptyTestId,
    /// `id` is the id as [`shown_id`] shows it, as in every variant below.
    #[error(
        "the test id `{id}` starts with '-', so the test runner would read it as an option; \
         give a test name or a path such as tests/test_x.py::test_y."
    )]
    OptionLikeTestId { id: String },
    #[error(
        "the test id `{id}` holds a control character (a NUL byte, a line break, …), which no \
         test runner takes; give a test name or a path such as tests/test_x.py::test_y."
    )]
    ControlInTestId { id: String },
    #[error(
        "the test id `{id}` is {chars} characters long, more than the {max} a test id may have; \
         give a test name or a path such as tests/test_x.py::test_y."
    )]
    TestIdTooLong {
        id: String,
        chars: usize,
        max: usize,
    },
    #[error(
        "the {count} test ids are {chars} characters in all, more than the {max} one run may \
         take; give fewer (a file or folder runs all its tests), or run the whole suite \
         (run_tests without `tests`)."
    )]
    TooManyTestIds {
        count: usize,
        chars: usize,
        max: usize,
    },
    #[error(
        "plumb does not know how to run single tests with `{command}`; run the whole suite \
         (run_tests without `tests`)."
    )]
    CannotNarrow { command: String },
}

/// Counts from the runner's output; `None` when no summary is found, which the caller treats as
/// "the suite never ran". A summary of zero tests ("no tests ran") is `Some` with every count 0.
/// `Other` searches the output for every summary format plumb knows.
pub fn parse_counts(runner: Runner, stdout: &str, stderr: &str) -> Option<TestCounts> {
    runner.adapter().counts(&output::joined(stdout, stderr))
}

/// The part of the output worth showing the model about failures: for pytest the ERRORS and
/// FAILURES sections, the short test summary and the final line; for cargo the failure blocks; for
/// go the output without the passing lines; otherwise the last lines (for `Other`, the pytest or
/// cargo excerpt when its output has their summary). Colour codes and progress
/// lines are removed; the caller still shortens the result for the model.
pub fn failure_excerpt(runner: Runner, stdout: &str, stderr: &str) -> String {
    let stdout = output::strip_ansi(stdout);
    let stderr = output::strip_ansi(stderr);
    runner.adapter().excerpt(&stdout, &stderr)
}

/// Whose mistake the failures in `excerpt` ([`failure_excerpt`]'s text) show, read the way
/// `runner` prints them (see [`RunnerAdapter::read_failure`]).
pub fn read_failure(runner: Runner, excerpt: &str, places: &dyn TestPlaces) -> FailureReading {
    runner.adapter().read_failure(excerpt, places)
}
