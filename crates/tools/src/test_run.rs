//! Running the project's test command in the sandbox and reading its counts. The `run_tests` tool,
//! the baseline run and the check at `done` all come through here, so they see the same numbers.

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
}

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
        format!("`{}`: {}", self.argv.join(" "), self.result(None))
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

    /// The whole text for the model: the headline, then failures or the output's tail.
    pub fn render(&self) -> String {
        if self.excerpt.trim().is_empty() || self.all_passed() {
            self.headline()
        } else {
            format!("{}\n\n{}", self.headline(), self.excerpt.trim_end())
        }
    }
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
    let argv = if tests.is_empty() {
        cmd.argv.clone()
    } else {
        plumb_verify::narrow(cmd, tests).map_err(|err| ToolError::respond(err.to_string()))?
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
        env: Vec::new(),
        limits,
        // The agent's commands never get the network.
        network: Network::Off,
    };
    let started = SystemTime::now();
    let output = sandbox.run(&spec, cancel).await.map_err(|err| {
        ToolError::Infra(format!(
            "could not run the test command `{}`: {err}",
            argv.join(" ")
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
    let excerpt = plumb_verify::failure_excerpt(cmd.runner, &output.stdout, &output.stderr);
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
    })
}
