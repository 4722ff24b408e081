//! The progress of `plumb eval` on stderr: a bar with the count, the ETA and the last task
//! finished (indicatif), or one line per attempt when stderr is not a terminal; and the closing
//! lines with the figures. Task ids and messages come from the task file, so every text the bar
//! shows goes through `screen` (the bar's own redrawing is indicatif's, at a terminal only).

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use plumb_eval::report::ReviewTally;
use plumb_eval::runner::Progress;
use plumb_eval::{AttemptResult, AttemptStatus};

use crate::screen;

pub(crate) struct Bar {
    bar: ProgressBar,
    /// Attempts running now, for the message.
    running: Mutex<Vec<String>>,
}

impl Bar {
    pub(crate) fn new() -> Self {
        let bar = ProgressBar::new(0);
        if let Ok(style) =
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} ETA {eta} {msg}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.enable_steady_tick(Duration::from_secs(1));
        Self {
            bar,
            running: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn line(&self, text: String) {
        screen::bar_line(&self.bar, &text);
    }

    fn show_running(&self) {
        if let Ok(running) = self.running.lock() {
            screen::bar_message(&self.bar, &running.join(", "));
        }
    }
}

impl Progress for Bar {
    fn planned(&self, total: usize, already_done: usize) {
        self.bar.set_length(total as u64);
        self.bar.set_position(already_done as u64);
        // The ETA counts only what runs now.
        self.bar.reset_eta();
        if already_done > 0 {
            self.line(format!(
                "{already_done} of {total} attempts finished in an earlier run; resuming"
            ));
        }
    }

    fn started(&self, instance_id: &str, attempt: u32) {
        if let Ok(mut running) = self.running.lock() {
            running.push(format!("{instance_id}#{attempt}"));
        }
        self.show_running();
    }

    fn finished(&self, result: &AttemptResult) {
        let name = format!("{}#{}", result.instance_id, result.attempt);
        if let Ok(mut running) = self.running.lock() {
            running.retain(|r| r != &name);
        }
        self.bar.inc(1);
        self.show_running();
        self.line(attempt_line(result));
    }
}

/// `resolved    task#1  verified, 3 rounds, 41 s` and the like.
fn attempt_line(result: &AttemptResult) -> String {
    let name = format!("{}#{}", result.instance_id, result.attempt);
    let seconds = result.wall_ms / 1000;
    match &result.status {
        AttemptStatus::Finished => {
            let verdict = if result.resolved() {
                "resolved  "
            } else {
                "unresolved"
            };
            let ladder = match result.outcome {
                Some(outcome) if result.verified() => format!("verified ({})", outcome.as_str()),
                Some(outcome) => outcome.as_str().to_owned(),
                None => "no run".to_owned(),
            };
            let mut why = match &result.score {
                Some(score) if !score.resolved => format!(" — {}", first_line(&score.reason)),
                _ => String::new(),
            };
            if let Some(unverified) = &result.unverified_score {
                why.push_str(if unverified.resolved {
                    " (the change plumb held back would have resolved it)"
                } else {
                    " (the change plumb held back does not resolve it either)"
                });
            }
            format!(
                "{verdict}  {name}  plumb: {ladder}, {} rounds, {seconds} s{why}",
                result.rounds
            )
        }
        AttemptStatus::InfraError { message } => {
            format!("error       {name}  {}", first_line(message))
        }
        AttemptStatus::BadTask { message } => {
            format!("bad task    {name}  {}", first_line(message))
        }
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let mut short: String = line.chars().take(160).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

/// The closing lines: counts of resolved, verified, errors and bad tasks, then the reviews'.
pub(crate) fn summary_lines(results: &[AttemptResult], reviews: &ReviewTally) -> Vec<String> {
    let counted: Vec<_> = results.iter().filter(|r| r.counts()).collect();
    let resolved = counted.iter().filter(|r| r.resolved()).count();
    let verified = counted.iter().filter(|r| r.verified()).count();
    let disagree = counted
        .iter()
        .filter(|r| r.resolved() != r.verified())
        .count();
    let errors = results
        .iter()
        .filter(|r| matches!(r.status, AttemptStatus::InfraError { .. }))
        .count();
    let bad = results
        .iter()
        .filter(|r| matches!(r.status, AttemptStatus::BadTask { .. }))
        .count();
    let mut lines = vec![format!(
        "resolved {resolved} of {} attempts; plumb verified {verified}; {disagree} disagree; {errors} infrastructure errors; {bad} bad tasks",
        counted.len()
    )];
    lines.extend(reviews.sentences().unwrap_or_default());
    lines
}
