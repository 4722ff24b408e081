//! Prices (USD per million tokens) and the cost of a request's usage. The built-in table lives in
//! `catalog.rs`; `plumb.toml` can override any entry.

use std::sync::LazyLock;

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

/// The token count of text a provider did not count, by OpenAI's `o200k_base` encoding (GPT-4o
/// and later). Used only where the provider reports no usage (some OpenAI-compatible servers),
/// whose own tokenizer may differ by some percent; such usage is marked `estimated`. Should the
/// built-in table fail to load, one token per four bytes, rounded up.
pub fn estimate_tokens(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    match o200k() {
        Some(encoding) => encoding.count_ordinary(text) as u64,
        None => (text.len() as u64).div_ceil(4),
    }
}

/// The `o200k_base` encoding, built once per process on first use (its 200,000 entries decoded
/// from the table compiled into the binary).
fn o200k() -> Option<&'static tiktoken_rs::CoreBPE> {
    static ENCODING: LazyLock<Option<tiktoken_rs::CoreBPE>> =
        LazyLock::new(|| tiktoken_rs::o200k_base().ok());
    ENCODING.as_ref()
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
            estimated: false,
        };
        let cost = price.cost(&usage);
        assert!((cost - (1.2 + 0.2 + 0.8)).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn estimates_count_o200k_tokens() {
        assert_eq!(estimate_tokens(""), 0);
        // Counts from OpenAI's tokenizer page for GPT-4o: "Hello" "," " world" "!".
        assert_eq!(estimate_tokens("Hello, world!"), 4);
        // " world" is one token of every OpenAI encoding; chars / 4 would say 150.
        assert_eq!(estimate_tokens(&" world".repeat(100)), 100);
    }
}
