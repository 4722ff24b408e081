//! Generation after the prompt: `n` sequences sampled side by side, each decoding its drafts.
//!
//! **Sequences.** The prompt sits in the KV cache as sequence 0; sequences 1..n get it by
//! `seq_cp` (the cache is unified, so the prompt's cells are shared, not copied). Every step puts
//! the next token of every live sequence into one `llama_batch`: on a CPU, decoding is bound by
//! reading the weights, which one batch does once for all its tokens, so four sequences cost
//! little more than one. Each sequence has its own sampler (its own seed) and its own grammar state.
//!
//! **Drafts.** With `draft > 0` each sequence also puts up to that many tokens guessed by prompt
//! lookup ([`crate::lookup`]) after its next token in the same batch, each with its logits. The
//! sampler then picks tokens one by one as plain decoding would, from the logits of the position
//! before; a draft token is kept only while the picked token equals it, and the first picked
//! token that differs becomes the sequence's next token. Plain decoding would have picked exactly
//! these tokens from these logits, so drafting changes how many decodes a reply takes, not the
//! reply (up to the last bits of the logits, which a batch of several tokens computes in another
//! order; a test compares the two at temperature 0).
//!
//! **What stays cached.** Sequence 0 keeps the tokens plain decoding would have left in the cache
//! (all it generated but the token that ended it, and nothing of a stop string), so the next
//! request, whose prompt holds this reply, extends it. The other sequences are removed at the end.
//! Rejected drafts are removed from the cache at once.

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use crate::lookup;
use crate::protocol::Finish;
use crate::sampling::{Sampler, Step};
use crate::text::{StopStrings, Utf8Stream};

/// One finished sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub text: String,
    pub output_tokens: usize,
    pub finish: Finish,
    /// The index of an earlier sequence whose text this one repeats exactly.
    pub duplicate_of: Option<usize>,
    /// The generated tokens the cache keeps (sequence 0's are logged by the engine).
    pub kept: Vec<LlamaToken>,
}

/// How drafting went over all sequences.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DraftStats {
    /// Draft tokens put into batches.
    pub drafted: usize,
    /// Draft tokens the sampler took.
    pub accepted: usize,
    /// Batches decoded after the prompt.
    pub decodes: usize,
}

/// What a generation needs besides the samplers.
pub struct Plan<'a> {
    pub prompt: &'a [LlamaToken],
    /// The batch index of the prompt's last token's logits.
    pub logits_idx: i32,
    pub max_tokens: usize,
    pub draft: usize,
    pub stops: &'a StopStrings,
}

/// One sequence being generated.
struct Seq {
    id: i32,
    sampler: Sampler,
    out: Utf8Stream,
    /// Every sampled token that is in the text, in order, with the raw byte length of the text
    /// after it (a stop string is cut by these).
    tokens: Vec<LlamaToken>,
    ends: Vec<usize>,
    /// How many of `tokens` are in the cache, after the prompt.
    in_cache: usize,
    /// The last sampled token, not yet in the cache (it goes into the next batch).
    pending: Option<LlamaToken>,
    /// The drafts put into the current batch after `pending`, and the batch index of `pending`.
    drafts: Vec<LlamaToken>,
    batch_idx: i32,
    finish: Option<Finish>,
    /// Tokens the cache keeps when finished.
    keep: usize,
}

impl Seq {
    fn live(&self) -> bool {
        self.finish.is_none()
    }

    /// The cache position of `tokens[i]`.
    fn position(&self, prompt_len: usize, i: usize) -> Result<i32, String> {
        i32::try_from(prompt_len + i).map_err(|_| "token position out of range".to_owned())
    }
}

/// Samples every sequence from the prompt's logits, then decodes until each has finished.
/// `samplers[i]` drives sequence `i`; sequence 0 holds the prompt, which the caller has copied
/// into the others. On return every sequence's cache holds the prompt and its `kept` tokens.
pub fn generate(
    ctx: &mut LlamaContext<'_>,
    model: &LlamaModel,
    samplers: Vec<Sampler>,
    plan: &Plan<'_>,
    abandoned: &dyn Fn() -> bool,
) -> Result<(Vec<Choice>, DraftStats), String> {
    let vocab = model.vocab();
    let mut seqs: Vec<Seq> = samplers
        .into_iter()
        .enumerate()
        .map(|(i, sampler)| Seq {
            id: i32::try_from(i).unwrap_or(i32::MAX),
            sampler,
            out: Utf8Stream::default(),
            tokens: Vec::new(),
            ends: Vec::new(),
            in_cache: 0,
            pending: None,
            drafts: Vec::new(),
            batch_idx: plan.logits_idx,
            finish: None,
            keep: 0,
        })
        .collect();
    let mut stats = DraftStats::default();
    let width = seqs.len() * (plan.draft + 1);
    let mut batch = LlamaBatch::new(width.max(1), 1);
    let mut piece = Vec::new();
    let mut history: Vec<LlamaToken> = Vec::new();

    // The first token of every sequence comes from the prompt's logits.
    for seq in &mut seqs {
        let token = pick(ctx, seq, plan.logits_idx, &vocab)?;
        take(seq, token, false, plan, model, &mut piece);
    }
    loop {
        if abandoned() {
            return Err("stdin closed".to_owned());
        }
        batch.clear();
        let mut next_idx = 0;
        for seq in seqs.iter_mut().filter(|seq| seq.live()) {
            let pending = seq
                .pending
                .ok_or("a live sequence has no token to decode")?;
            seq.drafts.clear();
            // A draft past max_tokens could never be kept.
            let room = plan.max_tokens.saturating_sub(seq.tokens.len());
            if plan.draft > 0 && room > 0 {
                history.clear();
                history.extend_from_slice(plan.prompt);
                history.extend_from_slice(&seq.tokens);
                seq.drafts = lookup::draft(&history, plan.draft.min(room));
            }
            seq.batch_idx = next_idx;
            let start = seq.in_cache;
            for (offset, token) in std::iter::once(&pending)
                .chain(seq.drafts.iter())
                .enumerate()
            {
                batch
                    .add(
                        *token,
                        seq.position(plan.prompt.len(), start + offset)?,
                        &[seq.id],
                        true,
                    )
                    .map_err(|err| format!("could not fill a generation batch ({err})"))?;
                next_idx += 1;
            }
            stats.drafted += seq.drafts.len();
        }
        if next_idx == 0 {
            break;
        }
        ctx.decode(&mut batch)
            .map_err(|err| format!("llama.cpp failed to evaluate generated tokens ({err})"))?;
        stats.decodes += 1;

        for seq in seqs.iter_mut().filter(|seq| seq.live()) {
            // The pending token is in the cache now, right after the tokens before it.
            seq.pending = None;
            seq.in_cache += 1;
            let drafts = std::mem::take(&mut seq.drafts);
            let mut verified = 0;
            loop {
                let idx = seq.batch_idx + i32::try_from(verified).unwrap_or(i32::MAX);
                let token = pick(ctx, seq, idx, &vocab)?;
                // A sequence that ends here ends past its drafts, never on one.
                let drafted = token.is_some() && drafts.get(verified) == token.as_ref();
                take(seq, token, drafted, plan, model, &mut piece);
                if drafted {
                    verified += 1;
                    stats.accepted += 1;
                }
                if !drafted || !seq.live() {
                    break;
                }
            }
            // Drafts past the last kept one leave the cache now.
            if seq.live() && verified < drafts.len() {
                let from = seq.position(plan.prompt.len(), seq.in_cache)?;
                remove_from(ctx, seq.id, from)?;
            }
        }
        if seqs.iter().all(|seq| !seq.live()) {
            break;
        }
    }

    let mut choices: Vec<Choice> = Vec::with_capacity(seqs.len());
    for seq in seqs {
        // Whatever lies past the kept tokens (drafts, the token that ended it) leaves the cache.
        let from = seq.position(plan.prompt.len(), seq.keep)?;
        remove_from(ctx, seq.id, from)?;
        let text = seq.out.into_text();
        let duplicate_of = choices.iter().position(|earlier| earlier.text == text);
        choices.push(Choice {
            text,
            output_tokens: seq.tokens.len(),
            finish: seq.finish.unwrap_or(Finish::Length),
            duplicate_of,
            kept: seq.tokens[..seq.keep].to_vec(),
        });
    }
    Ok((choices, stats))
}

/// Picks a token for `seq` from the logits at `idx`; `None` when the sequence ends there (an
/// end-of-generation token, or a complete grammar).
fn pick(
    ctx: &LlamaContext<'_>,
    seq: &mut Seq,
    idx: i32,
    vocab: &llama_cpp_2::vocab::LlamaVocab<'_>,
) -> Result<Option<LlamaToken>, String> {
    match seq.sampler.sample(ctx, idx, |token| vocab.is_eog(token))? {
        Step::Token(token) if !vocab.is_eog(token) => Ok(Some(token)),
        Step::Token(_) | Step::GrammarDone => {
            seq.finish = Some(if seq.sampler.has_grammar() {
                Finish::Grammar
            } else {
                Finish::Stop
            });
            // The ending token is not text and plain decoding never decodes it.
            seq.keep = seq.in_cache;
            Ok(None)
        }
    }
}

/// Adds a picked token to `seq`'s text and ends the sequence at a stop string or `max_tokens`.
/// `in_cache` says whether the token is already decoded (a kept draft); otherwise it is the next
/// token to decode.
fn take(
    seq: &mut Seq,
    token: Option<LlamaToken>,
    in_cache: bool,
    plan: &Plan<'_>,
    model: &LlamaModel,
    piece: &mut Vec<u8>,
) {
    let Some(token) = token else {
        return;
    };
    piece.clear();
    model
        .vocab()
        .token_to_piece_into(token, piece, /*special*/ true, None);
    let checked = seq.out.text().len();
    seq.out.push(piece);
    let before = seq.ends.last().copied().unwrap_or(0);
    seq.tokens.push(token);
    seq.ends.push(before + piece.len());
    if let Some(at) = plan.stops.find(seq.out.text(), checked) {
        seq.out.truncate(at);
        seq.finish = Some(Finish::Stop);
        // Only tokens wholly before the stop string stay, as plain decoding leaves them.
        seq.keep = seq.ends.partition_point(|end| *end <= at).min(seq.in_cache);
        return;
    }
    if seq.tokens.len() >= plan.max_tokens {
        seq.finish = Some(Finish::Length);
        seq.keep = seq.in_cache;
        return;
    }
    if in_cache {
        seq.in_cache += 1;
    } else {
        seq.pending = Some(token);
    }
}

/// Drops sequence `id`'s cache from position `from` on.
fn remove_from(ctx: &mut LlamaContext<'_>, id: i32, from: i32) -> Result<(), String> {
    let id = u32::try_from(id).map_err(|_| "sequence id out of range".to_owned())?;
    let from = u32::try_from(from).map_err(|_| "token position out of range".to_owned())?;
    match ctx.clear_kv_cache_seq(Some(id), Some(from), None) {
        Ok(true) => Ok(()),
        Ok(false) => Err("llama.cpp could not drop part of a sequence's cache".to_owned()),
        Err(err) => Err(format!("could not drop part of a sequence's cache ({err})")),
    }
}
