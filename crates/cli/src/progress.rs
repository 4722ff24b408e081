//! Live progress on stderr: one line per tool call (round, tool, arguments in short, outcome),
//! plus the baseline, checkpoints, checks and warnings. Reads the run's event stream. Every line
//! goes out through `screen`; a tool's arguments and summary, the model's and the reviewer's
//! words, a setup command from the repository's settings are fields kept on their line.

use std::collections::HashMap;

use plumb_agent::input::{CancelReason, Submitter};
use plumb_protocol::{CheckStatus, Event, thousands};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::screen::{indented, one_line, say};

/// Starts the printer (stderr only, `--json` or not); returns the sender to give the run and
/// the task to await at the end.
pub(crate) fn start() -> (mpsc::Sender<Event>, JoinHandle<()>) {
    let (tx, mut rx) = mpsc::channel::<Event>(64);
    let task = tokio::spawn(async move {
        // Arguments are shown with the outcome, so a round is one line.
        let mut pending_args: HashMap<String, String> = HashMap::new();
        while let Some(event) = rx.recv().await {
            match &event {
                Event::ToolStarted {
                    call_id, arguments, ..
                } => {
                    pending_args.insert(call_id.clone(), short_args(arguments));
                }
                Event::ToolFinished {
                    round,
                    call_id,
                    name,
                    ok,
                    summary,
                    ..
                } => {
                    let args = pending_args.remove(call_id).unwrap_or_default();
                    let mark = if *ok { "→" } else { "✗" };
                    let (name, summary) = (one_line(name), one_line(summary));
                    say!("round {round:>2}  {name:<11} {args:<40} {mark} {summary}");
                }
                other => {
                    if let Some(line) = render(other) {
                        say!("{line}");
                    }
                }
            }
        }
    });
    (tx, task)
}

/// The first Ctrl-C cancels the run cleanly (rollback, report, journal) or, once it has ended,
/// answers the approval question with no; a second one is the terminal's default.
pub(crate) fn cancel_on_ctrl_c(inputs: Submitter) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            say!(
                "plumb: cancelling (nothing reaches your files; press Ctrl-C again to stop at once)"
            );
            inputs.cancel(CancelReason::Interrupted);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
}

pub(crate) fn render(event: &Event) -> Option<String> {
    match event {
        Event::RunStarted { meta } => Some(format!(
            "plumb: run {} on {} (model {}, sandbox {})",
            one_line(&meta.run_id),
            one_line(&meta.repo),
            one_line(&meta.model),
            meta.sandbox.as_str()
        )),
        Event::Warning { message } => {
            Some(format!("plumb: WARNING: {}", indented(message, "    ")))
        }
        Event::Helpers { helpers } => {
            let on: Vec<&str> = helpers
                .iter()
                .filter(|h| h.on)
                .map(|h| h.name.as_str())
                .collect();
            (!on.is_empty()).then(|| format!("plumb: small-model helpers on: {}", on.join(", ")))
        }
        Event::Setup {
            argv,
            network,
            exit_code,
            duration_ms,
            ..
        } => Some(format!(
            "setup: `{}` {} ({:.2} s, network {})",
            one_line(&argv.join(" ")),
            match exit_code {
                Some(0) => "done".to_string(),
                Some(code) => format!("failed with exit {code}"),
                None => "killed".to_string(),
            },
            *duration_ms as f64 / 1000.0,
            if *network { "on" } else { "off" }
        )),
        Event::BaselineTests {
            counts,
            duration_ms,
            ..
        } => Some(format!(
            "baseline tests: {} ({:.2} s)",
            counts.summary(),
            *duration_ms as f64 / 1000.0
        )),
        Event::Check { check } => {
            let mark = match check.status {
                CheckStatus::Passed => "passed",
                CheckStatus::Failed => "FAILED",
                CheckStatus::Flagged => "FLAGGED",
                CheckStatus::NotRun => return None,
            };
            Some(format!(
                "  check {}: {mark} — {}",
                check.step.as_str(),
                indented(&check.evidence, "    ")
            ))
        }
        Event::Note { round, text } => Some(format!("round {round:>2}  note: {}", one_line(text))),
        Event::Compacted {
            round,
            replaced_turns,
            by_model,
            history_before,
            history_after,
            ..
        } => Some(format!(
            "round {round:>2}  history compacted: {replaced_turns} earlier turns replaced by {} summary (~{} → ~{} tokens)",
            if *by_model { "the model's" } else { "plumb's" },
            thousands(*history_before),
            thousands(*history_after),
        )),
        Event::CandidateTried {
            round,
            attempt,
            reply,
            verdict,
            used,
            ..
        } => {
            let call = reply
                .tool_calls
                .first()
                .map(|call| format!("{} {}", one_line(&call.name), short_args(&call.arguments)))
                .unwrap_or_else(|| "(no tool call)".to_string());
            let mark = if *used { "used" } else { "not used" };
            Some(format!(
                "round {round:>2}  candidate {}: {call}: {} ({mark})",
                attempt + 1,
                one_line(verdict)
            ))
        }
        Event::Reviewed { review } => {
            if let Some(why) = &review.not_reviewed {
                let mut line = format!("review {}: not reviewed — {}", review.round, one_line(why));
                for why in &review.attention {
                    line.push_str(&format!("\n    attention: {}", one_line(why)));
                }
                return Some(line);
            }
            let mut line = format!(
                "review {} by {}: {}",
                review.round,
                one_line(&review.reviewer),
                review.verdict.words()
            );
            if !review.summary.is_empty() {
                line.push_str(&format!(" — {}", one_line(&review.summary)));
            }
            for note in &review.notes {
                line.push_str(&format!("\n    {}", one_line(&note.sentence())));
            }
            for why in &review.attention {
                line.push_str(&format!("\n    attention: {}", one_line(why)));
            }
            Some(line)
        }
        Event::RolledBack { attempt_ref, .. } => Some(match attempt_ref {
            Some(kept) => format!(
                "rolled back to the baseline; the attempt is kept as {}",
                one_line(kept)
            ),
            None => "rolled back to the baseline (nothing had changed)".to_string(),
        }),
        Event::ToolStarted { .. }
        | Event::ToolFinished { .. }
        | Event::ModelRequest { .. }
        | Event::ModelReply { .. }
        | Event::Checkpoint { .. }
        | Event::RunFinished { .. } => None,
    }
}

/// `path=a.py query="gst"`: the arguments that tell calls apart, cut to a line (escaped first,
/// so the cut counts what the screen shows).
fn short_args(arguments: &Value) -> String {
    let Value::Object(map) = arguments else {
        return String::new();
    };
    let mut parts = Vec::new();
    for key in ["path", "query", "tests", "argv", "start_line"] {
        if let Some(value) = map.get(key) {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            parts.push(format!("{key}={text}"));
        }
    }
    let line = one_line(&parts.join(" ")).into_owned();
    if line.chars().count() > 80 {
        let cut: String = line.chars().take(79).collect();
        format!("{cut}…")
    } else {
        line
    }
}
