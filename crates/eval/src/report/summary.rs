//! What `OUT/summary.json` holds ([`Summary`]): the figures of a run, one row per task, and
//! SWE-bench's id lists with the meaning `make_run_report` gives them. [`crate::report::summarize`]
//! computes it; this file only defines and writes it.
//!
//! The classes of a task (one per task, from its *representative* attempt: the first resolved
//! one, else the first that finished, else the first):
//! - `resolved` / `unresolved`: the patch was scored (SWE-bench's `completed_ids`);
//! - `empty_patch`: the attempt finished with nothing to score; as in SWE-bench it is neither
//!   completed nor unresolved, yet counts against resolved % (plumb delivers a patch only when
//!   the ladder verified it, so a run that ran out of rounds lands here);
//! - `error`: no attempt finished because the infrastructure failed (`--retry-errors` runs it
//!   again); never unresolved;
//! - `bad_task`: the task cannot run as written; listed apart, to be fixed in the set.

use std::collections::BTreeMap;
use std::path::Path;

use plumb_protocol::Outcome;
use serde::{Deserialize, Serialize};

use super::{ReportError, write_atomic};

/// Schema version of `summary.json`.
pub const SUMMARY_VERSION: u32 = 1;

/// What made the run, as the runner knows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryMeta {
    pub tasks_file: String,
    pub model: String,
    pub k: u32,
    /// Tasks in the set (after `--filter`); the denominator of resolved %.
    pub total_tasks: usize,
    /// The command line that made the run.
    pub command: String,
    /// The `-c key=value` overrides.
    pub settings: Vec<String>,
}

/// `OUT/summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub v: u32,
    pub meta: SummaryMeta,
    /// `meta.total_tasks`, or the tasks found when more were run.
    pub total_instances: usize,
    pub submitted_instances: usize,
    pub completed_instances: usize,
    pub resolved_instances: usize,
    pub unresolved_instances: usize,
    pub empty_patch_instances: usize,
    pub error_instances: usize,
    pub bad_task_instances: usize,
    /// Tasks of the set with no finished attempt folder yet.
    pub incomplete_instances: usize,
    /// Resolved tasks (some attempt resolved) per 100 tasks of the set.
    pub resolved_pct: f64,
    /// Attempt 1, 2, … on its own: with `-k 1` the same figure as above.
    pub per_attempt: Vec<AttemptTally>,
    /// pass@k' and pass^k' for every k' in 1..=k, by the unbiased estimators.
    pub pass_at: Vec<PassAt>,
    /// The ADR's reliability figure: tasks whose k attempts all resolved.
    pub all_resolved: AllResolved,
    pub totals: Totals,
    pub flags: FlagTally,
    /// The reviewer's verdicts on the verified changes; empty for runs with review off (and
    /// summaries written before the review step).
    #[serde(default)]
    pub reviews: ReviewTally,
    pub disagreements: Disagreements,
    /// By the tasks' `language`; tasks without one are in no entry.
    pub languages: BTreeMap<String, LanguageTally>,
    pub submitted_ids: Vec<String>,
    pub completed_ids: Vec<String>,
    pub resolved_ids: Vec<String>,
    pub unresolved_ids: Vec<String>,
    pub empty_patch_ids: Vec<String>,
    pub error_ids: Vec<String>,
    pub bad_task_ids: Vec<String>,
    /// Every attempt that ended in an infrastructure error or as a bad task, with its message.
    pub errors: Vec<AttemptError>,
    pub tasks: Vec<TaskRow>,
}

/// One attempt number across the tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptTally {
    pub attempt: u32,
    /// Tasks that have this attempt, finished or not.
    pub tasks: usize,
    pub finished: usize,
    pub errors: usize,
    pub resolved: usize,
    /// `resolved` per 100 tasks of the set.
    pub resolved_pct: f64,
}

/// The two estimators at one k, averaged over the tasks with at least k finished attempts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassAt {
    pub k: u32,
    /// Tasks in the average (fewer than all when attempts failed on the infrastructure).
    pub tasks: usize,
    pub pass_at_k: Option<f64>,
    pub pass_hat_k: Option<f64>,
}

/// Tasks whose k attempts all finished and all resolved, of the tasks with k finished attempts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllResolved {
    pub k: u32,
    pub tasks: usize,
    pub resolved: usize,
    pub fraction: Option<f64>,
}

/// Sums and medians over the attempts (medians over the finished ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub attempts: usize,
    pub finished_attempts: usize,
    pub median_rounds: Option<f64>,
    /// Median over finished attempts with a round of `run_ms / rounds`.
    pub median_seconds_per_round: Option<f64>,
    /// Where a round's time and tokens go: medians over finished attempts with a round (and,
    /// for the times, a report that kept its timings) of each attempt's per-round mean.
    #[serde(default)]
    pub round_split: RoundSplit,
    pub median_wall_seconds: Option<f64>,
    pub wall_seconds: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    /// Estimated USD of every attempt, errors included (they were paid for too).
    pub usd: f64,
    pub usd_per_task: Option<f64>,
    /// Some token counts were plumb's own count, not the provider's.
    pub usage_estimated: bool,
}

/// A round's parts, each the median over attempts of the attempt's per-round mean.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundSplit {
    /// Prompt tokens the model had to evaluate: sent, less those served from its prompt cache.
    pub new_prompt_tokens: Option<f64>,
    /// Tokens generated (every sampled reply counted).
    pub output_tokens: Option<f64>,
    /// Seconds waiting for the model.
    pub model_seconds: Option<f64>,
    /// Seconds inside sandboxed commands: the tests after edits, the helpers' runs, the checks.
    pub command_seconds: Option<f64>,
}

/// Tamper flags the ladder raised.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FlagTally {
    pub flags: usize,
    pub attempts: usize,
    /// By kind (`test_modified`, `skip_marker_added`, …) when the flag names one as its first
    /// word (`kind: detail`); `unclassified` otherwise.
    pub by_kind: BTreeMap<String, usize>,
    pub tasks: Vec<String>,
}

/// The reviews of a run's finished attempts: how often the reviewer rejected a change the ladder
/// had verified, what came of sending a run back, whether its last word agreed with SWE-bench's
/// score, and what a review cost. Counted by the reviewer's own answer (`model_verdict`); the
/// verdict a person saw is "needs attention" whenever a tamper flag, a cut diff or a missing
/// verdict forced it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReviewTally {
    /// Finished attempts with at least one review.
    pub attempts: usize,
    pub reviews: usize,
    pub approved: usize,
    pub requested_changes: usize,
    /// Reviews with no usable verdict.
    pub no_verdict: usize,
    /// Reviews a person saw as "needs attention".
    pub needs_attention: usize,
    /// Attempts whose first review requested changes, of `attempts`: how often the reviewer
    /// rejects a patch the ladder verified.
    pub first_rejected: usize,
    /// Attempts the reviewer sent back to the fixer, and how they ended: verified again (and
    /// delivered), and resolved by the score.
    pub sent_back: usize,
    pub sent_back_verified: usize,
    pub sent_back_resolved: usize,
    /// Delivered patches whose last review approved, and of those the resolved ones (the rest are
    /// approvals the score disagrees with).
    pub delivered_approved: usize,
    pub delivered_approved_resolved: usize,
    /// Delivered patches whose last review still requested changes, and of those the resolved
    /// ones (rejections the score disagrees with).
    pub delivered_rejected: usize,
    pub delivered_rejected_resolved: usize,
    /// Seconds waiting for a review: the median over reviews, and the sum.
    pub median_seconds: Option<f64>,
    pub seconds: f64,
}

/// Where plumb's ladder and SWE-bench's score disagree: a bug in one of the two.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Disagreements {
    pub verified_unresolved: Vec<Disagreement>,
    pub resolved_unverified: Vec<Disagreement>,
    /// The ladder held the change back, but scored as it was left it resolves the task: a fix
    /// plumb did not deliver (`unverified_score`).
    #[serde(default)]
    pub held_back_resolved: Vec<Disagreement>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disagreement {
    pub instance_id: String,
    pub attempt: u32,
    pub outcome: Option<Outcome>,
    /// The score's sentence.
    pub score_reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LanguageTally {
    pub tasks: usize,
    pub resolved: usize,
    /// Of this language's tasks that were run.
    pub resolved_pct: f64,
    pub pass_at_1: Option<f64>,
    pub usd: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptError {
    pub instance_id: String,
    pub attempt: u32,
    /// `infra_error` or `bad_task`.
    pub status: String,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskClass {
    Resolved,
    Unresolved,
    EmptyPatch,
    Error,
    BadTask,
}

impl TaskClass {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskClass::Resolved => "resolved",
            TaskClass::Unresolved => "unresolved",
            TaskClass::EmptyPatch => "empty_patch",
            TaskClass::Error => "error",
            TaskClass::BadTask => "bad_task",
        }
    }
}

/// One task: its class, its attempts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRow {
    pub instance_id: String,
    pub language: Option<String>,
    pub class: TaskClass,
    /// The representative attempt (see the module header).
    pub attempt: u32,
    /// Finished attempts (`n` of the estimators) and resolved ones (`c`).
    pub finished: u32,
    pub resolved_attempts: u32,
    pub usd: f64,
    pub wall_ms: u64,
    pub attempts: Vec<AttemptRow>,
}

/// One attempt's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRow {
    pub attempt: u32,
    /// `finished`, `infra_error` or `bad_task`.
    pub status: String,
    pub outcome: Option<Outcome>,
    /// The run's sentence on why it ended (or the error's message).
    pub reason: String,
    pub resolved: bool,
    /// plumb's ladder verified the patch.
    pub verified: bool,
    pub empty_patch: bool,
    pub score_reason: Option<String>,
    pub rounds: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub usd: f64,
    pub wall_ms: u64,
    pub run_ms: u64,
    pub score_ms: u64,
    pub flags: Vec<String>,
}

/// Writes `OUT/summary.json` (pretty, so a person can read it and a diff of two runs shows).
pub fn write_summary(out_dir: &Path, summary: &Summary) -> Result<(), ReportError> {
    let path = out_dir.join("summary.json");
    let mut text = serde_json::to_string_pretty(summary).map_err(|source| ReportError::Write {
        path: path.clone(),
        source: std::io::Error::other(source),
    })?;
    text.push('\n');
    write_atomic(&path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{infra, scored};
    use crate::report::tally::summarize;
    use pretty_assertions::assert_eq;

    #[test]
    fn summary_json_is_written_whole_and_reads_back() {
        let out = tempfile::tempdir().unwrap();
        let results = vec![scored("a", 1, true, true), infra("b", 1)];
        let summary = summarize(&results, 1, &SummaryMeta::default());

        write_summary(out.path(), &summary).unwrap();
        let text = std::fs::read_to_string(out.path().join("summary.json")).unwrap();
        let back: Summary = serde_json::from_str(&text).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(out.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let actual = (back == summary, back.error_ids, names);
        let expected = (
            true,
            vec!["b".to_string()],
            vec!["summary.json".to_string()],
        );
        assert_eq!(actual, expected);
    }
}
