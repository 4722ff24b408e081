//! The record of what sits in the KV cache, and which part of it a new prompt can keep.
//!
//! [`TokenLog`] holds the exact tokens of sequence 0 together with the text they spell (token pieces with
//! special tokens written out). A new prompt is turned into tokens in one of two ways:
//!
//! 1. If the prompt text starts with the whole cached text (the usual agent round: the previous prompt, the
//!    model's reply, then new turns), the cached tokens are reused as they are and only the rest is tokenized.
//!    Re-tokenizing the reply would often split it differently from how the model generated it (a grammar
//!    makes the model emit `{` and `\n` where the tokenizer would write `{\n`), which would miss the cache from
//!    the first token of the reply on.
//! 2. Otherwise the whole prompt is tokenized.
//!
//! Either way the kept part is the longest common token prefix, minus at least one token: llama.cpp only
//! returns logits for tokens decoded in the current batch, so the last prompt token is always decoded again.

/// Tokens in the KV cache, position `i` holding `tokens[i]`, with the text they spell.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenLog<T> {
    tokens: Vec<T>,
    text: Vec<u8>,
    /// `ends[i]` is the length of `text` up to and including token `i`.
    ends: Vec<usize>,
}

impl<T> Default for TokenLog<T> {
    fn default() -> Self {
        Self {
            tokens: Vec::new(),
            text: Vec::new(),
            ends: Vec::new(),
        }
    }
}

impl<T: Copy + PartialEq> TokenLog<T> {
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// The cached tokens, position `i` holding `tokens()[i]`.
    pub fn tokens(&self) -> &[T] {
        &self.tokens
    }

    /// Records a token decoded at position `len()`, with its text.
    pub fn push(&mut self, token: T, piece: &[u8]) {
        self.tokens.push(token);
        self.text.extend_from_slice(piece);
        self.ends.push(self.text.len());
    }

    /// Keeps the first `len` tokens.
    pub fn truncate(&mut self, len: usize) {
        self.tokens.truncate(len);
        self.ends.truncate(len);
        self.text.truncate(self.ends.last().copied().unwrap_or(0));
    }

    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// The tokens for `prompt` and how many of them can stay in the cache. `tokenize(text, whole_prompt)` must
    /// add the model's leading special tokens only when `whole_prompt` is true.
    pub fn plan(&self, prompt: &[u8], tokenize: impl Fn(&[u8], bool) -> Vec<T>) -> (Vec<T>, usize) {
        let rest = prompt
            .strip_prefix(self.text.as_slice())
            .filter(|rest| !self.tokens.is_empty() && std::str::from_utf8(rest).is_ok());
        let tokens = match rest {
            Some(rest) => {
                let mut tokens = self.tokens.clone();
                tokens.extend(tokenize(rest, /*whole_prompt*/ false));
                tokens
            }
            None => tokenize(prompt, /*whole_prompt*/ true),
        };
        let keep = reusable_prefix(&self.tokens, &tokens);
        (tokens, keep)
    }
}

/// How many leading tokens of `prompt` can stay in the KV cache, given the tokens it holds now.
pub fn reusable_prefix<T: PartialEq>(cached: &[T], prompt: &[T]) -> usize {
    common_prefix(cached, prompt).min(prompt.len().saturating_sub(1))
}

/// How many leading tokens `cached` and `prompt` share.
pub fn common_prefix<T: PartialEq>(cached: &[T], prompt: &[T]) -> usize {
    cached
        .iter()
        .zip(prompt)
        .take_while(|(cached, prompt)| cached == prompt)
        .count()
}

#[cfg(test)]
mod tests {
    use super::{TokenLog, reusable_prefix};
    use pretty_assertions::assert_eq;

    #[test]
    fn keeps_common_prefix_but_leaves_one_token_to_decode() {
        let cases: [(&[u32], &[u32]); 7] = [
            (&[], &[1, 2, 3]),
            (&[1, 2, 3], &[1, 2, 3, 4, 5]),
            (&[1, 2, 3], &[1, 2, 3]),
            (&[1, 2, 3, 4, 5], &[1, 2, 3]),
            (&[1, 2, 9, 4], &[1, 2, 3, 4]),
            (&[7, 8], &[1, 2]),
            (&[1], &[]),
        ];

        let actual: Vec<usize> = cases
            .iter()
            .map(|(cached, prompt)| reusable_prefix(cached, prompt))
            .collect();

        assert_eq!(actual, vec![0, 3, 2, 2, 2, 0, 0]);
    }

    /// A toy tokenizer: one token per byte, plus a leading 0 for a whole prompt.
    fn bytes(text: &[u8], whole_prompt: bool) -> Vec<u32> {
        let start = whole_prompt.then_some(0);
        start
            .into_iter()
            .chain(text.iter().map(|b| u32::from(*b)))
            .collect()
    }

    fn log(pieces: &[(u32, &str)]) -> TokenLog<u32> {
        let mut log = TokenLog::default();
        for (token, piece) in pieces {
            log.push(*token, piece.as_bytes());
        }
        log
    }

    #[test]
    fn reuses_cached_tokens_when_the_prompt_extends_the_cached_text() {
        // "ab" generated as one token the byte tokenizer would never produce.
        let cached = log(&[(0, ""), (97, "a"), (500, "ab")]);

        let actual = [
            cached.plan(b"aabc", bytes),
            cached.plan(b"aab", bytes),
            cached.plan(b"ax", bytes),
        ];

        assert_eq!(
            actual,
            [
                (vec![0, 97, 500, 99], 3),
                (vec![0, 97, 500], 2),
                (vec![0, 97, 120], 2),
            ]
        );
    }

    #[test]
    fn an_empty_log_tokenizes_the_whole_prompt() {
        let actual = TokenLog::default().plan(b"hi", bytes);

        assert_eq!(actual, (vec![0, 104, 105], 0));
    }

    #[test]
    fn truncating_keeps_text_and_tokens_in_step() {
        let mut cached = log(&[(1, "ab"), (2, "c"), (3, "de")]);

        cached.truncate(2);

        assert_eq!(cached, log(&[(1, "ab"), (2, "c")]));
    }
}
