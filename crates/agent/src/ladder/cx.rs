//! What the ladder's steps share: the run's parts they read ([`Cx`]), the ladder's own state
//! across `done` calls ([`Ladder`]), and how a step reports.

use plumb_protocol::{CheckReport, CheckStatus, CheckStep};
use plumb_tools::{ToolError, ToolOutput};
use plumb_verify::tamper::TamperPolicy;
use plumb_workspace::Workspace;

use crate::baseline::Baseline;
use crate::tester::Tester;

/// The run's parts a `done` reads: the workspace, the test command, the baseline, the settings.
pub(crate) struct Cx<'a> {
    pub workspace: &'a Workspace,
    pub tester: &'a mut Tester,
    pub baseline: &'a Baseline,
    /// The task's own fail-to-pass tests; empty means the new and changed tests.
    pub fail_to_pass: &'a [String],
}

/// The ladder's state: what the last `done` found, kept for the report.
pub(crate) struct Ladder {
    /// The checks of the last `done`.
    pub(crate) checks: Vec<CheckReport>,
    /// Tamper flags of the last `done`: (kind, detail).
    pub(crate) flags: Vec<(String, String)>,
    /// Which tamper kinds block (the defaults, `tamper_block`, `tamper_unblock`).
    pub(super) tamper_policy: TamperPolicy,
    /// The tests the last `done` targeted, and those of them that failed on the baseline source.
    pub(super) target_tests: Vec<String>,
    pub(super) reproduce_failing: Vec<String>,
    /// The baseline run crashed before it named a test, so `reproduce_failing` holds the targets
    /// as plumb gave them (a cargo name filter), not the ids a run reports.
    pub(super) reproduce_crashed: bool,
    /// How many times the model said `done` (names the folders the checks use).
    pub(crate) done_count: u32,
    /// Whether `checks/baseline` in the run folder holds the baseline tree (written once, for lint).
    pub(super) baseline_view_ready: bool,
    /// What staging left out of the baseline (a setup's nested repositories): not the agent's.
    pub(crate) known_nested: Vec<plumb_workspace::KeptOut>,
}

impl Ladder {
    pub(crate) fn new(tamper_policy: TamperPolicy) -> Self {
        Self {
            checks: Vec::new(),
            flags: Vec::new(),
            tamper_policy,
            target_tests: Vec::new(),
            reproduce_failing: Vec::new(),
            reproduce_crashed: false,
            done_count: 0,
            baseline_view_ready: false,
            known_nested: Vec::new(),
        }
    }
}

/// What `done` answers the model.
pub(crate) struct DoneAnswer {
    pub result: Result<ToolOutput, ToolError>,
    pub verified: bool,
}

/// A step's report and the test output worth showing the model when it failed.
pub(crate) type Checked = (CheckReport, String);

pub(crate) fn refuse(text: impl Into<String>) -> DoneAnswer {
    DoneAnswer {
        result: Err(ToolError::RespondToModel(text.into())),
        verified: false,
    }
}

/// A step's report.
pub(crate) fn report(
    step: CheckStep,
    status: CheckStatus,
    evidence: impl Into<String>,
) -> CheckReport {
    CheckReport {
        step,
        status,
        evidence: evidence.into(),
    }
}
