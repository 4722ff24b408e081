//! Replaying a journal: the model turns it recorded become a script, run again against the same
//! base tree; the replay must reach the same patch, byte for byte.

use std::path::Path;

use plumb_config::Config;
use plumb_model::ScriptTurn;
use plumb_protocol::{Event, RunMeta};

use crate::RunError;

/// What a replay needs from a journal.
#[derive(Debug, Clone)]
pub struct ReplayPlan {
    pub meta: RunMeta,
    pub config: Config,
    pub turns: Vec<ScriptTurn>,
    /// The reviewer's answers, in order, for a scripted reviewer: a review that sent the run
    /// back changed what came after it.
    pub reviews: Vec<ScriptTurn>,
    /// The patch digest the journal's run ended with ("" when it produced none).
    pub patch_sha256: String,
}

/// Reads a journal into a replay plan; the error names the journal and what is wrong with it.
pub fn plan_replay(path: &Path) -> Result<ReplayPlan, RunError> {
    let lines = crate::journal::read_journal(path).map_err(RunError::BadInput)?;
    let mut meta = None;
    let mut turns = Vec::new();
    let mut reviews = Vec::new();
    let mut patch_sha256 = None;
    for line in lines {
        match line.event {
            Event::RunStarted { meta: m } => meta = Some(*m),
            Event::ModelReply { reply, .. } if !reply.exhausted => turns.push(ScriptTurn {
                content: reply.content,
                tool_calls: reply.tool_calls,
                alternatives: Vec::new(),
            }),
            // The model's summary is a reply like any other: the replayed run asks for it at the
            // same point (a summary plumb wrote itself needs no turn: the script's empty answer
            // makes the replay write it again).
            Event::Compacted {
                reply: Some(reply),
                by_model: true,
                ..
            } => turns.push(ScriptTurn {
                content: reply.content,
                tool_calls: reply.tool_calls,
                alternatives: Vec::new(),
            }),
            Event::Reviewed { review } => reviews.push(crate::review::as_script_turn(&review)),
            Event::RunFinished { report, .. } => patch_sha256 = Some(report.patch_sha256),
            _ => {}
        }
    }
    let bad = |what: &str| {
        RunError::BadInput(format!(
            "{} is not a complete plumb journal: {what}; give the journal of a run that finished",
            path.display()
        ))
    };
    let meta = meta.ok_or_else(|| bad("it has no run_started line"))?;
    let patch_sha256 = patch_sha256.ok_or_else(|| bad("it has no run_finished line"))?;
    let config: Config = toml::from_str(&meta.config).map_err(|err| {
        RunError::BadInput(format!(
            "the settings recorded in {} do not parse: {}",
            path.display(),
            err.message()
        ))
    })?;
    Ok(ReplayPlan {
        meta,
        config,
        turns,
        reviews,
        patch_sha256,
    })
}
