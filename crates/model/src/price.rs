//! Prices (USD per million tokens) and the cost of a request's usage. The built-in table lives in
//! `catalog.rs`; `plumb.toml` can override any entry.

use plumb_protocol::Usage;
use serde::{Deserialize, Serialize};

/// What one million tokens cost, by kind. `cached_input` applies to the part of the input the
/// provider served from its prompt cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    #[serde(default)]
    pub cached_input: f64,
    pub output: f64,
}

impl Price {
    /// The estimated cost in USD. `usage.input_tokens` counts every input token, cached ones
    /// included; `usage.cached_tokens` is the cached subset.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_tokens.min(usage.input_tokens);
        let fresh = usage.input_tokens - cached;
        (fresh as f64 * self.input
            + cached as f64 * self.cached_input
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

/// A rough token count for text a provider did not count: one token per four bytes, rounded up.
/// Used only where the provider reports no usage; reports say when figures are estimates.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_splits_cached_input() {
        let price = Price {
            input: 2.0,
            cached_input: 0.5,
            output: 8.0,
        };
        let usage = Usage {
            input_tokens: 1_000_000,
            cached_tokens: 400_000,
            output_tokens: 100_000,
            usd: 0.0,
        };
        let cost = price.cost(&usage);
        assert!((cost - (1.2 + 0.2 + 0.8)).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn estimate_rounds_up() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcde"), 2);
    }
}
