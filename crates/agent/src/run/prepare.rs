//! Preparing a run: the workspace copy, the journal, the test command, the setup, the
//! baseline tests and the first request's messages ([`Run::prepare`]); the run's metadata for
//! the journal's first line; the facts the helpers are chosen by, and the chosen helpers.

use std::path::Path;
use std::time::Instant;

use plumb_context::prompt;
use plumb_protocol::{Event, HelperState, Message, RunMeta, Timings, Usage};
use plumb_tools::Registry;
use plumb_verify::TestCommand;
use plumb_workspace::Workspace;

use super::{Asked, Run};
use crate::baseline::Baseline;
use crate::emitter::Emitter;
use crate::ending::elapsed_ms;
use crate::facts::{Briefing, RunFacts};
use crate::journal::Journal;
use crate::ladder::{Ladder, tamper_policy};
use crate::policy::{Policies, Policy};
use crate::review::Reviewer;
use crate::tester::Tester;
use crate::{RunError, RunSpec};

impl Run {
    /// Copies the repository, opens the journal, runs the baseline tests and builds the first context.
    pub async fn prepare(spec: RunSpec) -> Result<Run, RunError> {
        let started = Instant::now();
        let helpers = spec.config.helpers.for_profile(spec.model.profile());
        // The embedded model starts evaluating the fixed system turn while the workspace is made,
        // with the tools described for the test command the copy will have (the repository's
        // files are only read here).
        let early_command = resolve_test_command(&spec, &spec.repo).ok();
        let rules = prompt::rules(
            helpers.code_up_front,
            helpers.phases,
            early_command.as_ref().is_some_and(|cmd| {
                crate::helpers::figures_on(
                    &spec.config.helpers,
                    spec.model.profile(),
                    cmd.runner,
                    &spec.ticket,
                )
            }),
        );
        // Warming is a head start only: a template that fails here fails again, as an error,
        // in `build_head` or the first round.
        let tools = early_command
            .as_ref()
            .map_or_else(Registry::builtin, Registry::for_tests)
            .specs();
        if let (Ok(rules), Ok(tools)) = (rules, tools) {
            spec.model.warm(&plumb_model::ModelRequest {
                messages: vec![Message::system(rules)],
                tools,
                ..plumb_model::ModelRequest::default()
            });
        }
        if !spec.repo.is_dir() {
            return Err(RunError::BadInput(format!(
                "the repository {} is not a directory; pass --repo a folder that holds the project",
                spec.repo_label
            )));
        }
        let workspace_dir = spec.run_dir.join(crate::WORKSPACE_DIR);
        let limits = plumb_workspace::CopyLimits {
            max_file_bytes: spec.config.limits.max_file_bytes,
            max_total_bytes: spec.config.limits.max_copy_bytes,
            workspace: plumb_workspace::WorkspaceLimits {
                max_files: spec.config.limits.max_workspace_files,
                max_bytes: spec.config.limits.max_workspace_bytes,
            },
        };
        let (mut workspace, copied) = Workspace::prepare_with(&spec.repo, &workspace_dir, &limits)
            .map_err(|err| {
                if err.is_infra() {
                    RunError::Infra(err.to_string())
                } else {
                    RunError::BadInput(err.to_string())
                }
            })?;
        if let Some(expected) = &spec.expect_base_tree
            && expected != workspace.base_tree()
        {
            return Err(RunError::BadInput(format!(
                "the repository {} is not the tree the journal was written against (tree {expected}, now {}); restore it to that state and replay again",
                spec.repo_label,
                workspace.base_tree()
            )));
        }
        let test_command = resolve_test_command(&spec, workspace.root())?;
        let registry = Registry::for_tests(&test_command);
        let journal_path = spec
            .journal_path
            .clone()
            .unwrap_or_else(|| spec.run_dir.join("journal.jsonl"));
        let journal = Journal::create(&journal_path, &spec.run_id)
            .await
            .map_err(|err| {
                RunError::Infra(format!(
                    "could not create the journal {}: {err}",
                    journal_path.display()
                ))
            })?;
        // Every step on the copy ends by the wall clock, so a command that filled the tree cannot
        // make plumb's own work outlast the budget.
        let wall_clock = spec.config.limits.wall_clock_secs;
        workspace.set_deadline(
            (wall_clock > 0).then(|| started + std::time::Duration::from_secs(wall_clock)),
        );
        let last_checkpoint = workspace.baseline().clone();
        let cancel = spec.inbox.token();
        let ladder = Ladder::new(tamper_policy(&spec.config)?);
        let tester = Tester::new(
            spec.sandbox,
            test_command,
            plumb_tools::sandbox_limits(&spec.config),
            cancel.clone(),
            &spec.run_dir,
        );
        let keep_full = spec.config.limits.full_results_kept;
        let history_limits = plumb_context::compaction::HistoryLimits::new(
            spec.model.context_window(),
            spec.config.limits.prompt_share,
            spec.config.limits.history_tokens,
        );
        let reviewer = Reviewer::new(
            spec.reviewer,
            spec.config.review.clone(),
            spec.config.helpers.profile_for(spec.model.profile()),
        );
        let mut run = Run {
            asked: Asked {
                repo_label: spec.repo_label,
                tag_cache: super::head::tag_cache_file(&spec.repo),
                repo: spec.repo,
                ticket: spec.ticket,
                config: spec.config,
                run_id: spec.run_id,
                run_dir: spec.run_dir,
                cancel,
                inbox: spec.inbox,
                fail_to_pass: spec.fail_to_pass,
                settings: spec.settings,
                setup_cache: spec.setup_cache,
            },
            model: spec.model,
            workspace,
            emitter: Emitter::new(journal, spec.observer),
            registry,
            tester,
            baseline: Baseline::default(),
            head: Vec::new(),
            turns: Vec::new(),
            keep_full,
            keep_shown: keep_full,
            history_limits,
            rounds_summarised: 0,
            results_dropped: 0,
            briefing: Briefing::default(),
            round: 0,
            usage: Usage::default(),
            timings: Timings::default(),
            started,
            last_request_usd: 0.0,
            stuck: super::stuck::StuckDetector::default(),
            changes: 0,
            last_checkpoint,
            unsaved: false,
            unstageable: None,
            ladder,
            reviewer,
            helpers,
            policies: Policies::default(),
            helper_states: Vec::new(),
        };
        run.emit(Event::RunStarted {
            meta: Box::new(run.meta()),
        })
        .await;
        for message in copied.warnings() {
            run.emit(Event::Warning { message }).await;
        }
        for ignored in run.asked.settings.ignored.clone() {
            run.emit(Event::Warning {
                message: ignored.sentence(),
            })
            .await;
        }
        if run.tester.sandbox().kind() == plumb_protocol::SandboxKind::None {
            let chosen = run
                .asked
                .settings
                .setting("sandbox")
                .map(|s| format!(" (chosen by {})", s.chosen_by()))
                .unwrap_or_default();
            let message = format!(
                "{}{chosen}. Every command the agent causes runs on this machine with your permissions.",
                run.tester.sandbox().describe()
            );
            run.emit(Event::Warning { message }).await;
        }
        run.emit(Event::Checkpoint {
            label: "baseline".into(),
            commit: run.workspace.baseline().to_string(),
        })
        .await;
        run.run_setup().await?;
        run.ladder.known_nested = run
            .workspace
            .kept_out()
            .map_err(|err| RunError::Infra(format!("could not stage the baseline: {err}")))?;
        run.measure_baseline().await?;
        for message in run.build_head()? {
            run.emit(Event::Warning { message }).await;
        }
        run.timings.prepare_ms = elapsed_ms(run.started);
        Ok(run)
    }

    /// What the helpers are chosen by.
    pub(crate) fn facts(&self) -> RunFacts<'_> {
        RunFacts {
            ticket: &self.asked.ticket,
            runner: self.tester.runner(),
            baseline: &self.baseline,
            fail_to_pass: &self.asked.fail_to_pass,
            profile: self.model.profile(),
            can_sample: self.model.can_sample(),
            briefing: &self.briefing,
            settings: &self.asked.config.helpers,
        }
    }

    /// Gives the run its helpers, in the order their hooks are called, and says in the journal
    /// which are on and why (and why the others are not).
    pub(crate) async fn set_helpers(
        &mut self,
        policies: Vec<Box<dyn Policy>>,
        states: Vec<HelperState>,
    ) {
        self.policies = Policies::new(policies);
        self.helper_states = states.clone();
        self.emit(Event::Helpers { helpers: states }).await;
    }

    pub(crate) fn meta(&self) -> RunMeta {
        RunMeta {
            run_id: self.asked.run_id.clone(),
            plumb_version: env!("CARGO_PKG_VERSION").to_string(),
            repo: self.asked.repo_label.clone(),
            base_commit: self.workspace.baseline().to_string(),
            base_tree: self.workspace.base_tree().to_string(),
            model: self.model.name(),
            ticket: self.asked.ticket.clone(),
            test_command: self.tester.command().argv.clone(),
            sandbox: self.tester.sandbox().kind(),
            config: self.asked.config.to_toml(),
            fail_to_pass: self.asked.fail_to_pass.clone(),
        }
    }
}

/// The test command: the flag, else the settings' `test_command`, else the one detected from the
/// files at `root`.
fn resolve_test_command(spec: &RunSpec, root: &Path) -> Result<TestCommand, RunError> {
    if let Some(cmd) = &spec.test_command {
        return Ok(cmd.clone());
    }
    if let Some(text) = &spec.config.test_command {
        return plumb_verify::parse_command(text)
            .map_err(|err| RunError::BadInput(format!("test_command in plumb.toml: {err}")));
    }
    plumb_verify::detect(root).ok_or_else(|| {
        RunError::BadInput(format!(
            "plumb could not tell how to run the tests of {}; pass --test-cmd \"COMMAND\" or set test_command in plumb.toml",
            spec.repo_label
        ))
    })
}
