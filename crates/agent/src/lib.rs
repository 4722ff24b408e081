//! plumb-agent: the loop. A [`Run`] takes a task (a repository, a ticket, a model, settings),
//! prepares the throwaway workspace, asks the model round by round, runs the tools it asks for,
//! answers `done` with the harness's own checks, and ends with a [`FinalReport`]. Every front end
//! (the CLI, later the server and the eval runner) drives this same `Run` and reads its events.
//!
//! The map, top to bottom (dependencies point down only):
//!
//! - `run/`: the loop — `prepare`, `round`, `call`, `done`, `limits`, `finish` — and the narrow
//!   handle it gives the helpers (`run/handle.rs`);
//! - `helpers/`: the small-model helpers, each a [`policy::Policy`], chosen per run by
//!   `helpers::select`; the loop never names one;
//! - `ladder/`: the check ladder `done` runs; `review/`: the reviewer that reads a verified change;
//! - `policy.rs` (the seam), `facts.rs` (what helpers are chosen by), `tester.rs` (the one way a
//!   test command runs), `baseline.rs`, `emitter.rs`, `ending.rs`, the journal.

// Unit tests read their own fixtures; the library itself reads workspace files only through
// plumb_workspace::Tree (clippy.toml's disallowed-methods, checked on the non-test build).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod approval;
mod baseline;
mod emitter;
mod ending;
mod facts;
#[cfg(test)]
mod fake_run;
mod helpers;
pub mod input;
mod journal;
mod journal_entry;
mod ladder;
mod policy;
#[cfg(test)]
mod prompt_bench;
mod replay;
mod review;
mod run;
mod setup_cache;
mod tester;

use std::path::PathBuf;

use plumb_config::Config;
use plumb_model::ModelClient;
use plumb_protocol::Event;
use plumb_sandbox::Sandbox;
use plumb_verify::TestCommand;
use tokio::sync::mpsc;

pub use approval::{Approval, ApprovalGate, ApprovalRequest, Decision, ask};

/// The folder of a run folder that holds the run's workspace (its copy and shadow git).
pub const WORKSPACE_DIR: &str = "workspace";
pub use journal::{Journal, read_journal};
pub use journal_entry::{ENTRY_CAP_BYTES, JournalRequest, journal_requests};
pub use plumb_protocol::FinalReport;
pub use replay::{ReplayPlan, plan_replay};
pub use run::Run;
pub use setup_cache::{MANIFESTS, SetupCache, setup_snapshot_dir};

/// Everything a run needs, as one parameter struct.
pub struct RunSpec {
    /// The repository as the user gave it (for the report and the journal).
    pub repo_label: String,
    /// The local directory to copy.
    pub repo: PathBuf,
    pub ticket: String,
    pub model: Box<dyn ModelClient>,
    /// The model that reviews a verified change (`review.model`); `None` means the fixer's.
    pub reviewer: Option<Box<dyn ModelClient>>,
    pub config: Config,
    /// The test command given by the user; `None` means: from the settings, else detected.
    pub test_command: Option<TestCommand>,
    pub sandbox: Box<dyn Sandbox>,
    pub run_id: String,
    /// A folder for this run: the workspace, the journal, the report and the patch go here.
    pub run_dir: PathBuf,
    /// Where the journal goes; default `run_dir/journal.jsonl`.
    pub journal_path: Option<PathBuf>,
    /// The run's input channel: a cancel sent on its `Submitter` ends the run rolled back.
    pub inbox: input::Inbox,
    /// Receives every event as it happens (progress displays).
    pub observer: Option<mpsc::Sender<Event>>,
    /// For replays: the base tree the journal was written against; a different tree is refused.
    pub expect_base_tree: Option<String>,
    /// The task's own fail-to-pass tests (SWE-bench's FAIL_TO_PASS); empty means: the new and
    /// changed test files.
    pub fail_to_pass: Vec<String>,
    /// Where each setting of `config` came from, and the repository settings left out (each
    /// becomes a warning at the start of the run; both go into the report).
    pub settings: plumb_protocol::Provenance,
    /// Where the setup command's result is kept for the next run on the same repository
    /// (`plumb eval`); `None` runs the setup every time.
    pub setup_cache: Option<SetupCache>,
}

/// Why a run could not start. The message says what to change.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Exit code 2: the user's input or settings.
    #[error("{0}")]
    BadInput(String),
    /// Exit code 3: git, the sandbox, the disk or a model service.
    #[error("{0}")]
    Infra(String),
}

impl RunError {
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::BadInput(_) => 2,
            RunError::Infra(_) => 3,
        }
    }
}

/// Runs a task from start to finish.
pub async fn run(spec: RunSpec) -> Result<FinalReport, RunError> {
    let mut run = Run::prepare(spec).await?;
    let helpers::Selection { policies, states } = helpers::select(&run.facts());
    run.set_helpers(policies, states).await;
    Ok(run.execute().await)
}

/// A new run id: the time and a few characters that keep two runs of the same second apart.
pub fn new_run_id() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let ms = journal::now_ms();
    let salt = (std::process::id() as u64)
        .wrapping_mul(2_654_435_761)
        .wrapping_add(COUNTER.fetch_add(1, Ordering::Relaxed) as u64)
        .wrapping_add(ms.wrapping_mul(40_503));
    format!("r{ms:x}-{:06x}", salt & 0xff_ffff)
}
