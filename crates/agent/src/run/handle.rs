//! The narrow handle the helpers get onto a run ([`RunHandle`], and for the helper that chooses
//! among replies [`ChoiceHandle`]): the run's parts a hook may use, borrowed apart from the
//! helpers themselves so that a helper can be called while it acts on the run.

use std::path::Path;
use std::time::Instant;

use async_trait::async_trait;
use plumb_config::{Config, HelpersInEffect};
use plumb_model::{ModelClient, ModelRequest};
use plumb_protocol::{Event, Timings, ToolCall};
use plumb_tools::{Registry, TestRun, ToolContext, ToolError};
use plumb_verify::Runner;
use plumb_workspace::{CommitId, Workspace};
use tokio_util::sync::CancellationToken;

use super::reply::normalise;
use crate::baseline::Baseline;
use crate::emitter::Emitter;
use crate::ending::{Ending, elapsed_ms};
use crate::ladder::original_source;
use crate::policy::{ChoiceHandle, Chosen, Gate, OtherPolicies, RunHandle, Trial, TriedWrite};
use crate::tester::Tester;

/// The run's parts a helper's hook may use.
pub(super) struct Parts<'a> {
    pub round: u32,
    pub ticket: &'a str,
    pub tag_cache: Option<&'a std::path::Path>,
    pub config: &'a Config,
    pub cancel: &'a CancellationToken,
    pub workspace: &'a Workspace,
    pub tester: &'a mut Tester,
    pub baseline: &'a Baseline,
    pub emitter: &'a Emitter,
    /// The state before the call in hand: what an undo goes back to.
    pub last_checkpoint: &'a CommitId,
    pub timings: &'a mut Timings,
}

/// The `Parts` of a `Run`, borrowed field by field so the run's helpers stay free to be called.
macro_rules! parts_of {
    ($run:expr) => {
        $crate::run::handle::Parts {
            round: $run.round,
            ticket: &$run.asked.ticket,
            tag_cache: $run.asked.tag_cache.as_deref(),
            config: &$run.asked.config,
            cancel: &$run.asked.cancel,
            workspace: &$run.workspace,
            tester: &mut $run.tester,
            baseline: &$run.baseline,
            emitter: &$run.emitter,
            last_checkpoint: &$run.last_checkpoint,
            timings: &mut $run.timings,
        }
    };
}
pub(super) use parts_of;

impl Parts<'_> {
    async fn run_in(&mut self, dir: &Path, tests: &[String]) -> Result<TestRun, Ending> {
        self.tester.run_tests_in(dir, tests).await
    }
}

#[async_trait]
impl RunHandle for Parts<'_> {
    fn round(&self) -> u32 {
        self.round
    }

    fn ticket(&self) -> &str {
        self.ticket
    }

    fn runner(&self) -> Runner {
        self.tester.runner()
    }

    fn baseline(&self) -> &Baseline {
        self.baseline
    }

    fn read(&self, path: &str) -> Option<String> {
        self.workspace
            .tree()
            .read_text(path, plumb_tools::MAX_READ_BYTES)
            .ok()
    }

    fn read_original(&self, path: &str) -> Option<String> {
        self.workspace.baseline_text(path).ok().flatten()
    }

    fn read_before(&self, path: &str) -> Option<String> {
        self.workspace
            .text_at(self.last_checkpoint, path)
            .ok()
            .flatten()
    }

    fn write(&mut self, path: &str, text: &str) -> Result<(), Ending> {
        let resolved = self.workspace.resolve(path).map_err(Ending::infra)?;
        std::fs::write(resolved, text).map_err(Ending::infra)
    }

    fn patch(&self) -> Option<String> {
        self.workspace.patch().ok().map(|patch| patch.text)
    }

    async fn run_tests(&mut self, tests: &[String]) -> Result<TestRun, Ending> {
        let root = self.workspace.root().to_path_buf();
        self.run_in(&root, tests).await
    }

    async fn run_on_original(&mut self, tests: &[String]) -> Result<TestRun, Ending> {
        let dest = original_source(self.workspace, self.tester, "original-source")?;
        let run = self.run_in(&dest, tests).await;
        let _ = plumb_workspace::discard_tree(&dest, self.workspace.deadline());
        run
    }

    async fn run_on_original_with(
        &mut self,
        path: &str,
        text: &str,
        tests: &[String],
    ) -> Result<TestRun, Ending> {
        let dest = self.tester.fresh_baseline_tree(self.workspace, "trace")?;
        let run = match std::fs::write(dest.join(path), text) {
            Ok(()) => self.run_in(&dest, tests).await,
            Err(err) => Err(Ending::infra(err)),
        };
        let _ = plumb_workspace::discard_tree(&dest, self.workspace.deadline());
        run
    }

    fn undo(&mut self) -> Result<(), Ending> {
        self.workspace
            .rollback(self.last_checkpoint)
            .map_err(|err| Ending::infra(format!("could not undo a write: {err}")))
    }

    async fn emit(&self, event: Event) {
        self.emitter.emit(event).await;
    }
}

/// The handle of the helper that chooses among replies: the run's parts, the model to ask
/// again, the tools to try a write with, and the other helpers to judge it.
pub(super) struct ChoiceContext<'a, 'p> {
    parts: Parts<'a>,
    model: &'a dyn ModelClient,
    registry: &'a Registry,
    helpers: HelpersInEffect,
    others: OtherPolicies<'p>,
}

impl<'a, 'p> ChoiceContext<'a, 'p> {
    pub(super) fn new(
        parts: Parts<'a>,
        model: &'a dyn ModelClient,
        registry: &'a Registry,
        helpers: HelpersInEffect,
        others: OtherPolicies<'p>,
    ) -> Self {
        Self {
            parts,
            model,
            registry,
            helpers,
            others,
        }
    }
}

#[async_trait]
impl RunHandle for ChoiceContext<'_, '_> {
    fn round(&self) -> u32 {
        self.parts.round()
    }

    fn ticket(&self) -> &str {
        self.parts.ticket()
    }

    fn runner(&self) -> Runner {
        self.parts.runner()
    }

    fn baseline(&self) -> &Baseline {
        self.parts.baseline()
    }

    fn read(&self, path: &str) -> Option<String> {
        self.parts.read(path)
    }

    fn read_original(&self, path: &str) -> Option<String> {
        self.parts.read_original(path)
    }

    fn read_before(&self, path: &str) -> Option<String> {
        self.parts.read_before(path)
    }

    fn write(&mut self, path: &str, text: &str) -> Result<(), Ending> {
        self.parts.write(path, text)
    }

    fn patch(&self) -> Option<String> {
        self.parts.patch()
    }

    async fn run_tests(&mut self, tests: &[String]) -> Result<TestRun, Ending> {
        self.parts.run_tests(tests).await
    }

    async fn run_on_original(&mut self, tests: &[String]) -> Result<TestRun, Ending> {
        self.parts.run_on_original(tests).await
    }

    async fn run_on_original_with(
        &mut self,
        path: &str,
        text: &str,
        tests: &[String],
    ) -> Result<TestRun, Ending> {
        self.parts.run_on_original_with(path, text, tests).await
    }

    fn undo(&mut self) -> Result<(), Ending> {
        self.parts.undo()
    }

    async fn emit(&self, event: Event) {
        self.parts.emit(event).await;
    }
}

#[async_trait]
impl ChoiceHandle for ChoiceContext<'_, '_> {
    async fn sample_again(
        &mut self,
        request: &ModelRequest,
        attempt: u32,
    ) -> Result<Option<Chosen>, Ending> {
        let asked = Instant::now();
        let again = tokio::select! {
            again = self.model.sample_again(request, attempt) => again,
            () = self.parts.cancel.cancelled() => {
                return Err(Ending::cancelled("while the model was thinking"));
            }
        };
        let duration_ms = elapsed_ms(asked);
        match again {
            None => Ok(None),
            // A sample that fails is one candidate fewer, not the end of the run: the model's
            // first reply is still there to go on with.
            Some(Err(err)) => {
                self.parts
                    .emit(Event::Warning {
                        message: format!("another sample of the model's reply failed: {err}"),
                    })
                    .await;
                Ok(None)
            }
            Some(Ok(mut reply)) => {
                normalise(&mut reply, self.registry, self.parts.round);
                Ok(Some(Chosen { reply, duration_ms }))
            }
        }
    }

    fn trial(&self, call: &ToolCall) -> Option<Trial> {
        self.others.trial(call)
    }

    async fn try_write(&mut self, call: &ToolCall, trial: &Trial) -> Result<TriedWrite, Ending> {
        let arguments = match self.others.before_tool(call) {
            Gate::Refuse(note) => {
                return Ok(TriedWrite {
                    refused: Some(note),
                    ..TriedWrite::default()
                });
            }
            Gate::Rewrite { arguments, .. } => arguments,
            Gate::Run => call.arguments.clone(),
            Gate::Fail(why) => return Err(Ending::infra(why)),
        };
        let started = Instant::now();
        let context = ToolContext {
            workspace: self.parts.workspace,
            sandbox: self.parts.tester.sandbox(),
            config: self.parts.config,
            test_command: Some(self.parts.tester.command()),
            cancel: self.parts.cancel,
            helpers: self.helpers,
            ticket: self.parts.ticket,
            tag_cache: self.parts.tag_cache,
        };
        let result = self.registry.call(&context, &call.name, &arguments).await;
        self.parts.timings.tools_ms += elapsed_ms(started);
        let tried = match result {
            Err(ToolError::Infra(text)) => {
                let _ = self.parts.undo();
                return Err(Ending::infra(text));
            }
            Err(ToolError::RespondToModel(text)) => Ok(TriedWrite {
                refused: Some(text),
                ..TriedWrite::default()
            }),
            Ok(_) => {
                let others = &self.others;
                let judgement = others.judge(&mut self.parts, call, trial).await;
                judgement.map(|judgement| {
                    let change = judgement.wanted.then(|| self.parts.patch()).flatten();
                    TriedWrite {
                        refused: None,
                        judgement,
                        change,
                    }
                })
            }
        };
        self.parts.undo()?;
        tried
    }
}
