//! The run as a stored state machine: a task's states and the moves between them.
//!
//! queued → preparing → running ⇄ checking ⇄ reviewing → awaiting approval → approved | rejected,
//! with failed and cancelled reachable from every live state, a live task back to queued when the
//! worker holding it died (a retry on a fresh workspace), and rolled back from awaiting approval
//! (the change discarded) or approved (an applied change undone). Approval is a state of the stored
//! task, not a waiting thread, so a task waiting for a person survives any restart. An attempt of
//! an eval on the queue ends `scored` from any live state: it never waits for a person.

use serde::{Deserialize, Serialize};

/// Where a task is. Stored as its snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Waiting for a worker.
    Queued,
    /// A worker holds it: the workspace, the setup, the baseline.
    Preparing,
    /// The model's rounds.
    Running,
    /// The check ladder, after the model said done.
    Checking,
    /// The reviewer reads the verified change.
    Reviewing,
    /// A verified change waits for a person's decision on its SHA-256.
    AwaitingApproval,
    /// A person approved the diff with that SHA-256.
    Approved,
    /// A person rejected the change.
    Rejected,
    /// The run ended without a change to approve, or its worker died too often.
    Failed,
    /// Cancelled by a person before it ended.
    Cancelled,
    /// The change was discarded, or an applied change undone.
    RolledBack,
    /// An eval's attempt ran and was scored; its result is the attempt's report.
    Scored,
}

impl TaskState {
    /// Every state, in the order of a run.
    pub const ALL: [TaskState; 12] = [
        TaskState::Queued,
        TaskState::Preparing,
        TaskState::Running,
        TaskState::Checking,
        TaskState::Reviewing,
        TaskState::AwaitingApproval,
        TaskState::Approved,
        TaskState::Rejected,
        TaskState::Failed,
        TaskState::Cancelled,
        TaskState::RolledBack,
        TaskState::Scored,
    ];

    /// The name stored in the database and shown by the API.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Queued => "queued",
            TaskState::Preparing => "preparing",
            TaskState::Running => "running",
            TaskState::Checking => "checking",
            TaskState::Reviewing => "reviewing",
            TaskState::AwaitingApproval => "awaiting_approval",
            TaskState::Approved => "approved",
            TaskState::Rejected => "rejected",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
            TaskState::RolledBack => "rolled_back",
            TaskState::Scored => "scored",
        }
    }

    /// The state a stored name stands for.
    pub fn parse(name: &str) -> Option<TaskState> {
        TaskState::ALL
            .into_iter()
            .find(|state| state.as_str() == name)
    }

    /// A worker holds the task and a run is going.
    pub fn is_live(self) -> bool {
        matches!(
            self,
            TaskState::Preparing | TaskState::Running | TaskState::Checking | TaskState::Reviewing
        )
    }

    /// Nothing more happens to the task.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskState::Rejected
                | TaskState::Failed
                | TaskState::Cancelled
                | TaskState::RolledBack
                | TaskState::Scored
        )
    }

    /// Whether a task may move from `self` to `to`.
    pub fn may_become(self, to: TaskState) -> bool {
        use TaskState::*;
        match (self, to) {
            (Queued, Preparing | Failed | Cancelled) => true,
            // A live task whose worker died goes back to the queue for a fresh attempt.
            (from, Queued) if from.is_live() => true,
            (Preparing, Running) => true,
            // The ladder answers `done` with a failure and the rounds go on; the reviewer's request
            // for changes does the same.
            (Running, Checking) | (Checking, Running) | (Checking, Reviewing) => true,
            (Reviewing, Running) => true,
            (Checking | Reviewing, AwaitingApproval) => true,
            (from, Failed | Cancelled | Scored) if from.is_live() => true,
            (AwaitingApproval, Approved | Rejected | Cancelled | RolledBack) => true,
            (Approved, RolledBack) => true,
            _ => false,
        }
    }
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::TaskState;
    use super::TaskState::*;

    #[test]
    fn every_state_reads_back_from_its_name() {
        for state in TaskState::ALL {
            assert_eq!(TaskState::parse(state.as_str()), Some(state));
            let json = serde_json::to_string(&state).unwrap_or_default();
            assert_eq!(json, format!("\"{state}\""));
        }
        assert_eq!(TaskState::parse("done"), None);
    }

    #[test]
    fn a_final_state_goes_nowhere() {
        for from in TaskState::ALL.into_iter().filter(|state| state.is_final()) {
            for to in TaskState::ALL {
                assert!(!from.may_become(to), "{from} → {to}");
            }
        }
    }

    #[test]
    fn only_a_person_s_decision_leaves_awaiting_approval() {
        let next: Vec<TaskState> = TaskState::ALL
            .into_iter()
            .filter(|to| AwaitingApproval.may_become(*to))
            .collect();
        assert_eq!(next, vec![Approved, Rejected, Cancelled, RolledBack]);
        // Not a retry, not a failure: a waiting task holds no worker to lose.
        assert!(!AwaitingApproval.may_become(Queued));
        assert!(!AwaitingApproval.may_become(Failed));
    }

    #[test]
    fn a_change_reaches_a_person_only_through_the_ladder() {
        for from in [Queued, Preparing, Running] {
            assert!(!from.may_become(AwaitingApproval), "{from}");
            assert!(!from.may_become(Approved), "{from}");
        }
        assert!(Checking.may_become(AwaitingApproval));
        assert!(Reviewing.may_become(AwaitingApproval));
    }

    #[test]
    fn a_live_task_may_be_retried_failed_or_cancelled() {
        for from in TaskState::ALL.into_iter().filter(|state| state.is_live()) {
            for to in [Queued, Failed, Cancelled] {
                assert!(from.may_become(to), "{from} → {to}");
            }
        }
    }
}
