//! The settings of the steps after the loop: the review of a verified change and a person's
//! approval of its exact diff (docs/contracts.md §5 steps 7–8).

use plumb_protocol::ModelProfile;
use serde::{Deserialize, Serialize};

/// The reviewer model's read of a verified change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Review {
    /// Whether a reviewer reads every verified change. A repository may only turn it on.
    pub enabled: bool,
    /// The reviewer's model spec; empty means the fixer's model. Another model reads the change
    /// with fresh eyes (the ADR's "ideally a different model than the fixer").
    pub model: String,
    /// How many times a request-changes verdict sends the run back into the loop with the notes.
    /// After that the verdict stands in the report for the person who approves. Unset, it follows
    /// the reviewer ([`Review::returns_for`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returns: Option<u32>,
    /// The longest diff the reviewer is sent, in characters; a longer one is cut, and the review
    /// then needs a person's attention whatever it says.
    pub max_diff_chars: usize,
    /// Whether a small model (the embedded one, or any marked `helpers.profile = "small"`) reads
    /// the change when it is the only reviewer. Off by default: the report then says the change
    /// was not reviewed and why, rather than show a verdict that measured no better than a coin
    /// (docs/approval.md); `review.model` names a capable reviewer instead.
    pub small_model: bool,
}

impl Default for Review {
    fn default() -> Self {
        Self {
            enabled: true,
            model: String::new(),
            returns: None,
            max_diff_chars: 24_000,
            small_model: false,
        }
    }
}

impl Review {
    /// The returns in effect for a reviewer of `profile`: the setting, else once for a capable
    /// reviewer and never for a small one. Measured on the fixed 12 Python tasks with the
    /// embedded 1.5B model reviewing its own fixes (docs/approval.md): it asked for changes on 4
    /// of 7 verified fixes; sent back, the fixer called `done` again on the same diff three times
    /// (each of those the hidden tests pass), and the fourth time edited a right fix (its notes
    /// were wrong) until the time budget ran out. A small reviewer's verdict still stands in the
    /// report for the person who approves.
    pub fn returns_for(&self, profile: ModelProfile) -> u32 {
        self.returns.unwrap_or(match profile {
            ModelProfile::Small => 0,
            ModelProfile::Capable => 1,
        })
    }
}

/// A person's approval of the exact diff they were shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Approval {
    /// Seconds the terminal waits for an answer before it rejects.
    pub timeout_secs: u64,
    /// The longest diff, in bytes, plumb asks a person to approve; a longer one is rejected
    /// (nobody reads it whole), and its patch file is kept.
    pub max_diff_bytes: u64,
}

impl Default for Approval {
    fn default() -> Self {
        Self {
            timeout_secs: 600,
            max_diff_bytes: 1 << 20,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_returns_follow_the_reviewer_and_a_setting_wins() {
        let unset = Review::default();
        let once = Review {
            returns: Some(2),
            ..Review::default()
        };
        assert_eq!(
            (
                unset.returns_for(ModelProfile::Small),
                unset.returns_for(ModelProfile::Capable),
                once.returns_for(ModelProfile::Small),
            ),
            (0, 1, 2)
        );
    }
}
