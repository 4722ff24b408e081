//! The review of a verified change (docs/contracts.md §5 step 7): a reviewer model reads the
//! ticket, the diff and the check report and answers approve or request changes, with notes tied to
//! a file and line. The verdict a person sees is "needs attention" whenever the tamper scan flagged
//! anything, or the reviewer gave no usable verdict, whatever the reviewer said.

use serde::{Deserialize, Serialize};

/// What the reviewer concluded, or what plumb made of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewVerdict {
    Approve,
    RequestChanges,
    /// A person must look closely: the tamper scan flagged the diff, or no usable verdict came.
    NeedsAttention,
    /// No reviewer read the change: the only one at hand was a small model, whose verdicts were
    /// not worth reading (`review.small_model`); the review's summary says so.
    NotReviewed,
}

impl ReviewVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewVerdict::Approve => "approve",
            ReviewVerdict::RequestChanges => "request_changes",
            ReviewVerdict::NeedsAttention => "needs_attention",
            ReviewVerdict::NotReviewed => "not_reviewed",
        }
    }

    /// The words a person reads.
    pub fn words(self) -> &'static str {
        match self {
            ReviewVerdict::Approve => "approve",
            ReviewVerdict::RequestChanges => "request changes",
            ReviewVerdict::NeedsAttention => "needs attention",
            ReviewVerdict::NotReviewed => "not reviewed",
        }
    }
}

/// One remark of the reviewer, tied to a place in the diff when it names one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewNote {
    /// The file, relative to the repository root; empty for a remark on the whole change.
    #[serde(default)]
    pub file: String,
    /// The line in the changed file (1-based); `None` for the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    pub note: String,
}

impl ReviewNote {
    /// `path:line: note`, `path: note` or the note alone.
    pub fn sentence(&self) -> String {
        match (self.file.as_str(), self.line) {
            ("", _) => self.note.clone(),
            (file, Some(line)) => format!("{file}:{line}: {}", self.note),
            (file, None) => format!("{file}: {}", self.note),
        }
    }
}

/// The review of one verified change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    /// The reviewer's model spec.
    pub reviewer: String,
    /// The verdict a person sees: the reviewer's, or `needs_attention` when `attention` is not empty.
    pub verdict: ReviewVerdict,
    /// What the reviewer itself answered; `None` when it gave no usable verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_verdict: Option<ReviewVerdict>,
    /// The reviewer's summary in a sentence or two.
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub notes: Vec<ReviewNote>,
    /// Why a person must look whatever the reviewer said: each tamper flag, a reviewer that gave
    /// no verdict, a diff too long to show it whole.
    #[serde(default)]
    pub attention: Vec<String>,
    /// The SHA-256 of the diff the reviewer read.
    pub patch_sha256: String,
    /// 1 for the first review of the run, 2 after the run went back once with notes, …
    pub round: u32,
    /// Set when no model read the change, saying why (the only reviewer at hand was a small
    /// model and `review.small_model` is off); `model_verdict` is then `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_reviewed: Option<String>,
}

/// One review of a run, in brief: what `plumb eval` counts ("how often reviewers reject a
/// patch", and what a review costs). The whole review is in the journal's `reviewed` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewStep {
    /// 1 for the run's first review, 2 after it went back once, …
    pub round: u32,
    /// The verdict a person sees (see [`Review::verdict`]).
    pub verdict: ReviewVerdict,
    /// What the reviewer itself answered; `None` when it gave no usable verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_verdict: Option<ReviewVerdict>,
    /// The run went back to the fixer with this review's notes.
    pub sent_back: bool,
    /// Time waiting for the reviewer's reply (a part of the report's `timings.model_ms`).
    pub ms: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_names_its_place_when_it_has_one() {
        let mut note = ReviewNote {
            file: "src/a.py".into(),
            line: Some(4),
            note: "off by one".into(),
        };
        assert_eq!(note.sentence(), "src/a.py:4: off by one");
        note.line = None;
        assert_eq!(note.sentence(), "src/a.py: off by one");
        note.file.clear();
        assert_eq!(note.sentence(), "off by one");
    }

    #[test]
    fn verdicts_serialise_in_snake_case() {
        assert_eq!(
            serde_json::to_string(&ReviewVerdict::RequestChanges).unwrap(),
            "\"request_changes\""
        );
        assert_eq!(ReviewVerdict::NeedsAttention.words(), "needs attention");
    }
}
