//! The approval gate (docs/contracts.md §5 step 8): a person approves the exact diff whose SHA-256
//! they were shown, or nothing reaches their repository. A front end implements [`ApprovalGate`]
//! (the terminal's question, the server's approve button); [`ask`] is the one way to get an
//! [`Approval`] from one, and it fails closed: a diff over the size limit is never shown, a diff
//! whose bytes no longer match its SHA-256 is never asked about, a gate that does not answer in
//! time rejects, and a decision that names another SHA-256 is refused. There is no gate that
//! approves without a person.

use std::time::Duration;

use async_trait::async_trait;
use plumb_protocol::{CheckReport, Review};
use plumb_workspace::sha256_hex;

/// What a person is asked to approve.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub run_id: String,
    /// Where the change would go: the repository's folder, or a branch of it.
    pub destination: String,
    pub patch: String,
    /// The SHA-256 of `patch`, which the person is shown and the decision must name.
    pub patch_sha256: String,
    pub checks: Vec<CheckReport>,
    pub flags: Vec<String>,
    pub review: Option<Review>,
}

/// A person's answer, naming the diff it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approve { sha256: String },
    Reject { reason: String },
}

/// Shows a change to a person and returns their decision. An implementation that cannot ask
/// (no terminal, a store that failed) answers `Reject` with the reason.
#[async_trait]
pub trait ApprovalGate: Send + Sync {
    async fn decide(&self, request: &ApprovalRequest) -> Decision;
}

/// Proof that a person approved the diff with this SHA-256; only [`ask`] makes one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    sha256: String,
}

impl Approval {
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
}

/// Asks `gate` about `request`; `Err` says why the change was not approved.
pub async fn ask(
    gate: &dyn ApprovalGate,
    request: &ApprovalRequest,
    limits: &plumb_config::Approval,
) -> Result<Approval, String> {
    let bytes = request.patch.len() as u64;
    if bytes > limits.max_diff_bytes {
        return Err(format!(
            "the diff is {bytes} bytes, over approval.max_diff_bytes ({}), too long to review on screen",
            limits.max_diff_bytes
        ));
    }
    if request.patch.is_empty() {
        return Err("there is no change to approve".to_string());
    }
    let actual = sha256_hex(request.patch.as_bytes());
    if actual != request.patch_sha256 {
        return Err(format!(
            "the diff does not match its SHA-256 ({} expected, {actual} found), so it was not shown",
            request.patch_sha256
        ));
    }
    let waited = Duration::from_secs(limits.timeout_secs);
    let decision = match tokio::time::timeout(waited, gate.decide(request)).await {
        Ok(decision) => decision,
        Err(_) => {
            return Err(format!(
                "no answer within {} s (approval.timeout_secs)",
                limits.timeout_secs
            ));
        }
    };
    match decision {
        Decision::Approve { sha256 } if sha256 == request.patch_sha256 => Ok(Approval { sha256 }),
        Decision::Approve { sha256 } => Err(format!(
            "the approval names the diff {sha256}, not the one shown ({})",
            request.patch_sha256
        )),
        Decision::Reject { reason } => Err(reason),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A gate that answers what it is told, after a delay, and remembers what it was shown.
    struct Scripted {
        answer: Decision,
        delay: Duration,
        shown: Mutex<Vec<String>>,
    }

    #[async_trait]
    impl ApprovalGate for Scripted {
        async fn decide(&self, request: &ApprovalRequest) -> Decision {
            self.shown
                .lock()
                .unwrap()
                .push(request.patch_sha256.clone());
            tokio::time::sleep(self.delay).await;
            self.answer.clone()
        }
    }

    fn gate(answer: Decision) -> Scripted {
        Scripted {
            answer,
            delay: Duration::ZERO,
            shown: Mutex::new(Vec::new()),
        }
    }

    fn request(patch: &str) -> ApprovalRequest {
        ApprovalRequest {
            run_id: "r1".into(),
            destination: "/repo".into(),
            patch: patch.into(),
            patch_sha256: sha256_hex(patch.as_bytes()),
            checks: Vec::new(),
            flags: Vec::new(),
            review: None,
        }
    }

    fn limits() -> plumb_config::Approval {
        plumb_config::Approval::default()
    }

    #[tokio::test]
    async fn an_approval_of_the_shown_sha_is_an_approval() {
        let request = request("+x\n");
        let gate = gate(Decision::Approve {
            sha256: request.patch_sha256.clone(),
        });

        let approval = ask(&gate, &request, &limits()).await.unwrap();

        assert_eq!(approval.sha256(), request.patch_sha256);
    }

    #[tokio::test]
    async fn an_approval_naming_another_diff_is_refused() {
        let request = request("+x\n");
        let gate = gate(Decision::Approve {
            sha256: sha256_hex(b"+y\n"),
        });

        let refused = ask(&gate, &request, &limits()).await.unwrap_err();

        assert!(
            refused.starts_with("the approval names the diff"),
            "{refused}"
        );
    }

    #[tokio::test]
    async fn a_rejection_keeps_its_reason() {
        let request = request("+x\n");
        let gate = gate(Decision::Reject {
            reason: "the person answered no".into(),
        });

        assert_eq!(
            ask(&gate, &request, &limits()).await,
            Err("the person answered no".into())
        );
    }

    #[tokio::test(start_paused = true)]
    async fn no_answer_in_time_rejects() {
        let request = request("+x\n");
        let mut gate = gate(Decision::Approve {
            sha256: request.patch_sha256.clone(),
        });
        gate.delay = Duration::from_secs(601);

        let refused = ask(&gate, &request, &limits()).await.unwrap_err();

        assert_eq!(refused, "no answer within 600 s (approval.timeout_secs)");
    }

    #[tokio::test]
    async fn an_oversized_or_altered_diff_is_never_shown() {
        let big = request(&"+x\n".repeat(10));
        let mut altered = request("+x\n");
        altered.patch.push_str("+y\n");
        let gate = gate(Decision::Approve {
            sha256: big.patch_sha256.clone(),
        });
        let small = plumb_config::Approval {
            max_diff_bytes: 8,
            ..limits()
        };

        let over = ask(&gate, &big, &small).await.unwrap_err();
        let changed = ask(&gate, &altered, &limits()).await.unwrap_err();

        assert_eq!(
            over,
            "the diff is 30 bytes, over approval.max_diff_bytes (8), too long to review on screen"
        );
        assert!(
            changed.starts_with("the diff does not match its SHA-256"),
            "{changed}"
        );
        assert!(gate.shown.lock().unwrap().is_empty());
    }
}
