//! The seam between the loop and the helpers (ARCHITECTURE.md, "Strategies beside the loop"). The loop
//! asks the model, runs the tool it asks for and answers `done` with the check ladder; everything
//! that only some models or some tasks need — the guided phases, the figure search, the
//! candidates, the notes on Python errors — is a [`Policy`] the loop calls at named points and
//! never names:
//!
//! 1. [`Policy::shape_request`] — before a request: the tools offered, the next step.
//! 2. [`Policy::choose_reply`] — with the model's reply: sample others and choose among them.
//! 3. [`Policy::before_tool`] — before a tool runs: run it (its arguments maybe rewritten) or
//!    refuse it with a note.
//! 4. [`Policy::after_tool`] — after its result: keep it, add to what the model is told, or undo
//!    the write.
//! 5. [`Policy::at_done`] — when the model says `done`, before the ladder runs.
//!
//! Two more points serve the choosing helper: [`Policy::trial`] says how a write would be
//! judged, [`Policy::judge`] judges it once made (and undone after). A helper sees the run only
//! through a [`RunHandle`]: run tests on the workspace or on the original code, read and write a
//! file of the workspace, undo the last write, emit an event. Nothing here decides success: the
//! ladder runs in full at `done` whatever a helper said.

use async_trait::async_trait;
use plumb_context::templates::TemplateError;
use plumb_model::ModelRequest;
use plumb_protocol::{Event, ModelReply, ToolCall};
use plumb_tools::TestRun;
use plumb_verify::Runner;
use serde_json::Value;

use crate::baseline::Baseline;
use crate::ending::Ending;

/// What a request offers and asks, as the helpers shape it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RequestShape {
    /// The tools the reply may call; `None` is every tool.
    pub allowed_tools: Option<Vec<String>>,
    /// The next step in one sentence, shown at the end of the request.
    pub next_step: Option<String>,
}

/// What a helper says before a tool runs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Gate {
    Run,
    /// Run it with these arguments instead, and start its answer with `note`.
    Rewrite {
        arguments: Value,
        note: String,
    },
    /// Do not run it; this sentence is the answer.
    Refuse(String),
    /// The helper could not say what it had to (a prompt template failed: plumb's own bug): the
    /// run ends, with this as the reason, rather than send the model half a sentence.
    Fail(String),
}

/// A tool call's result as the model will be told it, which `after_tool` may change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ToolOutcome {
    /// False when the tool refused the call, a helper undid its write, or a check failed: the
    /// model is told so ("Error: …") and the call counts as a failed action.
    pub ok: bool,
    /// The answer, in full (the loop shortens what the model sees; the journal keeps it all).
    pub text: String,
    /// One line for the history once the answer is old.
    pub summary: String,
    /// The tool ran (a helper did not refuse the call, and it was not a repeated read).
    pub ran: bool,
    /// The call changed files.
    pub changed: bool,
    /// A helper undid the call's write: the workspace is as it was before the call.
    pub undone: bool,
    /// The test output a helper's check after the call produced, for the helpers after it.
    pub report: String,
}

/// How a sampled reply's write is judged, as the helper that judges it says before trying it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Trial {
    /// A fix: judged by the tests after it. `vote`: while nothing but the old tests still
    /// passing can judge a fix, every sample is tried and the change most of them make wins.
    Fix { vote: bool },
    /// A test: the helpers that judge tests find what it should assert by running it, so it is
    /// not sampled again.
    Test,
    /// Trying it shows nothing: it would be refused (the sentence says why).
    Unwanted(String),
    /// The helper could not say why it would refuse it (see [`Gate::Fail`]).
    Failed(String),
}

/// What a tried write showed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Judgement {
    /// It does what the step needs.
    pub wanted: bool,
    /// It is confirmed beyond the tests (a fix the fix probe ties to the ticket's figures): the
    /// first such write is taken without a vote.
    pub confirmed: bool,
    /// What the tries showed, for the journal.
    pub verdict: String,
    /// The helper would undo it: a round spent on it teaches only what the undo says.
    pub undone: bool,
}

/// A reply and the model time it took.
pub(crate) struct Chosen {
    pub reply: ModelReply,
    pub duration_ms: u64,
}

/// A helper: called at each hook point, in the order the helpers were selected.
#[async_trait]
pub(crate) trait Policy: Send + Sync {
    /// Before a request: restrict the tools, name the next step.
    fn shape_request(&self, _shape: &mut RequestShape) -> Result<(), TemplateError> {
        Ok(())
    }

    /// True for the helper that chooses among replies (the first such helper is the one asked).
    fn chooses(&self) -> bool {
        false
    }

    /// With the model's (normalised) reply: sample others and choose one.
    async fn choose_reply(
        &mut self,
        _run: &mut dyn ChoiceHandle,
        _request: &ModelRequest,
        first: Chosen,
    ) -> Result<Chosen, Ending> {
        Ok(first)
    }

    /// How trying `call` would be judged by this helper; `None`: it does not judge it.
    fn trial(&self, _call: &ToolCall) -> Option<Trial> {
        None
    }

    /// Judges a tried write, made on the workspace as `trial` said (undone after).
    async fn judge(
        &self,
        _run: &mut dyn RunHandle,
        _call: &ToolCall,
        _trial: &Trial,
    ) -> Result<Option<Judgement>, Ending> {
        Ok(None)
    }

    /// Before a tool runs. The first helper that does not say `Run` decides.
    fn before_tool(&self, _call: &ToolCall) -> Gate {
        Gate::Run
    }

    /// After a tool ran (or was refused): what the model is told, kept or undone.
    async fn after_tool(
        &mut self,
        _run: &mut dyn RunHandle,
        _call: &ToolCall,
        _outcome: &mut ToolOutcome,
    ) -> Result<(), Ending> {
        Ok(())
    }

    /// The model said `done`; the ladder runs next.
    fn at_done(&mut self) {}
}

/// What a helper may do to the run.
#[async_trait]
pub(crate) trait RunHandle: Send {
    /// The round going on (1-based).
    fn round(&self) -> u32;
    fn ticket(&self) -> &str;
    /// The runner of the project's test command.
    fn runner(&self) -> Runner;
    fn baseline(&self) -> &Baseline;
    /// A workspace file's text as it is now, read through the confined reader.
    fn read(&self, path: &str) -> Option<String>;
    /// A file's text at the baseline.
    fn read_original(&self, path: &str) -> Option<String>;
    /// A file's text before the call in hand (at the last checkpoint).
    fn read_before(&self, path: &str) -> Option<String>;
    /// Writes a workspace file (confined to the workspace, never through a link).
    fn write(&mut self, path: &str, text: &str) -> Result<(), Ending>;
    /// The change so far, as a patch.
    fn patch(&self) -> Option<String>;
    /// The test command on the workspace, narrowed to `tests` (all when empty).
    async fn run_tests(&mut self, tests: &[String]) -> Result<TestRun, Ending>;
    /// `tests` on the original source with only the test changes made so far (what the ladder's
    /// reproduce step runs).
    async fn run_on_original(&mut self, tests: &[String]) -> Result<TestRun, Ending>;
    /// `tests` on a copy of the original source in which `path` reads `text`; nothing of it
    /// reaches the workspace.
    async fn run_on_original_with(
        &mut self,
        path: &str,
        text: &str,
        tests: &[String],
    ) -> Result<TestRun, Ending>;
    /// Puts the workspace back to the last checkpoint: the state before the call in hand.
    fn undo(&mut self) -> Result<(), Ending>;
    async fn emit(&self, event: Event);
}

/// What the choosing helper may do besides: ask the model again and try a reply's write.
#[async_trait]
pub(crate) trait ChoiceHandle: RunHandle {
    /// Another sample of `request` (`attempt` 1, 2, …): `None` when the model has no other reply
    /// to give; `Err` ends the run (a cancel).
    async fn sample_again(
        &mut self,
        request: &ModelRequest,
        attempt: u32,
    ) -> Result<Option<Chosen>, Ending>;
    /// How the other helpers would judge `call`: the first that says.
    fn trial(&self, call: &ToolCall) -> Option<Trial>;
    /// Makes `call`'s write on the workspace, has it judged as `trial` says, and undoes it.
    async fn try_write(&mut self, call: &ToolCall, trial: &Trial) -> Result<TriedWrite, Ending>;
}

/// What trying one write showed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TriedWrite {
    /// The tool refused it (the sentence); nothing was judged.
    pub refused: Option<String>,
    pub judgement: Judgement,
    /// The patch the write made, when it was wanted (for a vote).
    pub change: Option<String>,
}

/// The selected helpers, in order: the loop calls each hook point through here.
#[derive(Default)]
pub(crate) struct Policies(Vec<Box<dyn Policy>>);

impl Policies {
    pub(crate) fn new(policies: Vec<Box<dyn Policy>>) -> Self {
        Self(policies)
    }

    /// The request's shape as the helpers make it; an error is a template of plumb's own that
    /// failed.
    pub(crate) fn shape_request(&self) -> Result<RequestShape, TemplateError> {
        let mut shape = RequestShape::default();
        for policy in &self.0 {
            policy.shape_request(&mut shape)?;
        }
        Ok(shape)
    }

    pub(crate) fn before_tool(&self, call: &ToolCall) -> Gate {
        self.0
            .iter()
            .map(|policy| policy.before_tool(call))
            .find(|gate| *gate != Gate::Run)
            .unwrap_or(Gate::Run)
    }

    pub(crate) async fn after_tool(
        &mut self,
        run: &mut dyn RunHandle,
        call: &ToolCall,
        outcome: &mut ToolOutcome,
    ) -> Result<(), Ending> {
        for policy in &mut self.0 {
            policy.after_tool(run, call, outcome).await?;
        }
        Ok(())
    }

    pub(crate) fn at_done(&mut self) {
        for policy in &mut self.0 {
            policy.at_done();
        }
    }

    /// The index of the helper that chooses among replies, if one does.
    pub(crate) fn chooser(&self) -> Option<usize> {
        self.0.iter().position(|policy| policy.chooses())
    }

    /// The helper at `index` and the others (before and after it).
    pub(crate) fn one_and_others(
        &mut self,
        index: usize,
    ) -> (&mut Box<dyn Policy>, OtherPolicies<'_>) {
        let (before, rest) = self.0.split_at_mut(index);
        let (one, after) = rest
            .split_first_mut()
            .unwrap_or_else(|| unreachable!("index is below the length"));
        (one, OtherPolicies { before, after })
    }
}

/// The helpers other than the one choosing a reply.
pub(crate) struct OtherPolicies<'a> {
    before: &'a mut [Box<dyn Policy>],
    after: &'a mut [Box<dyn Policy>],
}

impl OtherPolicies<'_> {
    fn all(&self) -> impl Iterator<Item = &Box<dyn Policy>> {
        self.before.iter().chain(self.after.iter())
    }

    pub(crate) fn before_tool(&self, call: &ToolCall) -> Gate {
        self.all()
            .map(|policy| policy.before_tool(call))
            .find(|gate| *gate != Gate::Run)
            .unwrap_or(Gate::Run)
    }

    pub(crate) fn trial(&self, call: &ToolCall) -> Option<Trial> {
        self.all().find_map(|policy| policy.trial(call))
    }

    pub(crate) async fn judge(
        &self,
        run: &mut dyn RunHandle,
        call: &ToolCall,
        trial: &Trial,
    ) -> Result<Judgement, Ending> {
        let mut all = Judgement {
            wanted: true,
            ..Judgement::default()
        };
        let mut verdicts = Vec::new();
        for policy in self.all() {
            if let Some(judgement) = policy.judge(run, call, trial).await? {
                all.wanted &= judgement.wanted;
                all.confirmed |= judgement.confirmed;
                all.undone |= judgement.undone;
                verdicts.push(judgement.verdict);
            }
        }
        if verdicts.is_empty() {
            all.wanted = false;
        }
        all.verdict = verdicts.join("; ");
        Ok(all)
    }
}
