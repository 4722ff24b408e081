//! What went wrong with one attempt, and how an HTTP error answer maps onto [`ModelError`].
//!
//! Messages name the provider, the HTTP status and the service's own words; they never contain the
//! API key (it is only in a request header, and headers are never quoted).

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

use super::retry::retry_after;
use crate::ModelError;

/// The most of a service's error text quoted in a message.
const MAX_QUOTED: usize = 500;

/// The end of one attempt that did not produce a reply.
#[derive(Debug)]
pub(crate) enum AttemptError {
    /// Another attempt may succeed: transport errors, 408/409/429/5xx, overload, a stalled or
    /// cut stream. `retry_after` is the service's own wait, when it said one.
    Retryable {
        message: String,
        retry_after: Option<Duration>,
    },
    /// Another attempt would fail the same way.
    Fatal(ModelError),
}

impl AttemptError {
    pub(crate) fn retryable(message: impl Into<String>) -> Self {
        Self::Retryable {
            message: message.into(),
            retry_after: None,
        }
    }
}

/// Who answered, for messages, and which key setting to point at when the key is refused.
#[derive(Debug, Clone)]
pub(crate) struct Provider {
    /// "OpenAI", "Anthropic", "the OpenAI-compatible server at http://…".
    pub label: String,
    /// What to do about a refused key, e.g. "set OPENAI_API_KEY to a valid key".
    pub key_hint: String,
}

/// Maps an answer with an error status to an attempt error.
pub(crate) fn from_status(
    provider: &Provider,
    status: StatusCode,
    headers: &HeaderMap,
    body: &[u8],
) -> AttemptError {
    let detail = ServiceDetail::parse(body);
    let said = detail.sentence();
    let message = format!("{} answered HTTP {status}{said}", provider.label);
    if detail.is_context_overflow() {
        return AttemptError::Fatal(ModelError::ContextWindowExceeded(message));
    }
    match status.as_u16() {
        401 | 403 => AttemptError::Fatal(ModelError::Auth(format!(
            "{message}; {}",
            provider.key_hint
        ))),
        408 | 409 | 429 | 500..=599 => AttemptError::Retryable {
            message,
            retry_after: retry_after(headers),
        },
        _ => AttemptError::Fatal(ModelError::Rejected(message)),
    }
}

/// Maps an error object sent inside a stream (Anthropic's `error` event, an OpenAI-compatible
/// server's `{"error": …}` chunk).
pub(crate) fn from_stream_error(provider: &Provider, error: &Value) -> AttemptError {
    let detail = ServiceDetail::from_error_value(error);
    let message = format!(
        "{} reported an error mid-stream{}",
        provider.label,
        detail.sentence()
    );
    if detail.is_context_overflow() {
        return AttemptError::Fatal(ModelError::ContextWindowExceeded(message));
    }
    let kind = detail.kind.as_deref().unwrap_or_default();
    match kind {
        "invalid_request_error" | "invalid_request" => {
            AttemptError::Fatal(ModelError::Rejected(message))
        }
        "authentication_error" | "permission_error" => AttemptError::Fatal(ModelError::Auth(
            format!("{message}; {}", provider.key_hint),
        )),
        // overloaded_error, api_error, rate_limit_error, server_error and unknown kinds.
        _ => AttemptError::retryable(message),
    }
}

/// The parts of a service's error body we look at.
#[derive(Debug, Default)]
struct ServiceDetail {
    message: Option<String>,
    /// `error.type` (Anthropic's `overloaded_error`, llama.cpp's `exceed_context_size_error`).
    kind: Option<String>,
    /// `error.code` (OpenAI's `context_length_exceeded`).
    code: Option<String>,
}

impl ServiceDetail {
    fn parse(body: &[u8]) -> Self {
        match serde_json::from_slice::<Value>(body) {
            Ok(value) => match value.get("error") {
                Some(error) => Self::from_error_value(error),
                None => Self {
                    message: value
                        .get("message")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .or_else(|| Some(value.to_string())),
                    ..Self::default()
                },
            },
            Err(_) => {
                let text = String::from_utf8_lossy(body).trim().to_owned();
                Self {
                    message: (!text.is_empty()).then_some(text),
                    ..Self::default()
                }
            }
        }
    }

    fn from_error_value(error: &Value) -> Self {
        let text = |key: &str| match error.get(key) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        match error {
            Value::String(message) => Self {
                message: Some(message.clone()),
                ..Self::default()
            },
            _ => Self {
                message: text("message"),
                kind: text("type"),
                code: text("code"),
            },
        }
    }

    /// `: the service's words` (shortened), or nothing when it said nothing.
    fn sentence(&self) -> String {
        match &self.message {
            Some(message) if !message.trim().is_empty() => {
                format!(": {}", shorten(message.trim(), MAX_QUOTED))
            }
            _ => String::new(),
        }
    }

    fn is_context_overflow(&self) -> bool {
        let marks = |s: &Option<String>| {
            s.as_deref()
                .is_some_and(|s| s == "context_length_exceeded" || s == "exceed_context_size_error")
        };
        if marks(&self.code) || marks(&self.kind) {
            return true;
        }
        let Some(message) = &self.message else {
            return false;
        };
        let lower = message.to_lowercase();
        [
            "maximum context length",
            "context_length_exceeded",
            "prompt is too long",
            "exceeds the available context size",
            "exceed_context_size_error",
        ]
        .iter()
        .any(|mark| lower.contains(mark))
    }
}

/// At most `max` bytes of `text`, cut at a character boundary, with `…` when cut.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut short: String = text
        .char_indices()
        .take_while(|(at, c)| at + c.len_utf8() <= max)
        .map(|(_, c)| c)
        .collect();
    short.push('…');
    short
}

/// A transport error as one line: reqwest's message followed by its causes.
pub(crate) fn describe_transport(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn provider() -> Provider {
        Provider {
            label: "OpenAI".into(),
            key_hint: "set OPENAI_API_KEY to a valid key".into(),
        }
    }

    fn classify(status: u16, body: &str) -> String {
        let status = StatusCode::from_u16(status).unwrap();
        match from_status(&provider(), status, &HeaderMap::new(), body.as_bytes()) {
            AttemptError::Retryable { message, .. } => format!("retry: {message}"),
            AttemptError::Fatal(error) => format!(
                "fatal (retryable {}, bad input {}): {error}",
                error.is_retryable(),
                error.is_bad_input()
            ),
        }
    }

    #[test]
    fn statuses_map_to_kinds() {
        let actual = vec![
            classify(
                429,
                r#"{"error":{"message":"Rate limit reached","type":"requests"}}"#,
            ),
            classify(401, r#"{"error":{"message":"Incorrect API key provided"}}"#),
            classify(404, "no such model"),
            classify(503, ""),
            classify(
                400,
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}"#,
            ),
            classify(
                400,
                r#"{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (8192 tokens)","type":"exceed_context_size_error"}}"#,
            ),
        ];
        let expected = vec![
            "retry: OpenAI answered HTTP 429 Too Many Requests: Rate limit reached".to_owned(),
            "fatal (retryable false, bad input true): the model service refused the credentials: \
OpenAI answered HTTP 401 Unauthorized: Incorrect API key provided; set OPENAI_API_KEY to a valid key"
                .to_owned(),
            "fatal (retryable false, bad input false): the model service rejected the request: \
OpenAI answered HTTP 404 Not Found: no such model"
                .to_owned(),
            "retry: OpenAI answered HTTP 503 Service Unavailable".to_owned(),
            "fatal (retryable false, bad input false): the request no longer fits the model's context window: \
OpenAI answered HTTP 400 Bad Request: This model's maximum context length is 8192 tokens."
                .to_owned(),
            "fatal (retryable false, bad input false): the request no longer fits the model's context window: \
OpenAI answered HTTP 400 Bad Request: request (9000 tokens) exceeds the available context size (8192 tokens)"
                .to_owned(),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn shorten_respects_char_boundaries() {
        assert_eq!(shorten("héllo", 2), "h…");
        assert_eq!(shorten("hello", 5), "hello");
    }
}
