//! The review step (docs/contracts.md §5 step 7): after the check ladder passes, a reviewer model —
//! the fixer's, or `review.model` — reads the ticket, the diff and the check report and answers
//! with one `submit_review` call (for the embedded model, grammar-constrained like its tool calls).
//! A request-changes verdict sends the run back into the loop with the notes, `review.returns`
//! times at most (unset: once for a capable reviewer, never for a small one); after that it stands
//! in the report for the person who approves.
//!
//! The reviewer is a model too, so its word never approves anything: the verdict a person sees is
//! "needs attention" whenever the tamper scan flagged the diff, the reviewer read only part of it,
//! or it gave no usable verdict.
//!
//! A small model is asked only when `review.small_model` says so: on untouched tasks the embedded
//! model's verdict agreed with the hidden tests about once in three, and it told a newcomer
//! "request changes" on a right fix for a reason that made no sense. Otherwise the change is
//! reported "not reviewed", with why, and no request is spent on it.

mod prompt;
mod verdict;

use std::time::Instant;

use plumb_context::templates::TemplateError;
use plumb_model::{ModelClient, ModelRequest, ScriptTurn};
use plumb_protocol::{
    CheckReport, ModelProfile, Review, ReviewStep, ReviewVerdict, ToolCall, Usage,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use self::prompt::{REVIEW_TOOL, Shown};

/// The review step's state across a run.
pub(crate) struct Reviewer {
    /// `None`: the fixer's model reviews.
    model: Option<Box<dyn ModelClient>>,
    /// The reviewer's profile (the fixer's when it reviews).
    profile: ModelProfile,
    settings: plumb_config::Review,
    /// Times a request-changes verdict may send the run back (`review.returns`, or the
    /// reviewer's profile's default).
    returns: u32,
    /// Times a request-changes verdict sent the run back.
    returns_used: u32,
    /// The last review, for the report.
    last: Option<Review>,
    /// Every review so far, in brief, for the report.
    steps: Vec<ReviewStep>,
}

/// What the loop needs of the run to have its change reviewed.
pub(crate) struct Change<'a> {
    pub ticket: &'a str,
    pub checks: &'a [CheckReport],
    /// The tamper flags: (kind, detail).
    pub flags: &'a [(String, String)],
    pub patch: &'a plumb_workspace::Patch,
}

/// A review request, ready to send.
pub(crate) struct Prepared {
    pub request: ModelRequest,
    cut_chars: usize,
    flags: Vec<String>,
    patch_sha256: String,
}

/// One review and what it means for the run.
pub(crate) struct Reviewed {
    pub review: Review,
    pub usage: Usage,
    /// The note `done` answers the fixer with when the run goes back with the reviewer's notes.
    pub back_to_fixer: Option<String>,
}

impl Reviewer {
    /// `fixer_profile` is the fixer model's, for when `model` is `None` (the fixer reviews).
    pub(crate) fn new(
        model: Option<Box<dyn ModelClient>>,
        settings: plumb_config::Review,
        fixer_profile: ModelProfile,
    ) -> Self {
        let profile = model.as_ref().map_or(fixer_profile, |m| m.profile());
        Self {
            returns: settings.returns_for(profile),
            profile,
            model,
            settings,
            returns_used: 0,
            last: None,
            steps: Vec::new(),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.settings.enabled
    }

    /// The last review of the run, for its report.
    pub(crate) fn last(&self) -> Option<&Review> {
        self.last.as_ref()
    }

    /// Every review of the run so far, in brief.
    pub(crate) fn steps(&self) -> &[ReviewStep] {
        &self.steps
    }

    /// The review a person sees when no model reads `change`: the reviewer would be a small model
    /// and `review.small_model` is off. `None` when a reviewer is to read it. The tamper flags
    /// still make it "needs attention".
    pub(crate) fn not_reviewed(
        &mut self,
        fixer: &dyn ModelClient,
        change: &Change<'_>,
    ) -> Option<Review> {
        if self.profile != ModelProfile::Small || self.settings.small_model {
            return None;
        }
        let reviewer = self.model.as_deref().unwrap_or(fixer).name();
        let attention: Vec<String> = change
            .flags
            .iter()
            .map(|(_, detail)| format!("tamper scan: {detail}"))
            .collect();
        let review = Review {
            not_reviewed: Some(format!(
                "the reviewer would be {reviewer}, a small model whose verdicts measured no \
                 better than a guess: read the diff yourself, or set review.model to a capable \
                 model (review.small_model = true asks the small one anyway)"
            )),
            summary: String::new(),
            reviewer,
            verdict: if attention.is_empty() {
                ReviewVerdict::NotReviewed
            } else {
                ReviewVerdict::NeedsAttention
            },
            model_verdict: None,
            notes: Vec::new(),
            attention,
            patch_sha256: change.patch.sha256.clone(),
            round: self.last.as_ref().map_or(1, |last| last.round + 1),
        };
        self.last = Some(review.clone());
        Some(review)
    }

    /// The request that asks the reviewer about `change`, for [`Reviewer::review`] (and the
    /// journal: it is a model request like any other).
    pub(crate) fn prepare(&self, change: Change<'_>) -> Result<Prepared, TemplateError> {
        let (diff, cut_chars) = prompt::cut_diff(&change.patch.text, self.settings.max_diff_chars);
        let flags: Vec<String> = change.flags.iter().map(|(_, d)| d.clone()).collect();
        let request = ModelRequest {
            messages: prompt::messages(&Shown {
                ticket: change.ticket,
                checks: change.checks,
                flags: &flags,
                diff,
                cut_chars,
            })?,
            tools: vec![prompt::review_tool()?],
            allowed_tools: Some(vec![REVIEW_TOOL.to_string()]),
            next_step: None,
        };
        Ok(Prepared {
            request,
            cut_chars,
            flags,
            patch_sha256: change.patch.sha256.clone(),
        })
    }

    /// Sends the prepared request to the reviewer and reads its answer. `None` when the run was
    /// cancelled while the reviewer was reading.
    pub(crate) async fn review(
        &mut self,
        fixer: &dyn ModelClient,
        prepared: Prepared,
        cancel: &CancellationToken,
    ) -> Option<Reviewed> {
        let Prepared {
            request,
            cut_chars,
            flags,
            patch_sha256,
        } = prepared;
        let model = self.model.as_deref().unwrap_or(fixer);
        let started = Instant::now();
        let reply = tokio::select! {
            reply = model.complete(&request) => reply,
            () = cancel.cancelled() => return None,
        };
        let (said, usage) = match reply {
            Ok(reply) => (verdict::read_reply(&reply), reply.usage),
            Err(err) => (
                Err(format!("the reviewer's model failed: {err}")),
                Usage::default(),
            ),
        };
        let mut attention: Vec<String> = flags
            .iter()
            .map(|flag| format!("tamper scan: {flag}"))
            .collect();
        if cut_chars > 0 {
            attention.push(format!(
                "the diff is longer than review.max_diff_chars ({}), so the reviewer read only its start",
                self.settings.max_diff_chars
            ));
        }
        let (model_verdict, summary, notes) = match said {
            Ok(said) => (Some(said.verdict), said.summary, said.notes),
            Err(why) => {
                attention.push(format!("no usable review: {why}"));
                (None, String::new(), Vec::new())
            }
        };
        let mut back_to_fixer = None;
        if model_verdict == Some(ReviewVerdict::RequestChanges) && self.returns_used < self.returns
        {
            match prompt::back_to_fixer(&summary, &notes) {
                Ok(note) => {
                    self.returns_used += 1;
                    back_to_fixer = Some(note);
                }
                // The review still stands for the person; only the fixer does not hear it.
                Err(error) => attention.push(format!(
                    "the reviewer's notes were not passed back to the fixer: {error}"
                )),
            }
        }
        let verdict = match model_verdict {
            Some(verdict) if attention.is_empty() => verdict,
            _ => ReviewVerdict::NeedsAttention,
        };
        let review = Review {
            reviewer: model.name(),
            verdict,
            model_verdict,
            summary,
            notes,
            attention,
            patch_sha256,
            round: self.last.as_ref().map_or(1, |last| last.round + 1),
            not_reviewed: None,
        };
        self.steps.push(ReviewStep {
            round: review.round,
            verdict: review.verdict,
            model_verdict: review.model_verdict,
            sent_back: back_to_fixer.is_some(),
            ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
        self.last = Some(review.clone());
        Some(Reviewed {
            review,
            usage,
            back_to_fixer,
        })
    }
}

/// The reviewer's answer behind `review` as a scripted turn, for a replay: the same verdict,
/// summary and notes; no call when the reviewer gave no usable verdict.
pub(crate) fn as_script_turn(review: &Review) -> ScriptTurn {
    let tool_calls = match review.model_verdict {
        Some(verdict) => vec![ToolCall {
            id: format!("review_{}", review.round),
            name: REVIEW_TOOL.to_string(),
            arguments: json!({
                "verdict": verdict.as_str(),
                "summary": review.summary,
                "notes": review.notes,
            }),
        }],
        None => Vec::new(),
    };
    ScriptTurn {
        content: String::new(),
        tool_calls,
        alternatives: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
