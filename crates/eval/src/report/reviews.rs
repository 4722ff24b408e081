//! [`review_tally`]: the reviews of a run's attempts counted (the article's "how often reviewers
//! reject a patch"), from the brief list each `result.json` keeps of its run's reviews.

use plumb_protocol::ReviewVerdict;

use super::summary::ReviewTally;
use super::tally::median;
use crate::result::AttemptResult;

/// The review figures of the finished attempts in `results`.
pub(crate) fn review_tally(results: &[AttemptResult]) -> ReviewTally {
    let mut tally = ReviewTally::default();
    let mut waits = Vec::new();
    for result in results
        .iter()
        .filter(|r| r.counts() && !r.reviews.is_empty())
    {
        tally.attempts += 1;
        for step in &result.reviews {
            tally.reviews += 1;
            match step.model_verdict {
                Some(ReviewVerdict::Approve) => tally.approved += 1,
                Some(ReviewVerdict::RequestChanges) => tally.requested_changes += 1,
                // The reviewer's tool offers only the two; anything else is no usable verdict.
                Some(ReviewVerdict::NeedsAttention | ReviewVerdict::NotReviewed) | None => {
                    tally.no_verdict += 1
                }
            }
            if step.verdict == ReviewVerdict::NeedsAttention {
                tally.needs_attention += 1;
            }
            waits.push(step.ms as f64 / 1000.0);
        }
        let rejected =
            |verdict: Option<ReviewVerdict>| verdict == Some(ReviewVerdict::RequestChanges);
        if result
            .reviews
            .first()
            .is_some_and(|s| rejected(s.model_verdict))
        {
            tally.first_rejected += 1;
        }
        if result.reviews.iter().any(|s| s.sent_back) {
            tally.sent_back += 1;
            tally.sent_back_verified += usize::from(result.verified());
            tally.sent_back_resolved += usize::from(result.resolved());
        }
        // Only a delivered patch is the one its last review read.
        let last = result.reviews.last().and_then(|s| s.model_verdict);
        if result.verified() {
            if last == Some(ReviewVerdict::Approve) {
                tally.delivered_approved += 1;
                tally.delivered_approved_resolved += usize::from(result.resolved());
            } else if rejected(last) {
                tally.delivered_rejected += 1;
                tally.delivered_rejected_resolved += usize::from(result.resolved());
            }
        }
    }
    tally.seconds = waits.iter().sum();
    tally.median_seconds = median(waits);
    tally
}

impl ReviewTally {
    /// The figures in sentences, for the terminal and the HTML report; `None` when nothing was
    /// reviewed (review off, or no change verified).
    pub fn sentences(&self) -> Option<Vec<String>> {
        if self.reviews == 0 {
            return None;
        }
        let seconds = self
            .median_seconds
            .map_or_else(|| "-".to_string(), |s| format!("{s:.0}"));
        Some(vec![
            format!(
                "{} reviews of {} attempts: {} approved, {} requested changes, {} gave no usable verdict; {} shown as needs attention; median {seconds} s a review ({:.0} s in all)",
                self.reviews,
                self.attempts,
                self.approved,
                self.requested_changes,
                self.no_verdict,
                self.needs_attention,
                self.seconds
            ),
            format!(
                "the first review rejected {} of {} verified changes; {} attempts sent back, {} verified again, {} resolved",
                self.first_rejected,
                self.attempts,
                self.sent_back,
                self.sent_back_verified,
                self.sent_back_resolved
            ),
            format!(
                "delivered with an approval: {} ({} resolved); delivered over a request for changes: {} ({} resolved)",
                self.delivered_approved,
                self.delivered_approved_resolved,
                self.delivered_rejected,
                self.delivered_rejected_resolved
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use plumb_protocol::ReviewStep;
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::report::fixtures::{empty, infra, scored};

    fn step(round: u32, said: Option<ReviewVerdict>, sent_back: bool, ms: u64) -> ReviewStep {
        ReviewStep {
            round,
            verdict: said.unwrap_or(ReviewVerdict::NeedsAttention),
            model_verdict: said,
            sent_back,
            ms,
        }
    }

    fn reviewed(mut result: AttemptResult, steps: Vec<ReviewStep>) -> AttemptResult {
        result.reviews = steps;
        result
    }

    #[test]
    fn reviews_are_counted_by_the_reviewers_answer_and_judged_by_the_score() {
        const APPROVE: Option<ReviewVerdict> = Some(ReviewVerdict::Approve);
        const REQUEST: Option<ReviewVerdict> = Some(ReviewVerdict::RequestChanges);
        let mut flagged = step(1, APPROVE, false, 4_000);
        flagged.verdict = ReviewVerdict::NeedsAttention;
        let results = [
            // a: approved at once, resolved.
            reviewed(
                scored("a", 1, true, true),
                vec![step(1, APPROVE, false, 10_000)],
            ),
            // b: sent back, approved the second time, but the score says unresolved.
            reviewed(
                scored("b", 1, false, true),
                vec![
                    step(1, REQUEST, true, 20_000),
                    step(2, APPROVE, false, 30_000),
                ],
            ),
            // c: sent back, asked again with no returns left: delivered over the objection, resolved.
            reviewed(
                scored("c", 1, true, true),
                vec![
                    step(1, REQUEST, true, 2_000),
                    step(2, REQUEST, false, 2_000),
                ],
            ),
            // d: sent back, then out of rounds: nothing delivered.
            reviewed(empty("d", 1), vec![step(1, REQUEST, true, 6_000)]),
            // e: no usable verdict; f: a tamper flag forced needs-attention over an approval.
            reviewed(
                scored("e", 1, false, true),
                vec![step(1, None, false, 1_000)],
            ),
            reviewed(scored("f", 1, true, true), vec![flagged]),
            // Not reviewed, or not finished: not counted.
            scored("g", 1, false, false),
            reviewed(infra("h", 1), vec![step(1, APPROVE, false, 9_000)]),
        ];

        let tally = review_tally(&results);

        let expected = ReviewTally {
            attempts: 6,
            reviews: 8,
            approved: 3,
            requested_changes: 4,
            no_verdict: 1,
            needs_attention: 2,
            first_rejected: 3,
            sent_back: 3,
            sent_back_verified: 2,
            sent_back_resolved: 1,
            delivered_approved: 3,
            delivered_approved_resolved: 2,
            delivered_rejected: 1,
            delivered_rejected_resolved: 1,
            // 1, 2, 2, 4, 6, 10, 20, 30 s.
            median_seconds: Some(5.0),
            seconds: 75.0,
        };
        assert_eq!(tally, expected);
        let sentences = tally.sentences().unwrap();
        assert!(
            sentences[1].starts_with("the first review rejected 3 of 6 verified changes"),
            "{sentences:?}"
        );
        assert_eq!(ReviewTally::default().sentences(), None);
    }
}
