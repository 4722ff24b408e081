//! Model settings: where the hosted providers are and which key each reads, how requests are
//! retried, price overrides, how the embedded model runs, and the small-model helpers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One hosted provider's address and the environment variable that holds its key. The key itself
/// never appears in a settings file, a journal or a sandbox.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Provider {
    /// The API's base URL (e.g. `https://api.openai.com/v1`); unset means the provider's own.
    pub base_url: Option<String>,
    /// The environment variable that holds the key (default `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`).
    pub api_key_env: Option<String>,
}

/// The providers reached over HTTP.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Providers {
    pub openai: Provider,
    pub anthropic: Provider,
    /// `ollama:MODEL` talks to this server's OpenAI-compatible API (default `http://127.0.0.1:11434/v1`).
    pub ollama: Provider,
    /// Keys for `openai-compat:URL#MODEL` servers that need one (most local servers do not).
    pub compat: Provider,
}

/// How requests to a hosted model are made and retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelService {
    /// Attempts per request, the first included, on 429, 5xx, transport errors and cut streams.
    pub max_attempts: u32,
    /// The first backoff; it doubles per attempt (with jitter) up to `max_backoff_ms`.
    pub initial_backoff_ms: u64,
    pub max_backoff_ms: u64,
    pub connect_timeout_secs: u64,
    /// A stream that sends nothing for this long is cut and retried.
    pub idle_timeout_ms: u64,
    /// The most tokens one reply may have.
    pub max_output_tokens: u32,
}

impl Default for ModelService {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff_ms: 1000,
            max_backoff_ms: 30_000,
            connect_timeout_secs: 10,
            idle_timeout_ms: 60_000,
            max_output_tokens: 4096,
        }
    }
}

/// USD per million tokens; overrides the built-in table for one model spec.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceOverride {
    pub input: f64,
    #[serde(default)]
    pub cached_input: f64,
    pub output: f64,
}

/// Price overrides by model spec, e.g. `[prices."openai:gpt-4.1"]`.
pub type Prices = BTreeMap<String, PriceOverride>;

/// How the embedded model runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Local {
    /// The context window in tokens.
    pub context: u32,
    /// CPU threads (0 = all the machine has).
    pub threads: u32,
    /// The most tokens one reply may have.
    pub max_reply_tokens: u32,
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    pub min_p: f32,
    pub repeat_penalty: f32,
    pub seed: u32,
    /// Force every reply through the tool-call grammar (turn off only to measure it).
    pub constrained: bool,
    /// Keep the evaluated system turn on disk beside the model files, so later runs load it instead of
    /// evaluating it again (turn off only to measure it).
    pub prompt_cache: bool,
}

impl Default for Local {
    fn default() -> Self {
        Self {
            context: 16384,
            threads: 0,
            max_reply_tokens: 1024,
            temperature: 0.2,
            top_k: 40,
            top_p: 0.95,
            min_p: 0.05,
            repeat_penalty: 1.0,
            seed: 1234,
            constrained: true,
            prompt_cache: true,
        }
    }
}

/// Help for small models. Each is on for the embedded model and off for hosted ones unless set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Helpers {
    /// A free-text `thought` before each tool call.
    pub thought: Option<bool>,
    /// The code the ticket is most likely about, shown in the first message.
    pub code_up_front: Option<bool>,
    /// When `old_text` does not match, the file's current text is shown with the error.
    pub show_file_on_failed_edit: Option<bool>,
    /// Guided phases: the fix first (test edits refused; the project's tests run after each code
    /// edit, which is undone when it breaks them), then a test run with the fix and on the
    /// original code (with the figure search); the next step is named in every request.
    pub phases: Option<bool>,
    /// Replies tried per fixing round (guided phases only): plumb samples more replies to the
    /// same request, tries each one's fix on the workspace and keeps the one that does what
    /// the phase needs (see `candidates.rs` in plumb-agent), up to this many. 1 turns it off.
    /// Only the embedded model (and a script with alternatives) can be sampled again.
    pub candidates: Option<u32>,
}

/// Replies tried per fixing round for the embedded model, and the most any setting gives. Only
/// fixes are sampled, and sampling stops at the first the fix probe confirms, so a right first
/// fix costs nothing more (measured in the closing note of issue 5, `scripts/bench_local.py`).
pub const LOCAL_CANDIDATES: u32 = 4;
pub const MAX_CANDIDATES: u32 = 8;

/// The helpers as they apply to one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HelpersInEffect {
    pub thought: bool,
    pub code_up_front: bool,
    pub show_file_on_failed_edit: bool,
    pub phases: bool,
    pub candidates: u32,
}

impl Helpers {
    /// The helpers as a run with `local` had them, every one set, for a replay: its model is a
    /// script, which would otherwise get the hosted defaults. Candidates are off: the journal
    /// holds only the replies the run went on with.
    pub fn pinned(&self, local: bool) -> Helpers {
        let effect = self.for_model(local);
        Helpers {
            thought: Some(effect.thought),
            code_up_front: Some(effect.code_up_front),
            show_file_on_failed_edit: Some(effect.show_file_on_failed_edit),
            phases: Some(effect.phases),
            candidates: Some(1),
        }
    }

    /// Resolves the helpers for a model: unset ones follow whether the model is the embedded one.
    pub fn for_model(&self, local: bool) -> HelpersInEffect {
        HelpersInEffect {
            thought: self.thought.unwrap_or(local),
            code_up_front: self.code_up_front.unwrap_or(local),
            show_file_on_failed_edit: self.show_file_on_failed_edit.unwrap_or(local),
            phases: self.phases.unwrap_or(local),
            candidates: self
                .candidates
                .unwrap_or(if local { LOCAL_CANDIDATES } else { 1 })
                .clamp(1, MAX_CANDIDATES),
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn candidates_follow_the_model_and_stay_in_bounds() {
        let unset = Helpers::default();
        assert_eq!(
            (
                unset.for_model(true).candidates,
                unset.for_model(false).candidates
            ),
            (LOCAL_CANDIDATES, 1)
        );
        let many = Helpers {
            candidates: Some(50),
            ..Helpers::default()
        };
        assert_eq!(many.for_model(false).candidates, MAX_CANDIDATES);
        let none = Helpers {
            candidates: Some(0),
            ..Helpers::default()
        };
        assert_eq!(none.for_model(true).candidates, 1);
    }

    #[test]
    fn a_replay_pins_the_helpers_of_the_run_and_turns_candidates_off() {
        let pinned = Helpers::default().pinned(true);
        assert_eq!(
            pinned,
            Helpers {
                thought: Some(true),
                code_up_front: Some(true),
                show_file_on_failed_edit: Some(true),
                phases: Some(true),
                candidates: Some(1),
            }
        );
        let effect = pinned.for_model(false);
        assert!(effect.phases && effect.code_up_front && effect.candidates == 1);
    }
}
