//! The llama.cpp side: one model, one context, sequence 0 whose KV cache carries over between requests.
//!
//! Invariant: `log` holds exactly the tokens in the KV cache of sequence 0, position `i` holding token `i`,
//! and between requests no other sequence holds any. Every step that changes the cache updates `log` with it,
//! and any failure in between clears both.
//!
//! Steps of [`Engine::run`]: build the samplers (so a bad schema fails before any work), load a persisted state
//! for a fresh cache when asked (see [`crate::persist`]), tokenize (reusing cached tokens, see
//! [`crate::cache`]), check the context window (and how many of the `n` sequences it holds), drop the cache
//! suffix that differs from the prompt, decode the rest of the prompt in batches (none when the cache holds it
//! whole and nothing is to be generated), share the prompt with sequences 1..n, then generate
//! ([`crate::generate`]: every sequence a token per step in one batch, with drafts when asked) until each ends
//! at an end-of-generation token, a stop string, a complete grammar, or `max_tokens`. Sequence 0 keeps what it
//! generated but the token that ended it and any stop string, so the next prompt (which holds the returned text,
//! not the stop string) extends the cached text; the other sequences are removed.
//!
//! Between prompt batches and between generated tokens the engine checks whether stdin has closed (see
//! [`crate::input`]): then nobody will read the reply, and the request is abandoned
//! ([`EngineError::Abandoned`]) with the cache cleared.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use crate::cache::{TokenLog, common_prefix};
use crate::generate::{Choice, DraftStats, Plan, generate};
use crate::persist::StateStore;
use crate::protocol::{ErrorKind, Finish, Request, sequence_seed};
use crate::sampling::{Sampler, schema_to_gbnf};
use crate::text::StopStrings;

/// Context settings from the command line.
#[derive(Debug, Clone, Copy)]
pub struct ContextSettings {
    pub n_ctx: u32,
    pub threads: u32,
    pub batch: u32,
    /// The most sequences a request may sample side by side.
    pub parallel: u32,
}

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(
        "The prompt has {prompt_tokens} tokens and max_tokens is {max_tokens}, which together exceed the context \
         window of {n_ctx} tokens. Shorten the prompt, lower max_tokens, or start plumb-llm with a larger --ctx."
    )]
    ContextWindowExceeded {
        prompt_tokens: usize,
        max_tokens: u32,
        n_ctx: usize,
    },
    #[error("{0}")]
    BadRequest(String),
    #[error("Internal error: {0}.")]
    Internal(String),
    /// stdin closed part-way: the reply would have no reader, so none is sent.
    #[error("The request was abandoned: stdin closed.")]
    Abandoned,
}

impl EngineError {
    /// The protocol's error class.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::ContextWindowExceeded { .. } => ErrorKind::ContextWindowExceeded,
            Self::BadRequest(_) => ErrorKind::BadRequest,
            Self::Internal(_) | Self::Abandoned => ErrorKind::Internal,
        }
    }
}

/// What happened to a persisted prompt state during a request (for `--verbose`): a state that fails to load is
/// deleted and the newly evaluated one saved in its place.
#[derive(Debug, Clone, PartialEq)]
pub enum StateNote {
    Loaded(std::path::PathBuf),
    Saved(std::path::PathBuf),
    /// A stored state could not be used or a new one not written; the prompt was evaluated as usual.
    Failed(String),
}

/// The result of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// Every sequence's reply, sequence 0 first; one with no text when nothing was generated.
    pub choices: Vec<Choice>,
    pub prompt_tokens: usize,
    pub cached_tokens: usize,
    pub prompt_time: Duration,
    pub gen_time: Duration,
    pub drafts: DraftStats,
    /// What happened to the prompt's persisted state, in order (empty unless the request asked to persist).
    pub state: Vec<StateNote>,
}

/// A loaded model with its context and the token list of its KV cache.
pub struct Engine<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    log: TokenLog<LlamaToken>,
    batch: usize,
    parallel: usize,
    store: Option<StateStore>,
    /// Set when stdin ends; see the module header.
    stdin_closed: Arc<AtomicBool>,
}

impl<'m> Engine<'m> {
    /// Creates the context for `model`; `store` keeps the states of prompts sent with `persist`; a request is
    /// abandoned once `stdin_closed` is set.
    pub fn new(
        backend: &LlamaBackend,
        model: &'m LlamaModel,
        settings: ContextSettings,
        store: Option<StateStore>,
        stdin_closed: Arc<AtomicBool>,
    ) -> Result<Self, String> {
        let threads = i32::try_from(settings.threads).unwrap_or(i32::MAX);
        // One unified cache for all sequences: they share the prompt's cells, and sequence 0 alone
        // may use the whole window (a split cache would give each sequence 1/n of it).
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(settings.n_ctx))
            .with_n_seq_max(settings.parallel.max(1))
            .with_kv_unified(true)
            .with_n_batch(settings.batch)
            .with_n_ubatch(settings.batch)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let ctx = model.new_context(backend, params).map_err(|err| {
            format!(
                "llama.cpp could not create a context of {} tokens ({err})",
                settings.n_ctx
            )
        })?;
        Ok(Self {
            model,
            ctx,
            log: TokenLog::default(),
            batch: usize::try_from(settings.batch).unwrap_or(512).max(1),
            parallel: usize::try_from(settings.parallel).unwrap_or(1).max(1),
            store,
            stdin_closed,
        })
    }

    /// The context window in tokens.
    pub fn n_ctx(&self) -> u32 {
        self.ctx.n_ctx()
    }

    /// Serves one request.
    pub fn run(&mut self, request: &Request) -> Result<Generation, EngineError> {
        let gbnf = request
            .json_schema
            .as_ref()
            .map(|schema| schema_to_gbnf(schema))
            .transpose()
            .map_err(EngineError::BadRequest)?;
        let wanted = usize::try_from(request.n).unwrap_or(usize::MAX);
        if wanted > self.parallel {
            return Err(EngineError::BadRequest(format!(
                "\"n\" is {}, but this runner samples at most {} replies at once; ask for fewer or start \
                 plumb-llm with a larger --parallel.",
                request.n, self.parallel
            )));
        }
        // Built before any work, so a grammar llama.cpp rejects fails at once.
        let mut samplers = vec![
            Sampler::new(self.model, request, gbnf.as_deref(), request.seed)
                .map_err(EngineError::BadRequest)?,
        ];

        let prompt_start = Instant::now();
        let mut state = Vec::new();
        if request.persist && self.log.len() == 0 {
            state.extend(self.load_state(&request.prompt));
        }
        let vocab = self.model.vocab();
        let (prompt, keep) = self
            .log
            .plan(request.prompt.as_bytes(), |text, whole_prompt| {
                vocab.tokenize(
                    text,
                    /*add_special*/ whole_prompt,
                    /*parse_special*/ true,
                )
            });
        let n_ctx = usize::try_from(self.ctx.n_ctx()).unwrap_or(usize::MAX);
        if prompt.is_empty() {
            return Err(EngineError::BadRequest(
                "\"prompt\" produced no tokens; send non-empty text.".to_owned(),
            ));
        }
        if prompt.len().saturating_add(request.max_tokens as usize) > n_ctx {
            return Err(EngineError::ContextWindowExceeded {
                prompt_tokens: prompt.len(),
                max_tokens: request.max_tokens,
                n_ctx,
            });
        }
        let (sequences, draft) = fit_window(
            n_ctx - prompt.len(),
            request.max_tokens as usize,
            wanted,
            request.draft as usize,
        );
        for index in 1..sequences {
            let seed = sequence_seed(request.seed, u32::try_from(index).unwrap_or(u32::MAX));
            samplers.push(
                Sampler::new(self.model, request, gbnf.as_deref(), seed)
                    .map_err(EngineError::BadRequest)?,
            );
        }

        // Without generation no logits are needed, so a prompt the cache already holds whole is not decoded
        // again (which would also change its last token's cached values slightly, in a batch of one).
        let keep = if request.max_tokens == 0 {
            common_prefix(self.log.tokens(), &prompt)
        } else {
            keep
        };
        let cached_tokens = self.keep_prefix(keep);
        let logits_idx = self.guard(|engine| engine.decode_prompt(&prompt[cached_tokens..]))?;
        let loaded = state
            .iter()
            .any(|note| matches!(note, StateNote::Loaded(_)));
        if request.persist && !loaded && request.max_tokens == 0 {
            state.extend(self.save_state(&request.prompt));
        }
        let prompt_time = prompt_start.elapsed();

        let mut generation = Generation {
            choices: vec![Choice {
                text: String::new(),
                output_tokens: 0,
                finish: Finish::Length,
                duplicate_of: None,
                kept: Vec::new(),
            }],
            prompt_tokens: prompt.len(),
            cached_tokens,
            prompt_time,
            gen_time: Duration::ZERO,
            drafts: DraftStats::default(),
            state,
        };
        if request.max_tokens == 0 {
            return Ok(generation);
        }

        let gen_start = Instant::now();
        for sampler in &mut samplers {
            sampler.accept_history(&prompt);
        }
        let stops = StopStrings::new(&request.stop);
        let plan = Plan {
            prompt: &prompt,
            logits_idx,
            max_tokens: request.max_tokens as usize,
            draft,
            stops: &stops,
        };
        let (choices, drafts) = self.guard(|engine| engine.generate(samplers, &plan))?;
        generation.choices = choices;
        generation.drafts = drafts;
        generation.gen_time = gen_start.elapsed();
        Ok(generation)
    }

    /// Shares the prompt (all sequence 0 holds) with one more sequence per sampler, generates, and
    /// leaves sequence 0 with the prompt and its reply, the others empty.
    fn generate(
        &mut self,
        samplers: Vec<Sampler>,
        plan: &Plan<'_>,
    ) -> Result<(Vec<Choice>, DraftStats), String> {
        let sequences = samplers.len();
        for seq in 1..sequences {
            let seq = i32::try_from(seq).map_err(|_| "sequence id out of range".to_owned())?;
            self.ctx
                .copy_kv_cache_seq(0, seq, None, None)
                .map_err(|err| format!("could not share the prompt's cache ({err})"))?;
        }
        let closed = Arc::clone(&self.stdin_closed);
        let abandoned = move || closed.load(Ordering::SeqCst);
        let (choices, stats) = generate(&mut self.ctx, self.model, samplers, plan, &abandoned)?;
        for seq in 1..sequences {
            let seq = u32::try_from(seq).map_err(|_| "sequence id out of range".to_owned())?;
            self.ctx
                .clear_kv_cache_seq(Some(seq), None, None)
                .map_err(|err| format!("could not drop a sequence's cache ({err})"))?;
        }
        if let Some(first) = choices.first() {
            let kept = first.kept.clone();
            self.record(&kept);
        }
        Ok((choices, stats))
    }

    /// Loads the stored state of `prompt` into an empty cache when one exists and holds exactly the prompt's
    /// tokens; otherwise leaves the cache empty and deletes the file, so a good one is written in its place.
    fn load_state(&mut self, prompt: &str) -> Option<StateNote> {
        let path = self.store.as_ref()?.path_for(prompt);
        if !path.is_file() {
            return None;
        }
        let expected = self.model.vocab().tokenize(
            prompt.as_bytes(),
            /*add_special*/ true,
            /*parse_special*/ true,
        );
        let n_ctx = usize::try_from(self.ctx.n_ctx()).unwrap_or(usize::MAX);
        let failure = match self.ctx.state_seq_load_file(&path, 0, n_ctx) {
            Ok((tokens, _)) if tokens == expected => {
                self.record(&tokens);
                return Some(StateNote::Loaded(path));
            }
            Ok(_) => format!("{} holds other tokens than the prompt", path.display()),
            Err(err) => format!("could not load {} ({err})", path.display()),
        };
        self.clear();
        let _ = std::fs::remove_file(&path);
        Some(StateNote::Failed(failure))
    }

    /// Writes the state of the cache (which holds exactly the prompt) under the prompt's name.
    fn save_state(&self, prompt: &str) -> Option<StateNote> {
        let store = self.store.as_ref()?;
        let path = store.path_for(prompt);
        if path.is_file() {
            return None;
        }
        if let Err(err) = store.ensure_dir() {
            return Some(StateNote::Failed(err));
        }
        let temporary = StateStore::temporary(&path);
        let saved = self
            .ctx
            .state_seq_save_file(&temporary, 0, self.log.tokens())
            .map_err(|err| format!("could not write {} ({err})", temporary.display()))
            .and_then(|_| {
                std::fs::rename(&temporary, &path)
                    .map_err(|err| format!("could not rename {} ({err})", temporary.display()))
            });
        match saved {
            Ok(()) => {
                store.prune();
                Some(StateNote::Saved(path))
            }
            Err(err) => {
                let _ = std::fs::remove_file(&temporary);
                Some(StateNote::Failed(err))
            }
        }
    }

    /// Keeps the first `keep` cached tokens and drops the rest; returns how many tokens were kept.
    fn keep_prefix(&mut self, keep: usize) -> usize {
        if keep < self.log.len() {
            let removed = u32::try_from(keep)
                .ok()
                .and_then(|keep| self.ctx.clear_kv_cache_seq(Some(0), Some(keep), None).ok())
                .unwrap_or(false);
            if !removed {
                // Some cache types (recurrent models) cannot drop a range: start over.
                self.clear();
                return 0;
            }
            self.log.truncate(keep);
        }
        keep
    }

    /// Runs `step`; on failure the cache may hold tokens `log` does not know of, so both are cleared.
    fn guard<T>(
        &mut self,
        step: impl FnOnce(&mut Self) -> Result<T, String>,
    ) -> Result<T, EngineError> {
        step(self).map_err(|err| {
            self.clear();
            if self.abandoned() {
                EngineError::Abandoned
            } else {
                EngineError::Internal(err)
            }
        })
    }

    /// Whether stdin has closed; checked between units of work (see the module header).
    fn abandoned(&self) -> bool {
        self.stdin_closed.load(Ordering::SeqCst)
    }

    /// An error ending the step when stdin has closed.
    fn check_abandoned(&self) -> Result<(), String> {
        if self.abandoned() {
            return Err("stdin closed".to_owned());
        }
        Ok(())
    }

    fn clear(&mut self) {
        self.ctx.clear_kv_cache();
        self.log.clear();
    }

    /// Decodes `tokens` after the cached ones in batches; returns the batch index of the last token's logits.
    fn decode_prompt(&mut self, tokens: &[LlamaToken]) -> Result<i32, String> {
        let mut batch = LlamaBatch::new(self.batch, 1);
        let mut last_idx = 0;
        let chunks = tokens.chunks(self.batch);
        let n_chunks = chunks.len();
        for (chunk_no, chunk) in chunks.enumerate() {
            self.check_abandoned()?;
            batch.clear();
            for (i, token) in chunk.iter().enumerate() {
                let wants_logits = chunk_no + 1 == n_chunks && i + 1 == chunk.len();
                batch
                    .add(*token, self.position(i)?, &[0], wants_logits)
                    .map_err(|err| format!("could not fill a prompt batch ({err})"))?;
            }
            self.ctx
                .decode(&mut batch)
                .map_err(|err| format!("llama.cpp failed to evaluate the prompt ({err})"))?;
            self.record(chunk);
            last_idx = chunk.len().saturating_sub(1);
        }
        i32::try_from(last_idx).map_err(|_| "batch index out of range".to_owned())
    }

    /// Appends `tokens`, now in the cache after the logged ones, to the log with the text they spell.
    fn record(&mut self, tokens: &[LlamaToken]) {
        let vocab = self.model.vocab();
        let mut piece = Vec::new();
        for token in tokens {
            piece.clear();
            vocab.token_to_piece_into(*token, &mut piece, /*special*/ true, None);
            self.log.push(*token, &piece);
        }
    }

    /// The cache position of the `offset`-th token after the cached ones.
    fn position(&self, offset: usize) -> Result<i32, String> {
        i32::try_from(self.log.len() + offset).map_err(|_| "token position out of range".to_owned())
    }
}

/// How many of `wanted` sequences fit in `room` cells after the prompt, each with `max_tokens`,
/// and how many drafts each may then put in the cache beyond them: drafting only saves time, so it
/// gives way first; a sequence that does not fit is left for a later request.
fn fit_window(room: usize, max_tokens: usize, wanted: usize, draft: usize) -> (usize, usize) {
    let mut sequences = wanted.max(1);
    while sequences > 1 && sequences * max_tokens > room {
        sequences -= 1;
    }
    let draft = draft.min((room / sequences).saturating_sub(max_tokens));
    (sequences, draft)
}

#[cfg(test)]
mod tests {
    use super::fit_window;
    use pretty_assertions::assert_eq;

    #[test]
    fn sequences_then_drafts_give_way_to_the_window() {
        assert_eq!(fit_window(10_000, 512, 4, 8), (4, 8));
        assert_eq!(fit_window(1_200, 512, 4, 8), (2, 8));
        assert_eq!(fit_window(1_030, 512, 4, 8), (2, 3));
        assert_eq!(fit_window(600, 512, 4, 8), (1, 8));
        assert_eq!(fit_window(515, 512, 4, 8), (1, 3));
        assert_eq!(fit_window(512, 512, 1, 8), (1, 0));
    }
}
