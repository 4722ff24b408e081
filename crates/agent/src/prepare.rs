//! Preparing a run: the workspace copy, the journal, the test command, the setup, the
//! baseline tests and the first request's messages ([`Run::prepare`]), and the run's metadata
//! for the journal's first line.

use std::collections::BTreeSet;
use std::time::Instant;

use plumb_context::prompt;
use plumb_protocol::{Event, Message, RunMeta, TestCounts, Timings, Usage};
use plumb_tools::Registry;
use plumb_verify::TestCommand;
use plumb_workspace::Workspace;

use crate::journal::Journal;
use crate::phases::Phases;
use crate::run::{Run, elapsed_ms};
use crate::stuck::StuckDetector;
use crate::{RunError, RunSpec};

impl Run {
    /// Copies the repository, opens the journal, runs the baseline tests and builds the first context.
    pub async fn prepare(spec: RunSpec) -> Result<Run, RunError> {
        let started = Instant::now();
        // The embedded model starts evaluating the fixed system turn while the workspace is made.
        let helpers: plumb_config::HelpersInEffect = spec
            .config
            .helpers
            .for_model(spec.model.name().starts_with("local"));
        spec.model.warm(&plumb_model::ModelRequest {
            messages: vec![Message::system(prompt::rules(
                helpers.code_up_front,
                helpers.phases,
            ))],
            tools: Registry::builtin().specs(),
            ..plumb_model::ModelRequest::default()
        });
        if !spec.repo.is_dir() {
            return Err(RunError::BadInput(format!(
                "the repository {} is not a directory; pass --repo a folder that holds the project",
                spec.repo_label
            )));
        }
        let workspace_dir = spec.run_dir.join("workspace");
        let limits = plumb_workspace::CopyLimits {
            max_file_bytes: spec.config.limits.max_file_bytes,
            max_total_bytes: spec.config.limits.max_copy_bytes,
        };
        let (workspace, copied) = Workspace::prepare_with(&spec.repo, &workspace_dir, &limits)
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
        let test_command = resolve_test_command(&spec, &workspace)?;
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
        let last_checkpoint = workspace.baseline().clone();
        let tamper_policy = crate::static_checks::tamper_policy(&spec.config)?;
        let mut run = Run {
            registry: Registry::builtin(),
            test_command,
            setup_snapshot: None,
            baseline: TestCounts::default(),
            head: Vec::new(),
            turns: Vec::new(),
            round: 0,
            usage: Usage::default(),
            timings: Timings::default(),
            started,
            stuck: StuckDetector::default(),
            last_checkpoint,
            unsaved: false,
            checks: Vec::new(),
            baseline_results: None,
            flaky: BTreeSet::new(),
            flags: Vec::new(),
            tamper_policy,
            target_tests: Vec::new(),
            reproduce_failing: Vec::new(),
            done_count: 0,
            baseline_view_ready: false,
            helpers,
            keep_full: spec.config.limits.full_results_kept,
            last_request_usd: 0.0,
            changes: 0,
            phases: Phases::new(helpers.phases),
            spec,
            workspace,
            journal,
        };
        run.emit(Event::RunStarted {
            meta: Box::new(run.meta()),
        })
        .await;
        for message in copied.warnings() {
            run.emit(Event::Warning { message }).await;
        }
        for ignored in run.spec.settings.ignored.clone() {
            run.emit(Event::Warning {
                message: ignored.sentence(),
            })
            .await;
        }
        if run.spec.sandbox.kind() == plumb_protocol::SandboxKind::None {
            let chosen = run
                .spec
                .settings
                .setting("sandbox")
                .map(|s| format!(" (chosen by {})", s.chosen_by()))
                .unwrap_or_default();
            let message = format!(
                "{}{chosen}. Every command the agent causes runs on this machine with your permissions.",
                run.spec.sandbox.describe()
            );
            run.emit(Event::Warning { message }).await;
        }
        run.emit(Event::Checkpoint {
            label: "baseline".into(),
            commit: run.workspace.baseline().to_string(),
        })
        .await;
        run.run_setup().await?;
        run.run_baseline_tests().await?;
        for message in run.build_head() {
            run.emit(Event::Warning { message }).await;
        }
        run.timings.prepare_ms = elapsed_ms(run.started);
        Ok(run)
    }

    pub(crate) fn meta(&self) -> RunMeta {
        RunMeta {
            run_id: self.spec.run_id.clone(),
            plumb_version: env!("CARGO_PKG_VERSION").to_string(),
            repo: self.spec.repo_label.clone(),
            base_commit: self.workspace.baseline().to_string(),
            base_tree: self.workspace.base_tree().to_string(),
            model: self.spec.model.name(),
            ticket: self.spec.ticket.clone(),
            test_command: self.test_command.argv.clone(),
            sandbox: self.spec.sandbox.kind(),
            config: self.spec.config.to_toml(),
        }
    }
}

fn resolve_test_command(spec: &RunSpec, workspace: &Workspace) -> Result<TestCommand, RunError> {
    if let Some(cmd) = &spec.test_command {
        return Ok(cmd.clone());
    }
    if let Some(text) = &spec.config.test_command {
        return plumb_verify::parse_command(text)
            .map_err(|err| RunError::BadInput(format!("test_command in plumb.toml: {err}")));
    }
    plumb_verify::detect(workspace.root()).ok_or_else(|| {
        RunError::BadInput(format!(
            "plumb could not tell how to run the tests of {}; pass --test-cmd \"COMMAND\" or set test_command in plumb.toml",
            spec.repo_label
        ))
    })
}
