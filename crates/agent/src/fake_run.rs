//! A run for the helpers' unit tests: files in memory, test runs answered from a script in the
//! order they are asked for, every question and undo recorded. Each hook point of a helper is
//! tested against it without a sandbox or a model.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use plumb_model::ModelRequest;
use plumb_protocol::{Event, TestCounts, ToolCall};
use plumb_tools::TestRun;
use plumb_verify::{Runner, TestOutcome, TestResults};

use crate::baseline::Baseline;
use crate::ending::Ending;
use crate::policy::{ChoiceHandle, Chosen, RunHandle, Trial, TriedWrite};

/// Where a test run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Workspace,
    Original,
}

#[derive(Default)]
pub(crate) struct FakeRun {
    pub ticket: String,
    pub runner: Option<Runner>,
    pub baseline: Baseline,
    /// The workspace as it is now, before the call in hand, and at the baseline.
    pub files: BTreeMap<String, String>,
    pub before: BTreeMap<String, String>,
    pub original: BTreeMap<String, String>,
    /// The answers to the test runs, in order.
    pub runs: VecDeque<(Side, TestRun)>,
    /// What was run, in order: where and narrowed to what.
    pub asked: Vec<(Side, Vec<String>)>,
    pub undone: u32,
    pub events: Mutex<Vec<Event>>,
    /// For the choosing hook: the samples `sample_again` gives, and what trying each write shows.
    pub samples: VecDeque<Chosen>,
    pub tries: VecDeque<TriedWrite>,
    pub trial: Option<Trial>,
}

/// A test run with these per-test outcomes (counts made from them) and this failure excerpt.
pub(crate) fn test_run(outcomes: &[(&str, TestOutcome)], excerpt: &str) -> TestRun {
    let count = |which: TestOutcome| outcomes.iter().filter(|(_, o)| *o == which).count() as u32;
    let counts = TestCounts {
        passed: count(TestOutcome::Passed),
        failed: count(TestOutcome::Failed),
        errors: count(TestOutcome::Error),
        ..TestCounts::default()
    };
    TestRun {
        argv: vec!["pytest".into()],
        counts: Some(counts),
        results: Some(TestResults {
            tests: outcomes
                .iter()
                .map(|(id, outcome)| (id.to_string(), *outcome))
                .collect(),
            ..TestResults::default()
        }),
        exit_code: Some(i32::from(counts.failed + counts.errors > 0)),
        timed_out: false,
        cancelled: false,
        duration: Duration::ZERO,
        excerpt: excerpt.to_string(),
        limits_hit: Vec::new(),
        note: None,
    }
}

/// A baseline with these per-test outcomes.
pub(crate) fn baseline(outcomes: &[(&str, TestOutcome)]) -> Baseline {
    let run = test_run(outcomes, "");
    Baseline {
        counts: run.counts.unwrap_or_default(),
        results: run.results,
        flaky: Default::default(),
    }
}

impl FakeRun {
    fn next_run(&mut self, side: Side, tests: &[String]) -> Result<TestRun, Ending> {
        self.asked.push((side, tests.to_vec()));
        match self.runs.pop_front() {
            Some((expected, run)) if expected == side => Ok(run),
            Some((expected, _)) => Err(Ending::infra(format!(
                "the script has a run on {expected:?} next, but one on {side:?} was asked for"
            ))),
            None => Err(Ending::infra(format!(
                "the script has no more runs; asked for {tests:?} on {side:?}"
            ))),
        }
    }
}

#[async_trait]
impl RunHandle for FakeRun {
    fn round(&self) -> u32 {
        1
    }

    fn ticket(&self) -> &str {
        &self.ticket
    }

    fn runner(&self) -> Runner {
        self.runner.unwrap_or(Runner::Pytest)
    }

    fn baseline(&self) -> &Baseline {
        &self.baseline
    }

    fn read(&self, path: &str) -> Option<String> {
        self.files.get(path).cloned()
    }

    fn read_original(&self, path: &str) -> Option<String> {
        self.original.get(path).cloned()
    }

    fn read_before(&self, path: &str) -> Option<String> {
        self.before.get(path).cloned()
    }

    fn write(&mut self, path: &str, text: &str) -> Result<(), Ending> {
        self.files.insert(path.to_string(), text.to_string());
        Ok(())
    }

    fn patch(&self) -> Option<String> {
        Some(format!("{:?}", self.files))
    }

    async fn run_tests(&mut self, tests: &[String]) -> Result<TestRun, Ending> {
        self.next_run(Side::Workspace, tests)
    }

    async fn run_on_original(&mut self, tests: &[String]) -> Result<TestRun, Ending> {
        self.next_run(Side::Original, tests)
    }

    async fn run_on_original_with(
        &mut self,
        _path: &str,
        _text: &str,
        tests: &[String],
    ) -> Result<TestRun, Ending> {
        self.next_run(Side::Original, tests)
    }

    fn undo(&mut self) -> Result<(), Ending> {
        self.files = self.before.clone();
        self.undone += 1;
        Ok(())
    }

    async fn emit(&self, event: Event) {
        if let Ok(mut events) = self.events.lock() {
            events.push(event);
        }
    }
}

#[async_trait]
impl ChoiceHandle for FakeRun {
    async fn sample_again(
        &mut self,
        _request: &ModelRequest,
        _attempt: u32,
    ) -> Result<Option<Chosen>, Ending> {
        Ok(self.samples.pop_front())
    }

    fn trial(&self, _call: &ToolCall) -> Option<Trial> {
        self.trial.clone()
    }

    async fn try_write(&mut self, _call: &ToolCall, _trial: &Trial) -> Result<TriedWrite, Ending> {
        self.tries
            .pop_front()
            .ok_or_else(|| Ending::infra("the script has no more tried writes"))
    }
}
