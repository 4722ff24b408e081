//! Running the project's test command in the sandbox and reading its counts. The `run_tests` tool,
//! the baseline run and the check at `done` all come through here, so they see the same numbers.
//!
//! Tests asked for by id run narrowed when the runner can be narrowed; a command plumb cannot
//! narrow (a script, `make test`, `sh -c …`) runs whole, and the run says so in its `note`. Ids no
//! runner can take (a NUL byte, 200,000 characters) are a sentence for the model, never a command.

use std::path::Path;
use std::time::{Duration, SystemTime};

use plumb_config::Config;
use plumb_protocol::TestCounts;
use plumb_sandbox::{CommandSpec, Limits, Network, Sandbox};
use plumb_verify::{TestCommand, TestResults};
use tokio_util::sync::CancellationToken;

use crate::ToolError;

/// Where, inside the folder a test command runs in, the runner writes its per-test report.
pub const REPORT_DIR: &str = ".plumb-report";

/// One run of the test command.
#[derive(Debug, Clone, PartialEq)]
pub struct TestRun {
    pub argv: Vec<String>,
    /// `None` when no summary was found: the suite may never have run.
    pub counts: Option<TestCounts>,
    /// Per-test outcomes, when the runner reported them (`None` also when its report is missing or
    /// older than the run: a run that never ran must not look like a pass).
    pub results: Option<TestResults>,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration: Duration,
    /// The part of the output about failures (or the tail when there is no summary).
    pub excerpt: String,
    /// Sandbox limits the command ran into ("memory", "processes", "timeout", …).
    pub limits_hit: Vec<String>,
    /// Set when tests were asked for but the whole suite ran, because plumb cannot narrow the
    /// command: one sentence saying so, shown to the model above the results.
    pub note: Option<String>,
}

/// How many characters of the command a headline shows: a narrowed command holds the ids the
/// model gave, which must not be copied unbounded into every answer, check and report.
const HEADLINE_COMMAND_CHARS: usize = 300;

impl TestRun {
    /// True when the runner reported tests and none failed or errored, and its exit code agrees.
    pub fn all_passed(&self) -> bool {
        match self.counts {
            Some(c) => {
                c.failed == 0
                    && c.errors == 0
                    && c.passed > 0
                    && self.exit_code == Some(0)
                    && !self.timed_out
            }
            None => false,
        }
    }

    /// The first line of what the model sees: the command and its result, without the time it
    /// took ("1 failed (exit 1)"). The time tells the model nothing and differs from run to run:
    /// with it, two runs of one seed saw different prompts, so a seed was no replay.
    pub fn headline(&self) -> String {
        format!("`{}`: {}", shown_command(&self.argv), self.result(None))
    }

    /// The result without the command, for people: "1 failed (exit 1, 0.23 s)".
    pub fn result_line(&self) -> String {
        self.result(Some(self.duration.as_secs_f64()))
    }

    /// The result, with the seconds the run took when given.
    fn result(&self, seconds: Option<f64>) -> String {
        let exit = match self.exit_code {
            Some(code) => format!("exit {code}"),
            None => "killed".to_string(),
        };
        let result = match (self.counts, self.timed_out, self.cancelled) {
            (_, true, _) => "stopped at the time limit".to_string(),
            (_, _, true) => "cancelled".to_string(),
            (Some(counts), _, _) => counts.summary(),
            (None, _, _) => {
                "no test summary found in the output: the tests may not have run".to_string()
            }
        };
        let took = seconds.map_or_else(String::new, |seconds| format!(", {seconds:.2} s"));
        if self.limits_hit.is_empty() {
            format!("{result} ({exit}{took})")
        } else {
            let hit = self.limits_hit.join(", ");
            format!("{result} ({exit}{took}; stopped by the sandbox's {hit} limit)")
        }
    }

    /// The whole text for the model: the note (if any), the headline, then failures or the
    /// output's tail.
    pub fn render(&self) -> String {
        let note = self
            .note
            .as_ref()
            .map_or_else(String::new, |note| format!("{note}\n"));
        if self.excerpt.trim().is_empty() || self.all_passed() {
            format!("{note}{}", self.headline())
        } else {
            format!("{note}{}\n\n{}", self.headline(), self.excerpt.trim_end())
        }
    }
}

/// `argv` joined with spaces, cut after [`HEADLINE_COMMAND_CHARS`] characters.
fn shown_command(argv: &[String]) -> String {
    cut(argv.join(" "))
}

/// `text` cut after [`HEADLINE_COMMAND_CHARS`] characters with `…`.
fn cut(text: String) -> String {
    match text.char_indices().nth(HEADLINE_COMMAND_CHARS) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or_default()),
        None => text,
    }
}

/// The note of a run asked for some tests that ran the whole suite instead.
fn whole_suite_note(cmd: &TestCommand) -> String {
    format!(
        "plumb cannot run single tests with `{}`, so it ran the whole suite.",
        cut(cmd.display())
    )
}

/// The sandbox limits from the settings.
pub fn sandbox_limits(config: &Config) -> Limits {
    Limits {
        timeout: Duration::from_secs(config.limits.command_timeout_secs.max(1)),
        memory_bytes: config.limits.memory_mb.saturating_mul(1024 * 1024),
        cpus: config.limits.cpus.max(1),
        ..Limits::default()
    }
}

/// Runs `cmd` (narrowed to `tests` when any are given) in `workdir` inside the sandbox.
pub async fn run_test_command(
    sandbox: &dyn Sandbox,
    workdir: &Path,
    cmd: &TestCommand,
    tests: &[String],
    limits: Limits,
    cancel: &CancellationToken,
) -> Result<TestRun, ToolError> {
    let (argv, note) = if tests.is_empty() {
        (cmd.argv.clone(), None)
    } else if !cmd.runner.narrows() {
        // The ids are not used, but a note naming one must not be a command; checked all the same.
        plumb_verify::check_test_ids(tests).map_err(|err| ToolError::respond(err.to_string()))?;
        (cmd.argv.clone(), Some(whole_suite_note(cmd)))
    } else {
        // go selects tests by name only: a test file asked for becomes the tests it declares.
        let tests = plumb_verify::named_tests(cmd.runner, workdir, tests);
        let argv =
            plumb_verify::narrow(cmd, &tests).map_err(|err| ToolError::respond(err.to_string()))?;
        (argv, None)
    };
    // The runner writes its per-test report inside the workdir (the only place the sandbox lets it
    // write); the folder is in the shadow git's exclude list and removed afterwards.
    let report_dir = workdir.join(REPORT_DIR);
    let report_path = report_dir.join("results");
    let _ = std::fs::remove_dir_all(&report_dir);
    std::fs::create_dir_all(&report_dir).map_err(|err| {
        ToolError::Infra(format!("could not create {}: {err}", report_dir.display()))
    })?;
    let narrowed = TestCommand {
        argv: argv.clone(),
        runner: cmd.runner,
    };
    let spec = CommandSpec {
        argv: plumb_verify::with_report(&narrowed, &report_path),
        workdir: workdir.to_path_buf(),
        env: plumb_verify::report_env(&narrowed),
        limits,
        // The agent's commands never get the network.
        network: Network::Off,
    };
    let started = SystemTime::now();
    let output = sandbox.run(&spec, cancel).await.map_err(|err| {
        ToolError::Infra(format!(
            "could not run the test command `{}`: {err}",
            shown_command(&argv)
        ))
    });
    let results = output.as_ref().ok().and_then(|out| {
        plumb_verify::read_results(&narrowed, &report_path, started, &out.stdout, &out.stderr)
    });
    let _ = std::fs::remove_dir_all(&report_dir);
    let output = output?;
    let counts = results
        .as_ref()
        .map(|r| r.counts)
        .or_else(|| plumb_verify::parse_counts(cmd.runner, &output.stdout, &output.stderr));
    let excerpt = crate::workdir_paths::relative_to_workdir(
        &plumb_verify::failure_excerpt(cmd.runner, &output.stdout, &output.stderr),
        workdir,
    );
    Ok(TestRun {
        argv,
        counts,
        results,
        exit_code: output.exit_code,
        timed_out: output.timed_out,
        cancelled: output.cancelled,
        duration: output.duration,
        excerpt,
        limits_hit: output.limits_hit,
        note,
    })
}

#[cfg(test)]
mod tests {
    use plumb_verify::Runner;
    use pretty_assertions::assert_eq;

    use super::*;

    fn run(argv: Vec<String>, note: Option<String>) -> TestRun {
        TestRun {
            argv,
            counts: Some(TestCounts {
                passed: 3,
                ..TestCounts::default()
            }),
            results: None,
            exit_code: Some(0),
            timed_out: false,
            cancelled: false,
            duration: Duration::from_millis(10),
            excerpt: String::new(),
            limits_hit: Vec::new(),
            note,
        }
    }

    #[test]
    fn a_whole_suite_run_says_so_and_a_long_command_is_cut() {
        let wrapped = TestCommand {
            argv: ["sh", "-c", "python3 -m pytest -q"]
                .map(String::from)
                .to_vec(),
            runner: Runner::Other,
        };
        let long = vec!["pytest".to_string(), "t".repeat(5_000)];
        let actual = [
            run(wrapped.argv.clone(), Some(whole_suite_note(&wrapped))).render(),
            run(long, None).render(),
        ];
        let expected = [
            "plumb cannot run single tests with `sh -c 'python3 -m pytest -q'`, so it ran the whole suite.\n`sh -c python3 -m pytest -q`: 3 passed (exit 0)".to_string(),
            format!("`pytest {}…`: 3 passed (exit 0)", "t".repeat(293)),
        ];
        assert_eq!(actual, expected);
    }
}
