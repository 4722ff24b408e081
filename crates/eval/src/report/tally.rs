//! [`summarize`]: from the attempts to a [`Summary`]. Groups attempts by task (the input is
//! [`crate::report::collect`]'s order, but any order gives the same summary), classifies each
//! task from its representative attempt, then counts.

use std::collections::{BTreeMap, BTreeSet};

use plumb_verify::tamper::TamperKind;

use super::pass_k::{pass_at_k, pass_hat_k};
use super::reviews::review_tally;
use super::summary::{
    AllResolved, AttemptError, AttemptRow, AttemptTally, Disagreement, Disagreements, FlagTally,
    LanguageTally, PassAt, RoundSplit, SUMMARY_VERSION, Summary, SummaryMeta, TaskClass, TaskRow,
    Totals,
};
use crate::result::{AttemptResult, AttemptStatus};

/// The summary of `results` for a run of `k` attempts a task (`k` is taken as at least the
/// highest attempt number found, so a summary never hides attempts).
pub fn summarize(results: &[AttemptResult], k: u32, run_label: &SummaryMeta) -> Summary {
    let k = results.iter().map(|r| r.attempt).fold(k.max(1), u32::max);
    let by_task = group(results);
    let tasks: Vec<TaskRow> = by_task.values().map(|a| task_row(a)).collect();
    let total = run_label.total_tasks.max(tasks.len());
    let pct = |count: usize| percent(count, total);

    let ids = |class: TaskClass| -> Vec<String> {
        tasks
            .iter()
            .filter(|t| t.class == class)
            .map(|t| t.instance_id.clone())
            .collect()
    };
    let resolved_ids = ids(TaskClass::Resolved);
    let unresolved_ids = ids(TaskClass::Unresolved);
    let mut completed_ids: Vec<String> = resolved_ids
        .iter()
        .chain(&unresolved_ids)
        .cloned()
        .collect();
    completed_ids.sort();

    Summary {
        v: SUMMARY_VERSION,
        meta: SummaryMeta {
            k,
            ..run_label.clone()
        },
        total_instances: total,
        submitted_instances: tasks.len(),
        completed_instances: completed_ids.len(),
        resolved_instances: resolved_ids.len(),
        unresolved_instances: unresolved_ids.len(),
        empty_patch_instances: ids(TaskClass::EmptyPatch).len(),
        error_instances: ids(TaskClass::Error).len(),
        bad_task_instances: ids(TaskClass::BadTask).len(),
        incomplete_instances: total - tasks.len(),
        resolved_pct: pct(resolved_ids.len()),
        per_attempt: (1..=k).map(|j| attempt_tally(results, j, total)).collect(),
        pass_at: (1..=k).map(|j| pass_at(&tasks, j)).collect(),
        all_resolved: all_resolved(&tasks, k),
        totals: totals(results, tasks.len()),
        flags: flag_tally(results),
        reviews: review_tally(results),
        disagreements: disagreements(results),
        languages: languages(&tasks),
        submitted_ids: tasks.iter().map(|t| t.instance_id.clone()).collect(),
        completed_ids,
        resolved_ids,
        unresolved_ids,
        empty_patch_ids: ids(TaskClass::EmptyPatch),
        error_ids: ids(TaskClass::Error),
        bad_task_ids: ids(TaskClass::BadTask),
        errors: errors(results),
        tasks,
    }
}

/// Attempts by task id, each task's attempts by number.
pub(crate) fn group(results: &[AttemptResult]) -> BTreeMap<&str, Vec<&AttemptResult>> {
    let mut by_task: BTreeMap<&str, Vec<&AttemptResult>> = BTreeMap::new();
    for result in results {
        by_task.entry(&result.instance_id).or_default().push(result);
    }
    for attempts in by_task.values_mut() {
        attempts.sort_by_key(|a| a.attempt);
    }
    by_task
}

/// The attempt that stands for the task in the id lists and the predictions: the first resolved
/// one, else the first that finished, else the first. `None` only for no attempts.
pub(crate) fn representative<'a>(attempts: &[&'a AttemptResult]) -> Option<&'a AttemptResult> {
    attempts
        .iter()
        .find(|a| a.counts() && a.resolved())
        .or_else(|| attempts.iter().find(|a| a.counts()))
        .or_else(|| attempts.first())
        .copied()
}

fn class_of(attempt: &AttemptResult) -> TaskClass {
    match (&attempt.status, &attempt.score) {
        (AttemptStatus::InfraError { .. }, _) => TaskClass::Error,
        (AttemptStatus::BadTask { .. }, _) => TaskClass::BadTask,
        (AttemptStatus::Finished, Some(score)) if score.resolved => TaskClass::Resolved,
        (AttemptStatus::Finished, Some(score)) if score.empty_patch => TaskClass::EmptyPatch,
        (AttemptStatus::Finished, Some(_)) => TaskClass::Unresolved,
        (AttemptStatus::Finished, None) if attempt.patch.trim().is_empty() => TaskClass::EmptyPatch,
        // A patch that finished without a score: SWE-bench counts a prediction with no report
        // as an error, and so does this.
        (AttemptStatus::Finished, None) => TaskClass::Error,
    }
}

fn task_row(attempts: &[&AttemptResult]) -> TaskRow {
    let rep = representative(attempts);
    let finished = attempts.iter().filter(|a| a.counts()).count();
    let resolved = attempts
        .iter()
        .filter(|a| a.counts() && a.resolved())
        .count();
    TaskRow {
        instance_id: rep.map(|r| r.instance_id.clone()).unwrap_or_default(),
        language: attempts.iter().find_map(|a| a.language.clone()),
        class: rep.map_or(TaskClass::Error, class_of),
        attempt: rep.map_or(0, |r| r.attempt),
        finished: u32::try_from(finished).unwrap_or(u32::MAX),
        resolved_attempts: u32::try_from(resolved).unwrap_or(u32::MAX),
        usd: attempts.iter().map(|a| a.usage.usd).sum(),
        wall_ms: attempts.iter().map(|a| a.wall_ms).sum(),
        attempts: attempts.iter().map(|a| attempt_row(a)).collect(),
    }
}

fn status_name(status: &AttemptStatus) -> (&'static str, Option<&str>) {
    match status {
        AttemptStatus::Finished => ("finished", None),
        AttemptStatus::InfraError { message } => ("infra_error", Some(message)),
        AttemptStatus::BadTask { message } => ("bad_task", Some(message)),
    }
}

fn attempt_row(a: &AttemptResult) -> AttemptRow {
    let (status, message) = status_name(&a.status);
    AttemptRow {
        attempt: a.attempt,
        status: status.to_string(),
        outcome: a.outcome,
        reason: message.map_or_else(|| a.reason.clone(), str::to_string),
        resolved: a.resolved(),
        verified: a.verified(),
        empty_patch: a
            .score
            .as_ref()
            .map_or(a.patch.trim().is_empty(), |s| s.empty_patch),
        score_reason: a.score.as_ref().map(|s| s.reason.clone()),
        rounds: a.rounds,
        input_tokens: a.usage.input_tokens,
        output_tokens: a.usage.output_tokens,
        cached_tokens: a.usage.cached_tokens,
        usd: a.usage.usd,
        wall_ms: a.wall_ms,
        run_ms: a.run_ms,
        score_ms: a.score_ms,
        flags: a.flags.clone(),
    }
}

fn attempt_tally(results: &[AttemptResult], attempt: u32, total: usize) -> AttemptTally {
    let these: Vec<&AttemptResult> = results.iter().filter(|r| r.attempt == attempt).collect();
    let resolved = these.iter().filter(|r| r.counts() && r.resolved()).count();
    AttemptTally {
        attempt,
        tasks: these.len(),
        finished: these.iter().filter(|r| r.counts()).count(),
        errors: these
            .iter()
            .filter(|r| matches!(r.status, AttemptStatus::InfraError { .. }))
            .count(),
        resolved,
        resolved_pct: percent(resolved, total),
    }
}

fn pass_at(tasks: &[TaskRow], k: u32) -> PassAt {
    let estimate = |f: fn(u32, u32, u32) -> Option<f64>| -> (usize, Option<f64>) {
        let values: Vec<f64> = tasks
            .iter()
            .filter_map(|t| f(t.finished, t.resolved_attempts, k))
            .collect();
        (values.len(), mean(&values))
    };
    let (counted, pass_at_k) = estimate(pass_at_k);
    let (_, pass_hat_k) = estimate(pass_hat_k);
    PassAt {
        k,
        tasks: counted,
        pass_at_k,
        pass_hat_k,
    }
}

fn all_resolved(tasks: &[TaskRow], k: u32) -> AllResolved {
    let counted: Vec<&TaskRow> = tasks.iter().filter(|t| t.finished >= k).collect();
    let resolved = counted.iter().filter(|t| t.resolved_attempts >= k).count();
    AllResolved {
        k,
        tasks: counted.len(),
        resolved,
        fraction: (!counted.is_empty()).then(|| resolved as f64 / counted.len() as f64),
    }
}

fn totals(results: &[AttemptResult], task_count: usize) -> Totals {
    let finished: Vec<&AttemptResult> = results.iter().filter(|r| r.counts()).collect();
    let rounds: Vec<f64> = finished.iter().map(|r| f64::from(r.rounds)).collect();
    let per_round: Vec<f64> = finished
        .iter()
        .filter(|r| r.rounds > 0)
        .map(|r| r.run_ms as f64 / 1000.0 / f64::from(r.rounds))
        .collect();
    let walls: Vec<f64> = finished.iter().map(|r| r.wall_ms as f64 / 1000.0).collect();
    let with_rounds: Vec<&&AttemptResult> = finished.iter().filter(|r| r.rounds > 0).collect();
    let per_round_of = |value: &dyn Fn(&AttemptResult) -> Option<f64>| -> Option<f64> {
        median(
            with_rounds
                .iter()
                .filter_map(|r| Some(value(r)? / f64::from(r.rounds)))
                .collect(),
        )
    };
    let round_split = RoundSplit {
        new_prompt_tokens: per_round_of(&|r| {
            Some(r.usage.input_tokens.saturating_sub(r.usage.cached_tokens) as f64)
        }),
        output_tokens: per_round_of(&|r| Some(r.usage.output_tokens as f64)),
        model_seconds: per_round_of(&|r| Some(r.timings?.model_ms as f64 / 1000.0)),
        command_seconds: per_round_of(&|r| Some(r.timings?.commands_ms as f64 / 1000.0)),
    };
    let usd: f64 = results.iter().map(|r| r.usage.usd).sum();
    Totals {
        attempts: results.len(),
        finished_attempts: finished.len(),
        median_rounds: median(rounds),
        median_seconds_per_round: median(per_round),
        round_split,
        median_wall_seconds: median(walls),
        wall_seconds: results.iter().map(|r| r.wall_ms as f64 / 1000.0).sum(),
        input_tokens: results.iter().map(|r| r.usage.input_tokens).sum(),
        output_tokens: results.iter().map(|r| r.usage.output_tokens).sum(),
        cached_tokens: results.iter().map(|r| r.usage.cached_tokens).sum(),
        usd,
        usd_per_task: (task_count > 0).then(|| usd / task_count as f64),
        usage_estimated: results.iter().any(|r| r.usage.estimated),
    }
}

/// The kind a flag names as its first word, or `unclassified`.
fn flag_kind(flag: &str) -> &'static str {
    let first = flag.split([':', ' ']).next().unwrap_or_default();
    TamperKind::parse(first).map_or("unclassified", TamperKind::as_str)
}

fn flag_tally(results: &[AttemptResult]) -> FlagTally {
    let mut tally = FlagTally::default();
    let mut tasks = BTreeSet::new();
    for result in results.iter().filter(|r| !r.flags.is_empty()) {
        tally.attempts += 1;
        tasks.insert(result.instance_id.clone());
        for (index, flag) in result.flags.iter().enumerate() {
            tally.flags += 1;
            // The run's own kind when the result has it; else the flag's first word.
            let kind = result
                .flag_kinds
                .get(index)
                .cloned()
                .unwrap_or_else(|| flag_kind(flag).to_string());
            *tally.by_kind.entry(kind).or_default() += 1;
        }
    }
    tally.tasks = tasks.into_iter().collect();
    tally
}

fn disagreements(results: &[AttemptResult]) -> Disagreements {
    let mut found = Disagreements::default();
    for result in results.iter().filter(|r| r.counts()) {
        let Some(score) = &result.score else { continue };
        let entry = || Disagreement {
            instance_id: result.instance_id.clone(),
            attempt: result.attempt,
            outcome: result.outcome,
            score_reason: score.reason.clone(),
        };
        match (result.verified(), score.resolved) {
            (true, false) => found.verified_unresolved.push(entry()),
            (false, true) => found.resolved_unverified.push(entry()),
            (true, true) | (false, false) => {}
        }
        if let Some(held_back) = result.unverified_score.as_ref().filter(|s| s.resolved) {
            found.held_back_resolved.push(Disagreement {
                score_reason: format!("held back by plumb; scored as left: {}", held_back.reason),
                ..entry()
            });
        }
    }
    for list in [
        &mut found.verified_unresolved,
        &mut found.resolved_unverified,
        &mut found.held_back_resolved,
    ] {
        list.sort_by(|a, b| (&a.instance_id, a.attempt).cmp(&(&b.instance_id, b.attempt)));
    }
    found
}

fn languages(tasks: &[TaskRow]) -> BTreeMap<String, LanguageTally> {
    let mut by_language: BTreeMap<String, Vec<&TaskRow>> = BTreeMap::new();
    for task in tasks {
        if let Some(language) = &task.language {
            by_language.entry(language.clone()).or_default().push(task);
        }
    }
    by_language
        .into_iter()
        .map(|(language, tasks)| {
            let resolved = tasks
                .iter()
                .filter(|t| t.class == TaskClass::Resolved)
                .count();
            let pass_1: Vec<f64> = tasks
                .iter()
                .filter_map(|t| pass_at_k(t.finished, t.resolved_attempts, 1))
                .collect();
            let tally = LanguageTally {
                tasks: tasks.len(),
                resolved,
                resolved_pct: percent(resolved, tasks.len()),
                pass_at_1: mean(&pass_1),
                usd: tasks.iter().map(|t| t.usd).sum(),
            };
            (language, tally)
        })
        .collect()
}

fn errors(results: &[AttemptResult]) -> Vec<AttemptError> {
    let mut errors: Vec<AttemptError> = results
        .iter()
        .filter_map(|r| {
            let (status, message) = status_name(&r.status);
            message.map(|message| AttemptError {
                instance_id: r.instance_id.clone(),
                attempt: r.attempt,
                status: status.to_string(),
                message: message.to_string(),
            })
        })
        .collect();
    errors.sort_by(|a, b| (&a.instance_id, a.attempt).cmp(&(&b.instance_id, b.attempt)));
    errors
}

fn percent(count: usize, of: usize) -> f64 {
    if of == 0 {
        0.0
    } else {
        count as f64 * 100.0 / of as f64
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

pub(crate) fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => values.get(n / 2).copied(),
        _ => Some((values.get(n / 2 - 1)? + values.get(n / 2)?) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{bad, empty, infra, scored};
    use pretty_assertions::assert_eq;

    fn lang(mut r: AttemptResult, language: &str) -> AttemptResult {
        r.language = Some(language.into());
        r
    }

    fn work(mut r: AttemptResult, rounds: u32, run_ms: u64, usd: f64) -> AttemptResult {
        r.rounds = rounds;
        r.run_ms = run_ms;
        r.wall_ms = run_ms + 1000;
        r.usage.usd = usd;
        r
    }

    /// Five tasks, two attempts each, of a set of eight:
    /// a: resolved, then verified but unresolved (a disagreement); b: an infrastructure error,
    /// then an empty patch; c: two infrastructure errors; d: a bad task; e: resolved without
    /// plumb's verification (a disagreement), then resolved.
    fn run() -> Vec<AttemptResult> {
        let mut a1 = work(lang(scored("a", 1, true, true), "python"), 3, 6000, 0.25);
        a1.flags = vec![
            "test_modified: tests/test_x.py: an existing test file was modified".into(),
            "tests/conftest.py: a new conftest".into(),
        ];
        vec![
            a1,
            work(lang(scored("a", 2, false, true), "python"), 5, 10000, 0.25),
            work(lang(infra("b", 1), "python"), 0, 0, 0.5),
            work(lang(empty("b", 2), "python"), 10, 5000, 0.0),
            infra("c", 1),
            infra("c", 2),
            bad("d", 1),
            bad("d", 2),
            work(lang(scored("e", 1, true, false), "rust"), 2, 2000, 0.0),
            work(lang(scored("e", 2, true, true), "rust"), 4, 4000, 0.0),
        ]
    }

    #[test]
    fn summary_classifies_tasks_as_swe_bench_does_and_estimates_pass_k() {
        let meta = SummaryMeta {
            tasks_file: "tasks.jsonl".into(),
            model: "scripted".into(),
            k: 2,
            total_tasks: 8,
            command: "plumb eval tasks.jsonl -k 2".into(),
            settings: vec!["helpers.phases=false".into()],
        };
        let mut results = run();
        results.reverse(); // any order gives the same summary

        let s = summarize(&results, 2, &meta);
        let round_trip: Summary =
            serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        let ids = |d: &[Disagreement]| -> Vec<(String, u32)> {
            d.iter()
                .map(|d| (d.instance_id.clone(), d.attempt))
                .collect()
        };
        let actual = (
            (
                s.submitted_ids.clone(),
                s.completed_ids.clone(),
                s.resolved_ids.clone(),
                s.unresolved_ids.clone(),
                s.empty_patch_ids.clone(),
                s.error_ids.clone(),
                s.bad_task_ids.clone(),
            ),
            (
                s.total_instances,
                s.incomplete_instances,
                s.resolved_pct,
                s.per_attempt
                    .iter()
                    .map(|a| (a.tasks, a.finished, a.errors, a.resolved, a.resolved_pct))
                    .collect::<Vec<_>>(),
            ),
            s.pass_at.clone(),
            s.all_resolved.clone(),
            (
                ids(&s.disagreements.verified_unresolved),
                ids(&s.disagreements.resolved_unverified),
            ),
            s.errors
                .iter()
                .map(|e| (e.instance_id.clone(), e.attempt, e.status.clone()))
                .collect::<Vec<_>>(),
            (
                s.flags.flags,
                s.flags.by_kind.clone(),
                s.flags.tasks.clone(),
            ),
            s.languages
                .iter()
                .map(|(l, t)| (l.clone(), t.tasks, t.resolved, t.resolved_pct, t.pass_at_1))
                .collect::<Vec<_>>(),
            (
                s.totals.median_rounds,
                s.totals.median_seconds_per_round,
                s.totals.usd,
                s.totals.usd_per_task,
            ),
            round_trip == s,
        );
        let v = |x: &str| vec![x.to_string()];
        let expected = (
            (
                ["a", "b", "c", "d", "e"].map(String::from).to_vec(),
                ["a", "e"].map(String::from).to_vec(),
                ["a", "e"].map(String::from).to_vec(),
                Vec::<String>::new(),
                v("b"),
                v("c"),
                v("d"),
            ),
            // attempt 1: a and e resolved, b and c errors; attempt 2: only e resolved.
            (8, 3, 25.0, vec![(5, 2, 2, 2, 25.0), (5, 3, 1, 1, 12.5)]),
            vec![
                // k=1 over a (1 of 2), b (0 of 1), e (2 of 2): (0.5 + 0 + 1) / 3.
                PassAt {
                    k: 1,
                    tasks: 3,
                    pass_at_k: Some(0.5),
                    pass_hat_k: Some(0.5),
                },
                // k=2 over a and e only (b has one finished attempt): pass@2 = (1 + 1) / 2,
                // pass^2 = (C(1,2)/C(2,2) + C(2,2)/C(2,2)) / 2.
                PassAt {
                    k: 2,
                    tasks: 2,
                    pass_at_k: Some(1.0),
                    pass_hat_k: Some(0.5),
                },
            ],
            AllResolved {
                k: 2,
                tasks: 2,
                resolved: 1,
                fraction: Some(0.5),
            },
            (vec![("a".to_string(), 2)], vec![("e".to_string(), 1)]),
            vec![
                ("b".to_string(), 1, "infra_error".to_string()),
                ("c".to_string(), 1, "infra_error".to_string()),
                ("c".to_string(), 2, "infra_error".to_string()),
                ("d".to_string(), 1, "bad_task".to_string()),
                ("d".to_string(), 2, "bad_task".to_string()),
            ],
            (
                2,
                BTreeMap::from([
                    ("test_modified".to_string(), 1),
                    ("unclassified".to_string(), 1),
                ]),
                v("a"),
            ),
            vec![
                ("python".to_string(), 2, 1, 50.0, Some(0.25)),
                ("rust".to_string(), 1, 1, 100.0, Some(1.0)),
            ],
            // rounds 3, 5, 10, 2, 4; seconds a round 2, 2, 0.5, 1, 1; the error's cost counts.
            (Some(4.0), Some(1.0), 1.0, Some(0.2)),
            true,
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_round_is_split_into_new_prompt_tokens_generated_tokens_model_and_command_time() {
        let timed = |rounds: u32, input: u64, cached: u64, output: u64, model_ms: u64| {
            let mut r = work(scored("t", 1, true, true), rounds, 10_000, 0.0);
            r.usage.input_tokens = input;
            r.usage.cached_tokens = cached;
            r.usage.output_tokens = output;
            r.timings = Some(plumb_protocol::Timings {
                model_ms,
                commands_ms: model_ms / 10,
                ..Default::default()
            });
            r
        };
        let mut untimed = timed(4, 4_000, 0, 400, 0);
        untimed.timings = None;
        let results = [
            // 2 rounds: 500 new prompt tokens, 50 generated, 30 s of model, 3 s of commands each.
            timed(2, 3_000, 2_000, 100, 60_000),
            // 4 rounds: 1,500, 25, 10 s, 1 s.
            timed(4, 8_000, 2_000, 100, 40_000),
            // No round: left out.
            timed(0, 0, 0, 0, 0),
            untimed,
        ];
        let split = totals(&results, 4).round_split;
        let expected = RoundSplit {
            new_prompt_tokens: Some(1_000.0),
            output_tokens: Some(50.0),
            model_seconds: Some(20.0),
            command_seconds: Some(2.0),
        };
        assert_eq!(split, expected);
    }

    #[test]
    fn median_of_even_and_odd_counts() {
        let actual = (
            median(vec![]),
            median(vec![3.0, 1.0, 2.0]),
            median(vec![4.0, 1.0, 3.0, 2.0]),
        );
        assert_eq!(actual, (None, Some(2.0), Some(2.5)));
    }
}
