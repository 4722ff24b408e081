//! The limits a run stops at before its next round: a cancel, the round limit, the wall-clock,
//! token and cost budgets (the cost budget also before a request the last one's cost says would
//! pass it).

use std::time::Duration;

use plumb_protocol::Outcome;

use super::Run;
use crate::ending::Ending;

/// The ending when the wall-clock budget of `secs` seconds ran out.
pub(super) fn wall_clock_ending(secs: u64) -> Ending {
    Ending::new(
        Outcome::BudgetExceeded,
        format!("the wall-clock budget ({secs} s) ran out"),
    )
}

impl Run {
    pub(super) fn limits_reached(&self) -> Option<Ending> {
        let limits = &self.asked.config.limits;
        if self.asked.cancel.is_cancelled() {
            return Some(Ending::new(Outcome::Cancelled, "the run was cancelled"));
        }
        let max_rounds = self.asked.config.max_rounds();
        if self.round >= max_rounds {
            return Some(Ending::new(
                Outcome::RoundLimit,
                format!("the round limit ({max_rounds}) was reached before the checks passed"),
            ));
        }
        if limits.wall_clock_secs > 0
            && self.started.elapsed() >= Duration::from_secs(limits.wall_clock_secs)
        {
            return Some(wall_clock_ending(limits.wall_clock_secs));
        }
        let tokens = self.usage.input_tokens + self.usage.output_tokens;
        if limits.max_tokens > 0 && tokens >= limits.max_tokens {
            return Some(Ending::new(
                Outcome::BudgetExceeded,
                format!("the token budget ({}) ran out", limits.max_tokens),
            ));
        }
        if limits.max_usd > 0.0 && self.usage.usd >= limits.max_usd {
            return Some(Ending::new(
                Outcome::BudgetExceeded,
                format!("the cost budget (${:.2}) ran out", limits.max_usd),
            ));
        }
        // Requests grow round by round, so the last one's cost is a floor for the next one's.
        if limits.max_usd > 0.0 && self.usage.usd + self.last_request_usd > limits.max_usd {
            return Some(Ending::new(
                Outcome::BudgetExceeded,
                format!(
                    "the next request would pass the cost budget (${:.2}): ${:.4} spent, and the last request alone cost ${:.4}",
                    limits.max_usd, self.usage.usd, self.last_request_usd
                ),
            ));
        }
        None
    }
}
