//! Why a run's rounds stopped: an outcome and a sentence. The loop, the check ladder and every
//! helper can end a run (a cancel, an infrastructure failure), so this is a leaf every one of
//! them imports.

use std::time::Instant;

use plumb_protocol::Outcome;

/// Why the rounds stopped.
pub(crate) struct Ending {
    pub outcome: Outcome,
    pub reason: String,
}

impl Ending {
    pub(crate) fn new(outcome: Outcome, reason: impl Into<String>) -> Self {
        Self {
            outcome,
            reason: reason.into(),
        }
    }

    /// plumb itself failed (git, the sandbox, the disk).
    pub(crate) fn infra(err: impl std::fmt::Display) -> Self {
        Self::new(Outcome::InfraError, err.to_string())
    }

    /// A step on the workspace failed: over a budget (its limits, the wall clock) when a budget
    /// stopped it, otherwise plumb itself failed.
    pub(crate) fn workspace(err: plumb_workspace::WorkspaceError) -> Self {
        if err.is_budget() {
            Self::new(Outcome::BudgetExceeded, err.to_string())
        } else {
            Self::infra(err)
        }
    }

    /// The run was cancelled while `doing` (a sentence's end: "while the model was thinking").
    pub(crate) fn cancelled(doing: &str) -> Self {
        Self::new(Outcome::Cancelled, format!("the run was cancelled {doing}"))
    }
}

/// Milliseconds since `since`.
pub(crate) fn elapsed_ms(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}
