//! `plumb replay JOURNAL`: the journal's model turns, played again against the same base tree,
//! must reach the same patch byte for byte.

use plumb_agent::plan_replay;
use plumb_model::ScriptModel;
use plumb_protocol::SettingSource;

use crate::args::ReplayArgs;
use crate::fix::print_report;
use crate::screen::say;
use crate::{Failure, launch, setup};

pub(crate) async fn run(args: ReplayArgs, overrides: &[String]) -> Result<i32, Failure> {
    let plan = plan_replay(&args.journal)?;
    let repo = std::path::PathBuf::from(&plan.meta.repo);
    if !repo.is_dir() {
        return Err(Failure::bad_input(format!(
            "the journal's repository {} is not a folder on this machine; replay where the repository is",
            plan.meta.repo
        )));
    }
    let mut config = plan.config.clone();
    // The run's model decided which helpers were on; the replay's model is a script.
    let run_profile = plumb_model::catalog::profile(&plan.meta.model);
    config.helpers = config.helpers.pinned(run_profile);
    // So are the review's returns: the replay's reviewer is a script too.
    let reviewer_profile = if config.review.model.is_empty() {
        config.helpers.profile_for(run_profile)
    } else {
        plumb_model::catalog::profile(&config.review.model)
    };
    config.review.returns = Some(config.review.returns_for(reviewer_profile));
    let mut runs_dir_source = None;
    if !overrides.is_empty() {
        // Overrides apply on top of the recorded settings, e.g. to move runs_dir.
        let given = setup::load_config(None, overrides.to_vec(), Vec::new())?;
        if let Some(dir) = given.config.runs_dir {
            config.runs_dir = Some(dir);
            runs_dir_source = given
                .provenance
                .setting("runs_dir")
                .map(|s| s.source.clone());
        }
    }
    // Every setting is the journal's, but a runs_dir given here.
    let mut settings = plumb_config::provenance_of(
        &config,
        SettingSource::Journal {
            path: args.journal.display().to_string(),
        },
    );
    if let (Some(source), Some(entry)) = (
        runs_dir_source,
        settings.settings.iter_mut().find(|s| s.key == "runs_dir"),
    ) {
        entry.source = source;
    }
    let test_command = plumb_verify::parse_command(&shell_words::join(&plan.meta.test_command))
        .map_err(|err| Failure::bad_input(format!("the journal's test command: {err}")))?;
    let model = ScriptModel::from_turns(
        format!("replay:{}", args.journal.display()),
        plan.turns.clone(),
    );
    let task = launch::Task {
        repo_label: plan.meta.repo.clone(),
        repo,
        ticket: plan.meta.ticket.clone(),
        model: Box::new(model),
        reviewer: Some(Box::new(ScriptModel::from_turns(
            format!("replay-review:{}", args.journal.display()),
            plan.reviews.clone(),
        ))),
        test_command: Some(test_command),
        journal_path: None,
        expect_base_tree: Some(plan.meta.base_tree.clone()),
        fail_to_pass: plan.meta.fail_to_pass.clone(),
    };
    let inputs = plumb_agent::input::channel();
    let report = launch::run(task, config, settings, &inputs).await?;
    print_report(&report, args.json);
    if report.patch_sha256 == plan.patch_sha256 {
        say!(
            "replay: same patch as the journal (sha256 {})",
            if plan.patch_sha256.is_empty() {
                "none: no patch"
            } else {
                &plan.patch_sha256
            }
        );
        Ok(report.outcome.exit_code())
    } else {
        say!(
            "replay: the patch differs from the journal's (journal {}, replay {})",
            plan.patch_sha256,
            report.patch_sha256
        );
        Ok(1)
    }
}
