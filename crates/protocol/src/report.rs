//! How a run ends: its outcome, the check ladder's entries, test counts and the final report of
//! docs/contracts.md §6 (`plumb fix --json`, the API's task record, one row of `plumb eval`).

use serde::{Deserialize, Serialize};

use crate::{IgnoredSetting, Setting, Usage};

/// How a run ended. Only `Success` carries a verified patch; every other outcome rolled the workspace
/// back to the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model said `done` and every check the harness ran passed.
    Success,
    /// The round limit was reached.
    RoundLimit,
    /// A budget (tokens, USD, wall clock) ran out.
    BudgetExceeded,
    /// The same failed action came three times in a row.
    Stuck,
    /// A person or a signal cancelled the run.
    Cancelled,
    /// The model had nothing more to say (a script that ran out, a reply with no tool call).
    ModelStopped,
    /// The sandbox, git or the model service failed after retries.
    InfraError,
}

impl Outcome {
    /// The process exit code of docs/contracts.md §7 for this outcome.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Success => 0,
            Outcome::RoundLimit
            | Outcome::BudgetExceeded
            | Outcome::Stuck
            | Outcome::Cancelled
            | Outcome::ModelStopped => 1,
            Outcome::InfraError => 3,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::RoundLimit => "round_limit",
            Outcome::BudgetExceeded => "budget_exceeded",
            Outcome::Stuck => "stuck",
            Outcome::Cancelled => "cancelled",
            Outcome::ModelStopped => "model_stopped",
            Outcome::InfraError => "infra_error",
        }
    }
}

/// The steps of the check ladder (docs/contracts.md §5), cheapest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStep {
    Syntax,
    Tamper,
    Reproduce,
    Pass,
    FullSuite,
    Lint,
    Review,
    Approval,
}

impl CheckStep {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStep::Syntax => "syntax",
            CheckStep::Tamper => "tamper",
            CheckStep::Reproduce => "reproduce",
            CheckStep::Pass => "pass",
            CheckStep::FullSuite => "full_suite",
            CheckStep::Lint => "lint",
            CheckStep::Review => "review",
            CheckStep::Approval => "approval",
        }
    }
}

/// The status of one ladder step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    /// Passed, but a person must look (e.g. a test file was changed).
    Flagged,
    /// Not run in this version of plumb or not applicable; the evidence says why.
    NotRun,
}

/// One entry of the check ladder in the final report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    pub step: CheckStep,
    pub status: CheckStatus,
    pub evidence: String,
}

/// Counts from one test run. `collected` is what the runner said it found, when it says so.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCounts {
    pub passed: u32,
    pub failed: u32,
    pub skipped: u32,
    pub errors: u32,
    #[serde(default)]
    pub deselected: u32,
    #[serde(default)]
    pub xfailed: u32,
    #[serde(default)]
    pub xpassed: u32,
}

impl TestCounts {
    /// Every test the runner reported on, whatever its result.
    pub fn total(&self) -> u32 {
        self.passed + self.failed + self.skipped + self.errors + self.xfailed + self.xpassed
    }

    /// A one-line summary in pytest's words: "3 passed, 1 failed".
    pub fn summary(&self) -> String {
        let parts = [
            (self.failed, "failed"),
            (self.passed, "passed"),
            (self.skipped, "skipped"),
            (self.deselected, "deselected"),
            (self.xfailed, "xfailed"),
            (self.xpassed, "xpassed"),
            (self.errors, "errors"),
        ];
        let text: Vec<String> = parts
            .iter()
            .filter(|(count, _)| *count > 0)
            .map(|(count, word)| format!("{count} {word}"))
            .collect();
        if text.is_empty() {
            "no tests ran".to_string()
        } else {
            text.join(", ")
        }
    }
}

/// Which wall the agent's commands ran behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxKind {
    Bwrap,
    Gvisor,
    None,
}

impl SandboxKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxKind::Bwrap => "bwrap",
            SandboxKind::Gvisor => "gvisor",
            SandboxKind::None => "none",
        }
    }
}

/// Where the time of a run went, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    pub total_ms: u64,
    pub prepare_ms: u64,
    pub model_ms: u64,
    pub tools_ms: u64,
    /// Time spent inside test and other sandboxed commands (a part of `tools_ms` and of the checks).
    pub commands_ms: u64,
    pub checks_ms: u64,
}

/// The final report of a run (docs/contracts.md §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalReport {
    pub run_id: String,
    /// The repository as the user gave it.
    #[serde(default)]
    pub repo: String,
    /// The ticket's first line, for lists of runs.
    #[serde(default)]
    pub title: String,
    pub outcome: Outcome,
    pub rounds: u32,
    /// The verified patch (empty unless `outcome` is `success`).
    pub patch: String,
    pub patch_sha256: String,
    /// Path of the journal file.
    pub journal: String,
    pub checks: Vec<CheckReport>,
    pub flags: Vec<String>,
    /// The kind of each entry of `flags`, in the same order (a tamper kind such as `test_edited`,
    /// or `flaky_baseline`).
    #[serde(default)]
    pub flag_kinds: Vec<String>,
    /// The review of the verified change; `None` when no review ran (the run did not succeed,
    /// or `review.enabled` is off).
    #[serde(default)]
    pub review: Option<crate::Review>,
    /// Every review of the run in order, whatever its outcome: a run sent back by its reviewer
    /// and then out of rounds has one here and no `review`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviews: Vec<crate::ReviewStep>,
    pub usage: Usage,
    pub timings: Timings,
    /// The wall the commands ran behind.
    pub sandbox: SandboxKind,
    /// A sentence on why the run ended as it did.
    pub reason: String,
    /// Where the throwaway workspace and the shadow git directory are kept.
    pub workspace: String,
    /// The git ref holding the failed attempt, for a run that did not succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_ref: Option<String>,
    /// Every effective setting of the run and where it came from (default, the user's file, the
    /// repository's file, `-c`, a flag).
    #[serde(default)]
    pub settings: Vec<Setting>,
    /// Repository settings left out because they would loosen what the user's settings allow.
    #[serde(default)]
    pub ignored_settings: Vec<IgnoredSetting>,
    /// The small-model helpers: which were on for the run and why, and why the others were not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub helpers: Vec<crate::HelperState>,
}
