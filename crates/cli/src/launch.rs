//! Starting a run the same way for every command: a run folder, the sandbox, Ctrl-C, the progress
//! printer, then `plumb-agent`'s `Run`. `fix` and `replay` differ only in what they put in a
//! [`Task`].

use std::path::PathBuf;

use plumb_agent::input::{Inbox, Submitter};
use plumb_agent::{FinalReport, RunSpec, new_run_id};
use plumb_config::Config;
use plumb_model::ModelClient;
use plumb_protocol::Provenance;
use plumb_sandbox::Sandbox;
use plumb_verify::TestCommand;

use crate::screen::say;
use crate::{Failure, progress, prune, setup};

/// What a command asks the engine to do.
pub(crate) struct Task {
    pub repo_label: String,
    pub repo: PathBuf,
    pub ticket: String,
    pub model: Box<dyn ModelClient>,
    /// The reviewer, when not the one `review.model` names (a replay's recorded reviews).
    pub reviewer: Option<Box<dyn ModelClient>>,
    pub test_command: Option<TestCommand>,
    pub journal_path: Option<PathBuf>,
    pub expect_base_tree: Option<String>,
    /// The tests that show the bug, when the task names them.
    pub fail_to_pass: Vec<String>,
}

/// A run made ready to start: its folder made and locked (no other plumb prunes it while the
/// lock is held), its reviewer connected, its sandbox built. Every front end that runs the engine
/// — the terminal's commands here, `plumb mcp` — starts from this.
pub(crate) struct Prepared {
    pub run_id: String,
    pub runs_dir: PathBuf,
    pub run_dir: PathBuf,
    pub lock: prune::RunLock,
    pub sandbox: Box<dyn Sandbox>,
    pub reviewer: Option<Box<dyn ModelClient>>,
}

/// Prepares a run under `config`; `reviewer` replaces the one `review.model` names.
pub(crate) fn prepare(
    config: &Config,
    reviewer: Option<Box<dyn ModelClient>>,
) -> Result<Prepared, Failure> {
    let reviewer = match reviewer {
        Some(reviewer) => Some(reviewer),
        None if !config.review.model.trim().is_empty() => Some(
            setup::connect_model(&config.review.model, config).map_err(|failure| Failure {
                message: format!("review.model: {}", failure.message),
                ..failure
            })?,
        ),
        None => None,
    };
    let run_id = new_run_id();
    let runs_dir = setup::runs_dir(config)?;
    let run_dir = runs_dir.join(&run_id);
    std::fs::create_dir_all(&run_dir).map_err(|err| {
        Failure::bad_input(format!(
            "could not create the run folder {}: {err}; set runs_dir in plumb.toml or PLUMB_HOME to a writable folder",
            run_dir.display()
        ))
    })?;
    let lock = prune::lock_run(&run_dir)?;
    let sandbox = setup::build_sandbox(config, run_dir.join("sandbox"), run_dir.join("toolcache"))?;
    Ok(Prepared {
        run_id,
        runs_dir,
        run_dir,
        lock,
        sandbox,
        reviewer,
    })
}

/// Runs `task` under `config` (whose settings came from where `settings` says) with live
/// progress on stderr. Ctrl-C sends a cancel on `inputs`, whose reading end the run gets (and,
/// after it, the approval question, so a Ctrl-C there keeps the change out).
pub(crate) async fn run(
    task: Task,
    config: Config,
    settings: Provenance,
    inputs: &(Submitter, Inbox),
) -> Result<FinalReport, Failure> {
    // `_lock` is held until this function returns: no other plumb prunes the folder meanwhile.
    let Prepared {
        run_id,
        runs_dir,
        run_dir,
        lock: _lock,
        sandbox,
        reviewer,
    } = prepare(&config, task.reviewer)?;
    let keep = config.runs.clone();
    progress::cancel_on_ctrl_c(inputs.0.clone());
    let (observer, printer) = progress::start();
    let spec = RunSpec {
        repo_label: task.repo_label,
        repo: task.repo,
        ticket: task.ticket,
        model: task.model,
        reviewer,
        config,
        test_command: task.test_command,
        sandbox,
        run_id: run_id.clone(),
        run_dir,
        journal_path: task.journal_path,
        inbox: inputs.1.clone(),
        observer: Some(observer),
        expect_base_tree: task.expect_base_tree,
        fail_to_pass: task.fail_to_pass,
        setup_cache: None,
        settings,
    };
    let result = plumb_agent::run(spec).await;
    // The printer ends when the run drops its sender; wait so progress lines come before the report.
    let _ = printer.await;
    for line in prune::prune(&runs_dir, &run_id, &keep).lines(&keep) {
        say!("{line}");
    }
    Ok(result?)
}
