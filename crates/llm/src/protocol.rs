//! The JSON Lines protocol on stdin/stdout.
//!
//! Order on stdout: one [`Event::Ready`] after the model loads (or one [`Event::Error`] and exit), then exactly
//! one [`Reply`] or [`ErrorReply`] per non-empty request line, in request order. Each line is flushed at once.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// One generation request (one stdin line).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    pub id: u64,
    /// Full prompt text; special tokens such as `<|im_start|>` written as text are parsed as special tokens.
    pub prompt: String,
    /// The JSON Schema the output must match, as the exact JSON text sent (key order matters: the grammar writes
    /// properties in schema order); `null` or absent means unconstrained.
    #[serde(default, deserialize_with = "raw_json")]
    pub json_schema: Option<String>,
    /// Tokens to generate at most; 0 only evaluates the prompt into the cache.
    #[serde(default = "defaults::max_tokens")]
    pub max_tokens: u32,
    /// 0 or below selects greedy decoding.
    #[serde(default = "defaults::temperature")]
    pub temperature: f32,
    /// 0 disables top-k.
    #[serde(default = "defaults::top_k")]
    pub top_k: u32,
    #[serde(default = "defaults::top_p")]
    pub top_p: f32,
    #[serde(default = "defaults::min_p")]
    pub min_p: f32,
    /// 1.0 disables the repetition penalty.
    #[serde(default = "defaults::repeat_penalty")]
    pub repeat_penalty: f32,
    /// The seed of sequence 0; sequence `i` samples with [`sequence_seed`]`(seed, i)`.
    #[serde(default = "defaults::seed")]
    pub seed: u32,
    /// Replies to sample side by side from this prompt (one batch, see `generate.rs`); at most the
    /// runner's `--parallel`. Fewer come back when the context window cannot hold them all.
    #[serde(default = "defaults::n")]
    pub n: u32,
    /// Draft tokens guessed by prompt lookup and verified per decode (0: plain decoding). The
    /// reply is the one plain decoding gives; only the number of decodes changes.
    #[serde(default)]
    pub draft: u32,
    /// Generation ends before the first occurrence of any of these; the stop string is not returned.
    #[serde(default = "defaults::stop")]
    pub stop: Vec<String>,
    /// Keep this prompt's evaluated state on disk (with `--state-dir`) and load it when the same prompt
    /// starts a fresh cache again: for the fixed head every run begins with.
    #[serde(default)]
    pub persist: bool,
}

fn raw_json<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let raw: Option<Box<RawValue>> = Deserialize::deserialize(deserializer)?;
    Ok(raw.map(|raw| raw.get().to_owned()))
}

mod defaults {
    pub fn max_tokens() -> u32 {
        1024
    }
    pub fn temperature() -> f32 {
        0.2
    }
    pub fn top_k() -> u32 {
        40
    }
    pub fn top_p() -> f32 {
        0.95
    }
    pub fn min_p() -> f32 {
        0.05
    }
    pub fn repeat_penalty() -> f32 {
        1.0
    }
    pub fn seed() -> u32 {
        42
    }
    pub fn n() -> u32 {
        1
    }
    pub fn stop() -> Vec<String> {
        vec!["<|im_end|>".to_owned()]
    }
}

/// The most draft tokens one decode verifies: past a dozen, a CPU spends more on the batch than
/// the guesses save.
pub const MAX_DRAFT: u32 = 16;

/// The seed sequence `index` of a request samples with: sequence 0 the request's own, the others
/// spread far apart, so two sequences never share a random stream.
pub fn sequence_seed(seed: u32, index: u32) -> u32 {
    seed.wrapping_add(index.wrapping_mul(0x9E37_79B9))
}

/// A request line that could not be used, with its id when the line had a readable one.
#[derive(Debug, Clone, PartialEq)]
pub struct BadLine {
    pub id: Option<u64>,
    pub message: String,
}

impl Request {
    /// Parses and checks one request line.
    pub fn parse(line: &str) -> Result<Self, BadLine> {
        let request: Self = serde_json::from_str(line).map_err(|err| BadLine {
            id: serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|value| value.get("id").and_then(Value::as_u64)),
            message: format!(
                "The request line is not a valid request ({err}). Send one JSON object per line with a whole-number \
                 \"id\" and a string \"prompt\"."
            ),
        })?;
        request.check().map_err(|message| BadLine {
            id: Some(request.id),
            message,
        })?;
        Ok(request)
    }

    fn check(&self) -> Result<(), String> {
        if self.prompt.is_empty() {
            return Err("\"prompt\" is empty; send the full prompt text.".to_owned());
        }
        if !self.temperature.is_finite() {
            return Err(
                "\"temperature\" must be a finite number (0 or below for greedy decoding)."
                    .to_owned(),
            );
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            return Err(format!(
                "\"top_p\" is {}; it must be above 0 and at most 1.",
                self.top_p
            ));
        }
        if !(0.0..=1.0).contains(&self.min_p) {
            return Err(format!(
                "\"min_p\" is {}; it must be between 0 and 1.",
                self.min_p
            ));
        }
        if !(self.repeat_penalty.is_finite() && self.repeat_penalty > 0.0) {
            return Err(format!(
                "\"repeat_penalty\" is {}; it must be above 0 (1.0 turns it off).",
                self.repeat_penalty
            ));
        }
        if self.n == 0 {
            return Err("\"n\" is 0; ask for at least one reply.".to_owned());
        }
        if self.draft > MAX_DRAFT {
            return Err(format!(
                "\"draft\" is {}; at most {MAX_DRAFT} draft tokens are verified at once.",
                self.draft
            ));
        }
        if self.stop.iter().any(String::is_empty) {
            return Err("\"stop\" holds an empty string; remove it.".to_owned());
        }
        Ok(())
    }
}

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// An end-of-generation token or a stop string (neither is in the text).
    Stop,
    /// `max_tokens` was reached (always the case for `max_tokens: 0`).
    Length,
    /// A `json_schema` was given and its grammar is complete.
    Grammar,
}

/// One of the replies a request sampled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChoiceReply {
    pub text: String,
    pub output_tokens: usize,
    pub finish: Finish,
    /// The index of an earlier choice this one repeats word for word.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<usize>,
}

/// A successful reply. `text` and `finish` are those of the first choice; `output_tokens` counts
/// every choice's tokens (what the request cost).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reply {
    pub id: u64,
    pub text: String,
    pub prompt_tokens: usize,
    /// Prompt tokens reused from the KV cache rather than evaluated again.
    pub cached_tokens: usize,
    pub output_tokens: usize,
    pub prompt_ms: f64,
    pub gen_ms: f64,
    pub finish: Finish,
    /// Every reply sampled, the first included.
    pub choices: Vec<ChoiceReply>,
    /// Draft tokens verified and kept, and the decodes generation took (one per step of all
    /// sequences together).
    pub drafted: usize,
    pub accepted: usize,
    pub decodes: usize,
    pub peak_rss_kb: Option<u64>,
}

/// The class of a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    ContextWindowExceeded,
    BadRequest,
    Internal,
}

/// A failed request; the process keeps serving.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorReply {
    pub id: Option<u64>,
    pub error: String,
    pub kind: ErrorKind,
}

/// Lines about the process rather than a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    Ready {
        n_ctx: u32,
        load_ms: f64,
        model: String,
    },
    /// Start-up failed; the process exits after this line.
    Error { message: String },
}

/// Milliseconds rounded to 0.01 so lines stay short.
pub fn millis(duration: std::time::Duration) -> f64 {
    (duration.as_secs_f64() * 100_000.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::{BadLine, ErrorKind, ErrorReply, Event, Request};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn fills_defaults() {
        let actual = Request::parse(r#"{"id": 1, "prompt": "hi"}"#);

        let expected = Request {
            id: 1,
            prompt: "hi".to_owned(),
            json_schema: None,
            max_tokens: 1024,
            temperature: 0.2,
            top_k: 40,
            top_p: 0.95,
            min_p: 0.05,
            repeat_penalty: 1.0,
            seed: 42,
            n: 1,
            draft: 0,
            stop: vec!["<|im_end|>".to_owned()],
            persist: false,
        };
        assert_eq!(actual, Ok(expected));
    }

    #[test]
    fn reads_every_field() {
        let line = r#"{"id": 7, "prompt": "p", "json_schema": {"type": "object", "properties": {"b": {}, "a": {}}},
            "max_tokens": 0, "temperature": 0.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.1,
            "seed": 3, "n": 4, "draft": 8, "stop": [], "persist": true}"#;

        let actual = Request::parse(line);

        let expected = Request {
            id: 7,
            prompt: "p".to_owned(),
            json_schema: Some(r#"{"type": "object", "properties": {"b": {}, "a": {}}}"#.to_owned()),
            max_tokens: 0,
            temperature: 0.0,
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            repeat_penalty: 1.1,
            seed: 3,
            n: 4,
            draft: 8,
            stop: vec![],
            persist: true,
        };
        assert_eq!(actual, Ok(expected));
    }

    #[test]
    fn null_schema_means_unconstrained() {
        let actual = Request::parse(r#"{"id": 1, "prompt": "hi", "json_schema": null}"#)
            .map(|r| r.json_schema);

        assert_eq!(actual, Ok(None));
    }

    #[test]
    fn bad_lines_keep_the_id_when_it_is_readable() {
        let lines = [
            "not json",
            r#"{"id": 4, "prompt": 5}"#,
            r#"{"id": 5, "prompt": "x", "max_token": 3}"#,
            r#"{"id": 6, "prompt": ""}"#,
            r#"{"id": 8, "prompt": "x", "top_p": 0}"#,
            r#"{"prompt": "x"}"#,
            r#"{"id": 9, "prompt": "x", "n": 0}"#,
            r#"{"id": 10, "prompt": "x", "draft": 17}"#,
        ];

        let actual: Vec<Option<u64>> = lines
            .iter()
            .map(|line| Request::parse(line).err().and_then(|BadLine { id, .. }| id))
            .collect();

        assert_eq!(
            actual,
            vec![
                None,
                Some(4),
                Some(5),
                Some(6),
                Some(8),
                None,
                Some(9),
                Some(10)
            ]
        );
    }

    #[test]
    fn output_lines_have_the_documented_shape() {
        let ready = Event::Ready {
            n_ctx: 8192,
            load_ms: 12.5,
            model: "m.gguf".to_owned(),
        };
        let error = ErrorReply {
            id: None,
            error: "x".to_owned(),
            kind: ErrorKind::ContextWindowExceeded,
        };

        let actual = (
            serde_json::to_value(ready).ok(),
            serde_json::to_value(error).ok(),
        );

        let expected = (
            Some(json!({"event": "ready", "n_ctx": 8192, "load_ms": 12.5, "model": "m.gguf"})),
            Some(json!({"id": null, "error": "x", "kind": "context_window_exceeded"})),
        );
        assert_eq!(actual, expected);
    }
}
