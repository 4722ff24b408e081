//! The MCP tools' arguments and results: serde types whose JSON schemas (`schemars`) are the tools'
//! input and output schemas, so what a client validates against is what the server parses.
//!
//! A caller's arguments are untrusted, like a repository's settings: every argument struct
//! refuses fields it does not know (`additionalProperties: false`), so a request that tries to set
//! something plumb never takes from a caller — the sandbox, a host folder, approval — is refused
//! with the field's name, never silently ignored.

use plumb_protocol::{CheckReport, FinalReport, Outcome, Review};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `coding_task`'s arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodingTaskArgs {
    /// The repository to fix: the path of a local folder inside the folders the user lets this
    /// server take (`mcp.allowed_roots`). plumb works on a throwaway copy and never writes it.
    pub repo: String,
    /// The ticket: what is wrong or what should change, in words. Sent whole to the model.
    pub ticket: String,
    /// A model spec (`local`, `openai:MODEL`, `anthropic:MODEL`, `ollama:MODEL`, …); the user's
    /// `model` setting when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The most rounds the run may take. The user's `limits.max_rounds` wins when it is lower.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_rounds: Option<u32>,
    /// A budget for the whole run; each figure counts only where it is tighter than the user's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// The project's test command (one line, e.g. `python -m pytest -q`), when plumb cannot tell
    /// it from the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_command: Option<String>,
}

/// A run's budget, each part optional; a caller can only lower the user's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Wall-clock seconds for the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub seconds: Option<u64>,
    /// Tokens (prompts and replies together) for the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub tokens: Option<u64>,
    /// Estimated cost in US dollars for the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
}

/// The argument of the tools about one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// The run's id, as `coding_task` or `runs_list` gave it (e.g. `r19a2b3c4d5e-0a1b2c`; a
    /// `plumb serve` task id, `t…`, when this server hands its tasks to one).
    pub run: String,
}

/// `runs_list`'s arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunsListArgs {
    /// The newest this many runs (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
}

/// What `coding_task` hands back: the outcome, the check ladder's evidence, the review, and the
/// verified diff with its SHA-256 — held for a person, who applies it with `apply_command`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskResult {
    pub run_id: String,
    /// `success` (a verified patch), `round_limit`, `budget_exceeded`, `stuck`, `cancelled`,
    /// `model_stopped`, `infra_error`.
    pub outcome: String,
    /// Whether the diff passed every check of the ladder.
    pub verified: bool,
    /// Why the run ended as it did, in a sentence.
    pub reason: String,
    pub rounds: u32,
    /// One entry per step of the check ladder that ran.
    pub checks: Vec<CheckEntry>,
    /// The review of the verified change, when one ran.
    pub review: Option<ReviewEntry>,
    /// What a person must look at before approving (tampered tests, a flaky baseline, …).
    pub flags: Vec<String>,
    /// The verified diff (empty unless `verified`).
    pub patch: String,
    /// The diff's SHA-256: a person's approval names it.
    pub patch_sha256: String,
    /// The command a person runs to apply the diff after reading it; `null` without a verified diff.
    pub apply_command: Option<String>,
    /// Always true: no tool of this server applies or approves a change.
    pub needs_confirmation: bool,
    pub usage: UsageEntry,
}

/// One step of the check ladder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckEntry {
    /// `syntax`, `tamper`, `reproduce`, `pass`, `full_suite`, `lint`, `review`, `approval`.
    pub step: String,
    /// `passed`, `failed`, `skipped`, `flagged`, ….
    pub status: String,
    pub evidence: String,
}

/// The reviewer's read of the verified change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReviewEntry {
    pub reviewer: String,
    /// `approve`, `request_changes`, `needs_attention`, `not_reviewed`, ….
    pub verdict: String,
    pub summary: String,
    /// The reviewer's notes, `path:line: note`.
    pub notes: Vec<String>,
    /// Why a person must look whatever the reviewer said.
    pub attention: Vec<String>,
}

/// Tokens and estimated cost of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UsageEntry {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub usd: f64,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Started by this server and not ended yet.
    Running,
    /// Ended; its report is in the run folder.
    Finished,
}

/// `coding_task_status`'s answer, and a row of `runs_list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunStatus {
    pub run_id: String,
    pub state: RunState,
    /// The repository as the run was given it.
    pub repo: String,
    /// The ticket's first line.
    pub title: String,
    /// The latest round (running) or the number of rounds (finished).
    pub rounds: u32,
    /// The last thing the run did, in a line (running), or why it ended (finished).
    pub message: String,
    /// The outcome, once finished.
    pub outcome: Option<String>,
    /// The verified diff's SHA-256, once finished with one.
    pub patch_sha256: Option<String>,
}

/// `coding_task_diff`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunDiff {
    pub run_id: String,
    pub outcome: String,
    /// `verified_patch` (the diff a person may apply), `failed_attempt` (what a run that rolled
    /// back had changed, for reading only) or `none`.
    pub kind: DiffKind,
    pub patch: String,
    /// The verified diff's SHA-256 (empty for a failed attempt).
    pub patch_sha256: String,
    pub apply_command: Option<String>,
}

/// Which diff [`RunDiff`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiffKind {
    VerifiedPatch,
    FailedAttempt,
    None,
}

/// `coding_task_cancel`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CancelAnswer {
    pub run_id: String,
    /// Whether a running run was told to stop (it then ends `cancelled`, rolled back).
    pub cancelled: bool,
    pub message: String,
}

/// `runs_list`'s answer, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunsList {
    pub runs: Vec<RunStatus>,
}

/// The command that applies a verified diff, the person's approval being the SHA-256 they give.
pub fn apply_command(run_id: &str, sha256: &str) -> String {
    format!("plumb apply {run_id} --sha {sha256}")
}

impl TaskResult {
    /// The tool's view of a run's final report.
    pub fn from_report(report: &FinalReport) -> Self {
        let verified = report.outcome == Outcome::Success && !report.patch_sha256.is_empty();
        Self {
            run_id: report.run_id.clone(),
            outcome: report.outcome.as_str().to_owned(),
            verified,
            reason: report.reason.clone(),
            rounds: report.rounds,
            checks: report.checks.iter().map(CheckEntry::from_report).collect(),
            review: report.review.as_ref().map(ReviewEntry::from_review),
            flags: report.flags.clone(),
            patch: if verified {
                report.patch.clone()
            } else {
                String::new()
            },
            patch_sha256: if verified {
                report.patch_sha256.clone()
            } else {
                String::new()
            },
            apply_command: verified.then(|| apply_command(&report.run_id, &report.patch_sha256)),
            needs_confirmation: true,
            usage: UsageEntry {
                input_tokens: report.usage.input_tokens,
                output_tokens: report.usage.output_tokens,
                usd: report.usage.usd,
            },
        }
    }

    /// A run that ended without a report (a task the server cancelled or failed before its run
    /// started): the outcome and why, nothing else.
    pub fn without_report(run_id: &str, outcome: &str, reason: &str, rounds: u32) -> Self {
        Self {
            run_id: run_id.to_owned(),
            outcome: outcome.to_owned(),
            verified: false,
            reason: reason.to_owned(),
            rounds,
            checks: Vec::new(),
            review: None,
            flags: Vec::new(),
            patch: String::new(),
            patch_sha256: String::new(),
            apply_command: None,
            needs_confirmation: true,
            usage: UsageEntry {
                input_tokens: 0,
                output_tokens: 0,
                usd: 0.0,
            },
        }
    }

    /// The text content beside the structured result, for clients that show only text.
    pub fn summary(&self) -> String {
        let mut lines = vec![format!(
            "run {}: {} after {} rounds — {}",
            self.run_id, self.outcome, self.rounds, self.reason
        )];
        for check in &self.checks {
            lines.push(format!(
                "  {} {}: {}",
                check.step, check.status, check.evidence
            ));
        }
        if let Some(review) = &self.review {
            lines.push(format!(
                "review ({}): {} — {}",
                review.reviewer, review.verdict, review.summary
            ));
        }
        match &self.apply_command {
            Some(command) => {
                lines.push(format!(
                    "a verified diff, SHA-256 {}; nothing is applied: a person reads it and runs `{command}`",
                    self.patch_sha256
                ));
                lines.push(self.patch.clone());
            }
            None => lines.push("no verified diff; the caller's repository is as it was".into()),
        }
        lines.join("\n")
    }
}

impl CheckEntry {
    fn from_report(check: &CheckReport) -> Self {
        Self {
            step: check.step.as_str().to_owned(),
            status: wire_name(&check.status),
            evidence: check.evidence.clone(),
        }
    }
}

impl ReviewEntry {
    fn from_review(review: &Review) -> Self {
        Self {
            reviewer: review.reviewer.clone(),
            verdict: review.verdict.as_str().to_owned(),
            summary: review.summary.clone(),
            notes: review.notes.iter().map(|note| note.sentence()).collect(),
            attention: review.attention.clone(),
        }
    }
}

impl RunStatus {
    /// A finished run's status, from its report.
    pub fn finished(report: &FinalReport) -> Self {
        Self {
            run_id: report.run_id.clone(),
            state: RunState::Finished,
            repo: report.repo.clone(),
            title: report.title.clone(),
            rounds: report.rounds,
            message: report.reason.clone(),
            outcome: Some(report.outcome.as_str().to_owned()),
            patch_sha256: (report.outcome == Outcome::Success && !report.patch_sha256.is_empty())
                .then(|| report.patch_sha256.clone()),
        }
    }
}

/// A unit enum's name on the wire (`"passed"`), as serde writes it.
fn wire_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}
