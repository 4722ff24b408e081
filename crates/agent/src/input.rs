//! What reaches a run from outside while it goes: typed operations on one input channel, each
//! with an id (Codex's `Submission { id, op }`). A front end keeps the [`Submitter`] and sends a
//! cancel (Ctrl-C, a person's cancel read from the store, a worker that stops, an attempt taken
//! over) or a person's decision on the change; the run and, once it has ended, the approval
//! question read the [`Inbox`]. One router task reads the channel in order: the first cancel
//! wins and is kept with its reason, so the report says who stopped the run; decisions queue for
//! the approval question, which is also ended by a cancel.
//!
//! In the service, approval is a state of the stored task rather than a question a thread waits
//! on (a task may wait for a person for days), so there only cancels travel on this channel; at a
//! terminal both do.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use tokio::sync::{Mutex, mpsc};
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalGate, ApprovalRequest, Decision};

/// One operation sent to a run, with the id its sender got back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    pub id: u64,
    pub op: Op,
}

/// What can reach a run from outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Stop: roll back, finish the report and the journal.
    Cancel(CancelReason),
    /// A person's answer to the approval question about this run's change.
    Decide(Decision),
}

/// Who or what cancelled a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelReason {
    /// Ctrl-C at the terminal.
    Interrupted,
    /// A person asked for it (the service's cancel).
    Person,
    /// The process running it is stopping; the task goes back for another worker.
    Stopping,
    /// Another attempt took the task over; this one's results would be discarded.
    Superseded,
    /// The eval the run belongs to was stopped (Ctrl-C, or its attempt's worker stopped).
    EvalStopped,
    /// The agent that asked for the run over MCP cancelled it (or went away).
    Caller,
}

impl CancelReason {
    /// The end of a sentence: "the run was cancelled …".
    pub fn words(self) -> &'static str {
        match self {
            CancelReason::Interrupted => "with Ctrl-C",
            CancelReason::Person => "by a person",
            CancelReason::Stopping => "because the worker running it is stopping",
            CancelReason::Superseded => "because another attempt took the task over",
            CancelReason::EvalStopped => "because the eval was stopped",
            CancelReason::Caller => "by the agent that asked for it",
        }
    }
}

/// A new input channel: the sending end for the front end, the reading end for the run. Call it
/// inside a tokio runtime (it starts the router task, which ends when every `Submitter` is gone).
pub fn channel() -> (Submitter, Inbox) {
    open(CancellationToken::new(), None)
}

/// An input channel that also follows `token`: when it is cancelled, so is the run, for
/// `reason`. For front ends that stop many runs at once (the eval runner's Ctrl-C).
pub fn following(token: &CancellationToken, reason: CancelReason) -> (Submitter, Inbox) {
    open(token.child_token(), Some(reason))
}

fn open(cancel: CancellationToken, inherited: Option<CancelReason>) -> (Submitter, Inbox) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let (decided, decisions) = mpsc::unbounded_channel();
    let inbox = Inbox {
        shared: Arc::new(Shared {
            cancel,
            reason: OnceLock::new(),
            inherited,
            decisions: Mutex::new(decisions),
        }),
    };
    tokio::spawn(route(receiver, inbox.shared.clone(), decided));
    let submitter = Submitter {
        sender,
        next_id: Arc::new(AtomicU64::new(1)),
    };
    (submitter, inbox)
}

/// The sending end of a run's input channel; cheap to clone.
#[derive(Clone)]
pub struct Submitter {
    sender: mpsc::UnboundedSender<Submission>,
    next_id: Arc<AtomicU64>,
}

impl Submitter {
    /// Sends `op` and returns its id. An op sent after the run and its approval are over is
    /// dropped: nobody is left to act on it.
    pub fn submit(&self, op: Op) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let _ = self.sender.send(Submission { id, op });
        id
    }

    /// Shorthand for `submit(Op::Cancel(reason))`.
    pub fn cancel(&self, reason: CancelReason) -> u64 {
        self.submit(Op::Cancel(reason))
    }
}

struct Shared {
    cancel: CancellationToken,
    /// The reason sent with the first cancel on the channel.
    reason: OnceLock<CancelReason>,
    /// The reason when the cancel came from the token the channel follows.
    inherited: Option<CancelReason>,
    decisions: Mutex<mpsc::UnboundedReceiver<Decision>>,
}

/// The reading end of a run's input channel; cheap to clone.
#[derive(Clone)]
pub struct Inbox {
    shared: Arc<Shared>,
}

impl Inbox {
    pub fn is_cancelled(&self) -> bool {
        self.shared.cancel.is_cancelled()
    }

    /// Resolves once a cancel has arrived.
    pub async fn cancelled(&self) {
        self.shared.cancel.cancelled().await;
    }

    /// Why the run was cancelled; `None` while it was not.
    pub fn cancel_reason(&self) -> Option<CancelReason> {
        if !self.is_cancelled() {
            return None;
        }
        self.shared.reason.get().copied().or(self.shared.inherited)
    }

    /// A token cancelled with the run, for the parts below the loop that take one (sandboxed
    /// commands, the reviewer).
    pub fn token(&self) -> CancellationToken {
        self.shared.cancel.child_token()
    }
}

/// The approval question answered by what arrives on the channel: the next decision, or a reject
/// once the run is cancelled (or no sender is left to decide).
#[async_trait]
impl ApprovalGate for Inbox {
    async fn decide(&self, _request: &ApprovalRequest) -> Decision {
        let cancelled = |reason: Option<CancelReason>| Decision::Reject {
            reason: format!(
                "cancelled {}",
                reason.map_or("before an answer", CancelReason::words)
            ),
        };
        if self.is_cancelled() {
            return cancelled(self.cancel_reason());
        }
        let mut decisions = self.shared.decisions.lock().await;
        tokio::select! {
            biased;
            () = self.shared.cancel.cancelled() => cancelled(self.cancel_reason()),
            decision = decisions.recv() => decision.unwrap_or_else(|| Decision::Reject {
                reason: "no answer (nothing is left that could send one)".to_owned(),
            }),
        }
    }
}

/// Reads the channel in order until every sender is gone.
async fn route(
    mut receiver: mpsc::UnboundedReceiver<Submission>,
    shared: Arc<Shared>,
    decided: mpsc::UnboundedSender<Decision>,
) {
    while let Some(Submission { op, .. }) = receiver.recv().await {
        match op {
            Op::Cancel(reason) => {
                // The first cancel is the one the report names.
                let _ = shared.reason.set(reason);
                shared.cancel.cancel();
            }
            Op::Decide(decision) => {
                let _ = decided.send(decision);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            run_id: "r".into(),
            destination: "/repo".into(),
            patch: "p".into(),
            patch_sha256: "s".into(),
            checks: Vec::new(),
            flags: Vec::new(),
            review: None,
        }
    }

    async fn settled(inbox: &Inbox) {
        tokio::time::timeout(Duration::from_secs(5), inbox.cancelled())
            .await
            .expect("the cancel reached the inbox");
    }

    #[tokio::test]
    async fn ids_count_up_and_the_first_cancel_is_the_one_kept() {
        let (submitter, inbox) = channel();
        assert_eq!(inbox.cancel_reason(), None);

        let first = submitter.cancel(CancelReason::Person);
        let second = submitter.cancel(CancelReason::Stopping);
        settled(&inbox).await;

        assert_eq!((first, second), (1, 2));
        assert_eq!(inbox.cancel_reason(), Some(CancelReason::Person));
        assert!(inbox.token().is_cancelled());
    }

    #[tokio::test]
    async fn the_gate_answers_with_the_decision_sent_on_the_channel() {
        let (submitter, inbox) = channel();
        let approve = Decision::Approve { sha256: "s".into() };
        let waiting = tokio::spawn({
            let inbox = inbox.clone();
            async move { inbox.decide(&request()).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        submitter.submit(Op::Decide(approve.clone()));

        assert_eq!(waiting.await.unwrap(), approve);
        assert!(!inbox.is_cancelled());
    }

    #[tokio::test]
    async fn a_cancel_ends_the_question_with_a_reject_that_says_who() {
        let (submitter, inbox) = channel();
        let waiting = tokio::spawn({
            let inbox = inbox.clone();
            async move { inbox.decide(&request()).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        submitter.cancel(CancelReason::Interrupted);

        let expected = Decision::Reject {
            reason: "cancelled with Ctrl-C".into(),
        };
        assert_eq!(waiting.await.unwrap(), expected);
        // Asked again after the cancel: the same answer at once.
        assert_eq!(inbox.decide(&request()).await, expected);
    }

    #[tokio::test]
    async fn with_every_sender_gone_the_question_is_answered_no() {
        let (submitter, inbox) = channel();
        drop(submitter);

        let decision = inbox.decide(&request()).await;

        assert!(
            matches!(&decision, Decision::Reject { reason } if reason.starts_with("no answer")),
            "{decision:?}"
        );
    }

    #[tokio::test]
    async fn a_channel_that_follows_a_token_is_cancelled_with_it_for_its_reason() {
        let token = CancellationToken::new();
        let (_submitter, inbox) = following(&token, CancelReason::EvalStopped);
        assert_eq!(inbox.cancel_reason(), None);

        token.cancel();
        settled(&inbox).await;

        assert_eq!(inbox.cancel_reason(), Some(CancelReason::EvalStopped));
    }
}
