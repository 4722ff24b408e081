//! What one attempt at one task leaves behind: `OUT/<task>/attempt-<n>/result.json`. The runner
//! writes it last (so a folder without it is an attempt that did not finish, and is run again),
//! and the report reads nothing else.

use plumb_protocol::{Outcome, ReviewStep, Timings, Usage};
use serde::{Deserialize, Serialize};

/// Schema version of `result.json`.
pub const RESULT_VERSION: u32 = 1;

/// One attempt: plumb's run, then the score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptResult {
    pub v: u32,
    pub instance_id: String,
    /// 1-based; `-k 3` makes attempts 1, 2 and 3.
    pub attempt: u32,
    pub language: Option<String>,
    /// The model spec the attempt ran with (`oracle` for the oracle).
    pub model: String,
    pub status: AttemptStatus,
    /// The run's outcome (plumb's own verdict: `success` means the ladder verified the patch).
    /// `None` when the attempt ended before the run did (an infrastructure error).
    pub outcome: Option<Outcome>,
    /// The run's sentence on why it ended as it did.
    pub reason: String,
    /// The patch plumb delivered (empty unless `outcome` is `success`); what was scored.
    pub patch: String,
    pub patch_sha256: String,
    /// The score, when there was something to score (`None` for an infrastructure error).
    pub score: Option<Score>,
    /// For a run that ended without a verified patch: the score of the change it left (kept as
    /// the attempt's ref), as SWE-bench would have scored it had plumb handed it over. It says
    /// whether plumb's ladder held back a fix (or rightly stopped a gamed one); it never counts
    /// as resolved. Its files are under `unverified/score/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unverified_score: Option<Score>,
    pub rounds: u32,
    pub usage: Usage,
    /// Where the run's time went (model, tools, sandboxed commands, checks), from its report;
    /// absent in results written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
    /// Wall time of the whole attempt (environment, run and scoring), and its parts.
    pub wall_ms: u64,
    pub run_ms: u64,
    pub score_ms: u64,
    /// Tamper flags the ladder raised.
    pub flags: Vec<String>,
    /// The kind of each flag, in the same order (`test_edited`, `flaky_baseline`…).
    #[serde(default)]
    pub flag_kinds: Vec<String>,
    /// Every review of the run, in brief (none when review is off or no change was verified).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reviews: Vec<ReviewStep>,
    /// Where the run's own files are: journal, report.
    pub journal: String,
    pub run_dir: String,
}

impl AttemptResult {
    /// An attempt of `instance_id` with `model` that has not run yet: every count zero, no
    /// patch, no score, [`AttemptStatus::Finished`]. The runner fills it in as the attempt goes.
    pub fn empty(
        instance_id: &str,
        attempt: u32,
        language: Option<String>,
        model: String,
    ) -> AttemptResult {
        AttemptResult {
            v: RESULT_VERSION,
            instance_id: instance_id.to_owned(),
            attempt,
            language,
            model,
            status: AttemptStatus::Finished,
            outcome: None,
            reason: String::new(),
            patch: String::new(),
            patch_sha256: String::new(),
            score: None,
            unverified_score: None,
            rounds: 0,
            usage: Usage::default(),
            timings: None,
            wall_ms: 0,
            run_ms: 0,
            score_ms: 0,
            flags: Vec::new(),
            flag_kinds: Vec::new(),
            reviews: Vec::new(),
            journal: String::new(),
            run_dir: String::new(),
        }
    }
}

/// Whether the attempt produced a result that counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum AttemptStatus {
    /// The run ended and the patch (possibly empty) was scored.
    Finished,
    /// The sandbox, git, the disk or the model service failed: this attempt says nothing about
    /// the model, is never counted as unresolved, and `--retry-errors` runs it again.
    InfraError { message: String },
    /// The task itself cannot be run as written (its tree, its setup or its test command); it
    /// needs fixing in the set, not another try.
    BadTask { message: String },
}

/// SWE-bench's verdict on one patch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Score {
    /// Every FAIL_TO_PASS and PASS_TO_PASS test passed.
    pub resolved: bool,
    /// The patch was empty (SWE-bench's `empty_patch_ids`).
    pub empty_patch: bool,
    /// The agent's patch and then the test patch applied.
    pub applied: bool,
    /// A sentence: "resolved", "2 of 3 FAIL_TO_PASS tests failed: …", "the test patch does not
    /// apply on top of the patch: …".
    pub reason: String,
    pub tests: Vec<TestResult>,
    /// The scoring test run's log, relative to the attempt folder.
    pub log: String,
}

/// One named test's outcome in the scoring run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    pub id: String,
    pub group: TestGroup,
    pub status: TestStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TestGroup {
    FailToPass,
    PassToPass,
}

/// As SWE-bench counts them, only `Passed` (and `XFail`, which its parsers map to passed) is a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Passed,
    Failed,
    Error,
    Skipped,
    /// Not in the log at all.
    Missing,
}

impl AttemptResult {
    /// Resolved by the score (an attempt with no score is not resolved).
    pub fn resolved(&self) -> bool {
        self.score.as_ref().is_some_and(|s| s.resolved)
    }

    /// plumb's ladder verified the patch.
    pub fn verified(&self) -> bool {
        self.outcome == Some(Outcome::Success)
    }

    /// The attempt counts in the figures (it finished; infrastructure errors and bad tasks don't).
    pub fn counts(&self) -> bool {
        self.status == AttemptStatus::Finished
    }
}
