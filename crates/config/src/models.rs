//! Model settings: where the hosted providers are and which key each reads, how requests are
//! retried, price overrides, how the embedded model runs, and the small-model helpers.

use std::collections::BTreeMap;

use plumb_protocol::ModelProfile;
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
    /// Draft tokens guessed by prompt lookup (the text the model was shown) and checked in one
    /// decode; 0 (the default) decodes one token at a time. The replies are the same; only their
    /// speed differs, and on two CPU cores drafts measured slower (`scripts/bench_decode.py`).
    pub draft_tokens: u32,
    /// Sample a round's extra candidate replies side by side in one batch (they share the
    /// prompt); off (the default) samples each when it is needed. On two CPU cores four replies
    /// in one batch took 3.6 times one reply's time, so the batch pays only when every extra
    /// candidate would be sampled anyway.
    pub batch_candidates: bool,
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
            draft_tokens: 0,
            batch_candidates: false,
        }
    }
}

/// Help for small models. Each follows the model's profile unless set: on for a small model
/// (the embedded one, or any model with `profile = "small"`), off for a capable one. A helper that
/// is on still steps aside on a task it cannot help (the run's journal and report say which did
/// and why; `docs/helpers.md` says what each does).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Helpers {
    /// The model's profile, when the catalog does not know it: `small` turns the helpers' defaults
    /// on for a small model served by Ollama or another server.
    pub profile: Option<ModelProfile>,
    /// A free-text `thought` before each tool call.
    pub thought: Option<bool>,
    /// The code the ticket is most likely about, shown in the first message.
    pub code_up_front: Option<bool>,
    /// When `old_text` does not match, the file's current text is shown with the error.
    pub show_file_on_failed_edit: Option<bool>,
    /// Guided phases: the step the work is at (the fix, a test that shows it, `done`) named in
    /// every request, the project's tests run after each write, and a code edit that breaks
    /// tests which passed undone.
    pub phases: Option<bool>,
    /// Replies tried per fixing round (guided phases only): plumb samples more replies to the
    /// same request, tries each one's fix on the workspace and keeps the one that does what
    /// the phase needs (see `helpers/candidates.rs` in plumb-agent), up to this many. 1 turns it
    /// off. Only the embedded model (and a script with alternatives) can be sampled again.
    pub candidates: Option<u32>,
    /// The figure search and the fix probe (guided phases, pytest, a ticket that gives figures):
    /// the model's test tried with the ticket's figures, and a fix checked against them.
    pub figures: Option<bool>,
    /// The figure trace (with the figure search): the line of the original code that makes the
    /// ticket's wrong figure, named after a fix is undone.
    pub trace: Option<bool>,
    /// Notes on Python's `UnboundLocalError` and `NameError` when a fix is undone for one.
    pub python_notes: Option<bool>,
    /// Rewrites of Python text the model writes: `x = x(...)` renamed, test parameters that are
    /// the file's helpers taken out, loose lines appended to a test refused.
    pub python_rewrites: Option<bool>,
    /// With guided phases: a fix after which the task's or the baseline's failing tests still
    /// fail is undone, and a write that brings back code a check already failed on is undone
    /// before any test runs. Off unless set, whatever the profile, until the eval subset says
    /// what it is worth.
    pub undo_failing_fixes: Option<bool>,
}

/// Replies tried per fixing round for a small model, and the most any setting gives. Only
/// fixes are sampled, and sampling stops at the first that does what is needed, so a right first
/// fix costs nothing more.
pub const LOCAL_CANDIDATES: u32 = 4;
pub const MAX_CANDIDATES: u32 = 8;

/// The helpers the tools and the prompt read, as they apply to one run (the loop's helpers are
/// chosen apart, per task, in plumb-agent's `helpers/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HelpersInEffect {
    pub thought: bool,
    pub code_up_front: bool,
    pub show_file_on_failed_edit: bool,
    pub phases: bool,
    pub candidates: u32,
    pub python_rewrites: bool,
}

impl Helpers {
    /// The profile in effect: the setting, else what the model's catalog entry says.
    pub fn profile_for(&self, model: ModelProfile) -> ModelProfile {
        self.profile.unwrap_or(model)
    }

    /// The helpers as a run had them, every one set, for a replay: its model is a script, which
    /// would otherwise get the capable defaults. Candidates are off: the journal holds only the
    /// replies the run went on with.
    pub fn pinned(&self, model: ModelProfile) -> Helpers {
        let small = self.profile_for(model) == ModelProfile::Small;
        let effect = self.for_profile(model);
        Helpers {
            profile: Some(self.profile_for(model)),
            thought: Some(effect.thought),
            code_up_front: Some(effect.code_up_front),
            show_file_on_failed_edit: Some(effect.show_file_on_failed_edit),
            phases: Some(effect.phases),
            candidates: Some(1),
            figures: Some(self.figures.unwrap_or(small)),
            trace: Some(self.trace.unwrap_or(small)),
            python_notes: Some(self.python_notes.unwrap_or(small)),
            python_rewrites: Some(effect.python_rewrites),
            undo_failing_fixes: Some(self.undo_failing_fixes.unwrap_or(false)),
        }
    }

    /// Resolves the helpers for a model of `profile`: unset ones follow whether it is small.
    pub fn for_profile(&self, model: ModelProfile) -> HelpersInEffect {
        let small = self.profile_for(model) == ModelProfile::Small;
        HelpersInEffect {
            thought: self.thought.unwrap_or(small),
            code_up_front: self.code_up_front.unwrap_or(small),
            show_file_on_failed_edit: self.show_file_on_failed_edit.unwrap_or(small),
            phases: self.phases.unwrap_or(small),
            candidates: self
                .candidates
                .unwrap_or(if small { LOCAL_CANDIDATES } else { 1 })
                .clamp(1, MAX_CANDIDATES),
            python_rewrites: self.python_rewrites.unwrap_or(small),
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const SMALL: ModelProfile = ModelProfile::Small;
    const CAPABLE: ModelProfile = ModelProfile::Capable;

    #[test]
    fn candidates_follow_the_profile_and_stay_in_bounds() {
        let unset = Helpers::default();
        assert_eq!(
            (
                unset.for_profile(SMALL).candidates,
                unset.for_profile(CAPABLE).candidates
            ),
            (LOCAL_CANDIDATES, 1)
        );
        let many = Helpers {
            candidates: Some(50),
            ..Helpers::default()
        };
        assert_eq!(many.for_profile(CAPABLE).candidates, MAX_CANDIDATES);
        let none = Helpers {
            candidates: Some(0),
            ..Helpers::default()
        };
        assert_eq!(none.for_profile(SMALL).candidates, 1);
    }

    #[test]
    fn a_small_profile_set_in_the_settings_turns_a_capable_models_helpers_on() {
        let small = Helpers {
            profile: Some(SMALL),
            ..Helpers::default()
        };
        let effect = small.for_profile(CAPABLE);
        assert!(effect.phases && effect.thought && effect.python_rewrites);
        assert_eq!(effect.candidates, LOCAL_CANDIDATES);
        assert!(!Helpers::default().for_profile(CAPABLE).python_rewrites);
    }

    #[test]
    fn a_replay_pins_the_helpers_of_the_run_and_turns_candidates_off() {
        let pinned = Helpers::default().pinned(SMALL);
        assert_eq!(
            pinned,
            Helpers {
                profile: Some(SMALL),
                thought: Some(true),
                code_up_front: Some(true),
                show_file_on_failed_edit: Some(true),
                phases: Some(true),
                candidates: Some(1),
                figures: Some(true),
                trace: Some(true),
                python_notes: Some(true),
                python_rewrites: Some(true),
                undo_failing_fixes: Some(false),
            }
        );
        let effect = pinned.for_profile(CAPABLE);
        assert!(effect.phases && effect.code_up_front && effect.candidates == 1);
    }
}
