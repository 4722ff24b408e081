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

    /// The run was cancelled while `doing` (a sentence's end: "while the model was thinking").
    pub(crate) fn cancelled(doing: &str) -> Self {
        Self::new(Outcome::Cancelled, format!("the run was cancelled {doing}"))
    }
}

/// Milliseconds since `since`.
pub(crate) fn elapsed_ms(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}
