//! Token selection: the sampler chain of one request plus an optional JSON-schema grammar.
//!
//! The grammar is kept out of the chain and checked optimistically, as llama.cpp's `common_sampler` does: the
//! chain picks a token from the raw logits; only if the grammar rejects that token are the logits filtered by the
//! grammar and the chain run again. Checking one token is far cheaper than filtering the whole vocabulary every
//! step. The chosen token is then accepted exactly once by each of the chain and the grammar (`apply` never
//! accepts; llama.cpp's `llama_sampler_sample` would, which is why it is not used here).

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use crate::protocol::Request;

/// How many recent tokens the repetition penalty looks at.
const PENALTY_LAST_N: i32 = 64;

/// The outcome of one sampling step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Token(LlamaToken),
    /// The grammar allows no further token: it is complete.
    GrammarDone,
}

/// Converts a JSON Schema (JSON text) to GBNF with llama.cpp's converter; the error is a sentence for the client.
pub fn schema_to_gbnf(schema: &str) -> Result<String, String> {
    // llama.cpp keeps only an error code, not its reason.
    llama_cpp_2::json_schema_to_grammar(schema).map_err(|_| {
        "\"json_schema\" could not be converted to a grammar by llama.cpp. Use plain JSON Schema keywords (type, \
         properties, required, const, enum, oneOf, anyOf, items); an unresolved $ref or an invalid pattern is the \
         usual cause."
            .to_owned()
    })
}

/// The samplers of one request.
pub struct Sampler {
    chain: LlamaSampler,
    grammar: Option<LlamaSampler>,
}

impl Sampler {
    /// Builds the chain from the request's settings, sampling with `seed`, and compiles `gbnf`
    /// when given (each sampler has its own grammar state).
    pub fn new(
        model: &LlamaModel,
        request: &Request,
        gbnf: Option<&str>,
        seed: u32,
    ) -> Result<Self, String> {
        let grammar = gbnf
            .map(|gbnf| {
                LlamaSampler::grammar(model, gbnf, "root").map_err(|err| {
                    format!("llama.cpp rejected the grammar made from \"json_schema\" ({err}).")
                })
            })
            .transpose()?;

        let mut chain = Vec::new();
        if request.repeat_penalty != 1.0 {
            chain.push(LlamaSampler::penalties(
                model.n_vocab(),
                PENALTY_LAST_N,
                request.repeat_penalty,
                /*penalty_freq*/ 0.0,
                /*penalty_present*/ 0.0,
            ));
        }
        if request.temperature <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            if request.top_k > 0 {
                chain.push(LlamaSampler::top_k(
                    i32::try_from(request.top_k).unwrap_or(i32::MAX),
                ));
            }
            if request.top_p < 1.0 {
                chain.push(LlamaSampler::top_p(request.top_p, /*min_keep*/ 1));
            }
            if request.min_p > 0.0 {
                chain.push(LlamaSampler::min_p(request.min_p, /*min_keep*/ 1));
            }
            chain.push(LlamaSampler::temp(request.temperature));
            chain.push(LlamaSampler::dist(seed));
        }
        Ok(Self {
            chain: LlamaSampler::chain_simple(chain),
            grammar,
        })
    }

    /// Whether a grammar constrains this request.
    pub fn has_grammar(&self) -> bool {
        self.grammar.is_some()
    }

    /// Feeds prompt tokens to the repetition penalty (the grammar only sees generated tokens).
    pub fn accept_history(&mut self, tokens: &[LlamaToken]) {
        let start = tokens
            .len()
            .saturating_sub(PENALTY_LAST_N.unsigned_abs() as usize);
        self.chain.accept_many(tokens.iter().skip(start));
    }

    /// Picks the next token from the logits at batch index `idx` and accepts it. An end-of-generation token is
    /// returned without being accepted: generation ends there, and llama.cpp aborts the process when a grammar
    /// that is not complete is handed one.
    pub fn sample(
        &mut self,
        ctx: &LlamaContext<'_>,
        idx: i32,
        is_eog: impl Fn(LlamaToken) -> bool,
    ) -> Result<Step, String> {
        let mut candidates = ctx.token_data_array_ith(idx);
        candidates.apply_sampler(&mut self.chain);
        let mut token = candidates
            .selected_token()
            .ok_or("the sampler chain selected no token")?;

        if let Some(grammar) = self.grammar.as_mut() {
            let mut single =
                LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 1.0, 0.0)], false);
            single.apply_sampler(grammar);
            let allowed = single
                .data
                .first()
                .is_some_and(|data| data.logit().is_finite());
            if !allowed {
                let mut candidates = ctx.token_data_array_ith(idx);
                candidates.apply_sampler(grammar);
                if !candidates.data.iter().any(|data| data.logit().is_finite()) {
                    return Ok(Step::GrammarDone);
                }
                candidates.apply_sampler(&mut self.chain);
                token = candidates
                    .selected_token()
                    .ok_or("the sampler chain selected no token the grammar allows")?;
            }
            if is_eog(token) {
                return Ok(Step::Token(token));
            }
            grammar
                .try_accept(token)
                .map_err(|err| format!("the grammar did not accept the sampled token ({err})"))?;
        }
        self.chain.accept(token);
        Ok(Step::Token(token))
    }
}
