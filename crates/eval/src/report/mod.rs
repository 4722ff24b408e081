//! Reports: everything here reads only what the runner left, `OUT/<task>/attempt-<n>/result.json`
//! ([`crate::result::AttemptResult`]), so a report can be made again at any time, of a run that is
//! still going, or of one made by another machine.
//!
//! - [`collect`]: every finished attempt under `OUT`, sorted by task and attempt;
//! - [`summarize`] and [`write_summary`]: `OUT/summary.json` (resolved %, pass@k, pass^k, cost,
//!   time, flags, review verdicts, ladder/score disagreements, SWE-bench's id lists);
//! - [`write_html`]: `OUT/report.html`, one static file with inline SVG charts;
//! - [`compare`]: two runs side by side, task by task;
//! - [`write_predictions`]: SWE-bench's predictions file.

mod charts;
mod collect;
mod compare;
mod escape;
#[cfg(test)]
mod fixtures;
mod html;
mod pass_k;
mod predictions;
mod reviews;
mod summary;
mod tally;

use std::path::PathBuf;

pub use collect::collect;
pub use compare::{CompareRow, CompareSide, Comparison, SideTotals, TaskCell, compare};
pub use html::write_html;
pub use pass_k::{pass_at_k, pass_hat_k};
pub use predictions::{Prediction, write_predictions};
pub use summary::{
    AllResolved, AttemptError, AttemptRow, AttemptTally, Disagreement, Disagreements, FlagTally,
    LanguageTally, PassAt, ReviewTally, SUMMARY_VERSION, Summary, SummaryMeta, TaskClass, TaskRow,
    Totals, write_summary,
};
pub use tally::summarize;

/// Why a report could not be read or written. Every message names the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot read the eval output folder {}: {source} (give the folder `plumb eval --out` wrote)", path.display())]
    OutDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a result plumb eval wrote: {source} (delete its attempt folder and run again to redo that attempt)", path.display())]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{} has result version {found}; this plumb reads version {supported} (use the plumb that made the run)", path.display())]
    Version {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("{} and {} both hold attempt {attempt} of task {instance_id:?} (remove one of the two folders)", first.display(), second.display())]
    Duplicate {
        instance_id: String,
        attempt: u32,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("{} holds no finished attempt (no */attempt-*/result.json): is it a `plumb eval --out` folder?", path.display())]
    Empty { path: PathBuf },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot draw the chart {chart:?}: {message}")]
    Chart { chart: String, message: String },
}

/// Writes `text` to `path` through a temporary file beside it, so a reader (or a run that is
/// interrupted) never sees half a file.
fn write_atomic(path: &std::path::Path, text: &str) -> Result<(), ReportError> {
    let write_err = |source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(write_err)?;
    }
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    std::fs::write(&tmp, text).map_err(write_err)?;
    std::fs::rename(&tmp, path).map_err(write_err)
}
