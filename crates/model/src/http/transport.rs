//! One streaming POST: send the JSON body, map an error status, then feed the server-sent events
//! to a sink until it says it has seen the end or the body ends. Every wait for bytes, the
//! response head included, is bounded by the idle timeout; the stream as a whole is not.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

use super::errors::{self, AttemptError, Provider};
use super::sse::{SseEvent, SseParser};

/// The most of an error answer's body that is read.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// What a sink wants after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    More,
    /// The provider's end marker arrived; stop reading.
    Done,
}

/// Takes the events of one attempt's stream.
pub(crate) trait EventSink: Send {
    fn event(&mut self, event: SseEvent) -> Result<Flow, AttemptError>;
}

/// One request, ready to send.
pub(crate) struct Post<'a> {
    pub http: &'a reqwest::Client,
    pub provider: &'a Provider,
    pub url: String,
    /// Extra headers (the key, API versions); `content-type` is set here.
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub idle_timeout: Duration,
}

/// Sends `post` and feeds its events to `sink`. Returns when the sink said [`Flow::Done`] or the
/// body ended; whether an ended body was complete is the sink's to judge.
pub(crate) async fn stream(post: Post<'_>, sink: &mut dyn EventSink) -> Result<(), AttemptError> {
    let Post {
        http,
        provider,
        url,
        mut headers,
        body,
        idle_timeout,
    } = post;
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let request = http.post(&url).headers(headers).body(body);
    let response = match tokio::time::timeout(idle_timeout, request.send()).await {
        Err(_) => return Err(idle(provider, idle_timeout, "before answering")),
        Ok(Err(error)) => {
            return Err(AttemptError::retryable(format!(
                "could not reach {} at {url}: {}",
                provider.label,
                errors::describe_transport(&error.without_url())
            )));
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    let response_headers = response.headers().clone();
    let mut chunks = response.bytes_stream();
    if !status.is_success() {
        let mut body = Vec::new();
        while body.len() < MAX_ERROR_BODY {
            match tokio::time::timeout(idle_timeout, chunks.next()).await {
                Ok(Some(Ok(bytes))) => body.extend_from_slice(&bytes),
                // A cut or silent error body still has its status.
                Ok(Some(Err(_)) | None) | Err(_) => break,
            }
        }
        return Err(errors::from_status(
            provider,
            status,
            &response_headers,
            &body,
        ));
    }
    let mut parser = SseParser::new();
    loop {
        let next = match tokio::time::timeout(idle_timeout, chunks.next()).await {
            Err(_) => return Err(idle(provider, idle_timeout, "in the middle of its answer")),
            Ok(next) => next,
        };
        match next {
            Some(Ok(bytes)) => {
                for event in parser.feed(&bytes) {
                    if sink.event(event)? == Flow::Done {
                        return Ok(());
                    }
                }
            }
            Some(Err(error)) => {
                return Err(AttemptError::retryable(format!(
                    "the stream from {} broke off: {}",
                    provider.label,
                    errors::describe_transport(&error.without_url())
                )));
            }
            None => {
                // An unterminated last event counts only if it makes sense on its own; a cut
                // one is left to the sink's end-of-stream check.
                if let Some(event) = parser.finish() {
                    let _ = sink.event(event);
                }
                return Ok(());
            }
        }
    }
}

fn idle(provider: &Provider, timeout: Duration, when: &str) -> AttemptError {
    AttemptError::retryable(format!(
        "{} sent nothing for {} {when} (the idle timeout)",
        provider.label,
        seconds(timeout)
    ))
}

/// "300 ms", "60 s".
pub(crate) fn seconds(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}
