//! The guided phases' state machine, step by step: the order of the work (`flow.rs`), the
//! figure trace's refusals and notes (`trace.rs`), and what a test run is read as (`verdicts.rs`).

mod flow;
mod notes;
mod trace;
mod verdicts;

use serde_json::json;

use plumb_protocol::TestCounts;
use plumb_verify::{FailureReading, Runner};

use super::verdict::explain_mistake;
use super::*;
use crate::helpers::trace::Pointer;
use crate::policy::Trial;

/// The phases' words as the model reads them with the figures helper on: the tests read what
/// the model is told, through the templates.
impl Phases {
    fn next_step_text(&self) -> Option<String> {
        self.next_step()
            .map(|step| words::next_step(&step, true).unwrap())
    }

    fn record_text(&mut self, check: &PhaseCheck, verdict: CheckVerdict) -> String {
        words::recorded(self.record(check, verdict), true).unwrap()
    }

    fn refusal_said(&self, call: &ToolCall) -> Option<String> {
        self.refusal(call).map(|note| words::note(&note).unwrap())
    }

    /// As the answer of the failed edit gets it: after a line end.
    fn after_failed_edit_said(&self, call: &ToolCall) -> Option<String> {
        self.after_failed_edit(call)
            .map(|note| format!("\n{}", words::note(&note).unwrap()))
    }

    fn rebase_said(&self, call: &ToolCall) -> Option<(serde_json::Value, String)> {
        self.rebase_on_undone(call)
            .map(|(arguments, note)| (arguments, words::answer_start(&note).unwrap()))
    }

    fn to_the_code_said(&self, call: &ToolCall) -> Option<(serde_json::Value, String)> {
        self.to_the_code(call)
            .map(|(arguments, note)| (arguments, words::answer_start(&note).unwrap()))
    }
}

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments,
    }
}

fn verdict(now: TestVerdict, original: Option<TestVerdict>) -> CheckVerdict {
    CheckVerdict {
        now,
        original,
        same_failure: false,
        broke_old: false,
        broke_code: false,
        passes_more: false,
    }
}

const TEST: &str = "tests/test_gst.py";

fn source_edit() -> ToolCall {
    call("edit_file", json!({"path": "billing/invoice.py"}))
}

fn test_edit() -> ToolCall {
    call("edit_file", json!({"path": TEST}))
}
