//! Retries, backoff and failures of the HTTP providers, shown on the OpenAI client (both clients
//! share the same retry loop and transport).

use std::time::{Duration, Instant};

use plumb_model::http::{OpenAiClient, OpenAiFlavor};
use plumb_model::{ModelClient, ModelError};
use plumb_test_support::mock_http::{MockResponse, MockServer, Piece};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{KEY, fixture, settings, simple_request};

const TEXT: &str = "The bug is in `round_half_even` — it rounds 2.5 to 3.";

fn client(url: &str) -> OpenAiClient {
    OpenAiClient::new(
        "openai:test-model".into(),
        settings(url),
        OpenAiFlavor::OpenAi,
    )
    .unwrap()
}

fn ok() -> MockResponse {
    MockResponse::sse(fixture("openai/text.sse"))
}

/// (variant, retryable, bad input, message)
fn describe(error: &ModelError) -> (&'static str, bool, bool, String) {
    let kind = match error {
        ModelError::Service(_) => "Service",
        ModelError::Auth(_) => "Auth",
        ModelError::Rejected(_) => "Rejected",
        ModelError::ContextWindowExceeded(_) => "ContextWindowExceeded",
        ModelError::BadSpec(_) => "BadSpec",
        ModelError::Script { .. } => "Script",
    };
    (
        kind,
        error.is_retryable(),
        error.is_bad_input(),
        error.to_string(),
    )
}

fn server_error() -> MockResponse {
    MockResponse::json(
        500,
        &json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}),
    )
}

#[tokio::test]
async fn rate_limit_with_retry_after_zero_then_success() {
    let limited = MockResponse::json(
        429,
        &json!({"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}),
    )
    .header("retry-after", "0");
    let server = MockServer::start(vec![limited, ok()]);

    let reply = client(&server.url())
        .complete(&simple_request())
        .await
        .unwrap();

    assert_eq!(reply.content, TEXT);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn retry_after_is_waited_exactly_and_capped() {
    let server = MockServer::start(vec![
        server_error().header("retry-after-ms", "150"),
        // An hour, capped at max_backoff.
        server_error().header("retry-after", "3600"),
        ok(),
    ]);
    let mut settings = settings(&server.url());
    settings.max_backoff = Duration::from_millis(400);
    let client =
        OpenAiClient::new("openai:test-model".into(), settings, OpenAiFlavor::OpenAi).unwrap();
    let started = Instant::now();

    let reply = client.complete(&simple_request()).await.unwrap();

    let elapsed = started.elapsed();
    assert_eq!(reply.content, TEXT);
    assert_eq!(server.requests().len(), 3);
    // 150 ms + 400 ms of waiting, not the backoff's 1 ms and 2 ms, nor an hour.
    assert!(
        elapsed >= Duration::from_millis(550) && elapsed < Duration::from_secs(3),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn server_errors_give_up_after_max_attempts() {
    let server = MockServer::start(vec![
        server_error(),
        server_error(),
        server_error(),
        server_error(),
    ]);

    let error = client(&server.url())
        .complete(&simple_request())
        .await
        .unwrap_err();

    let expected = (
        "Service",
        true,
        false,
        "the model service failed: OpenAI answered HTTP 500 Internal Server Error: The server had an \
error while processing your request. (gave up after 3 attempts)"
            .to_owned(),
    );
    assert_eq!(describe(&error), expected);
    assert_eq!((server.requests().len(), server.remaining()), (3, 1));
}

#[tokio::test]
async fn unauthorized_is_auth_and_not_retried() {
    let server = MockServer::start(vec![
        MockResponse::json(
            401,
            &json!({"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "code": "invalid_api_key"}}),
        ),
        ok(),
    ]);

    let error = client(&server.url())
        .complete(&simple_request())
        .await
        .unwrap_err();

    let expected = (
        "Auth",
        false,
        true,
        "the model service refused the credentials: OpenAI answered HTTP 401 Unauthorized: Incorrect API \
key provided.; check that OPENAI_API_KEY holds a valid key"
            .to_owned(),
    );
    assert_eq!(describe(&error), expected);
    assert!(!format!("{error} {error:?}").contains(KEY));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn not_found_is_rejected_and_not_retried() {
    let server = MockServer::start(vec![
        MockResponse::json(
            404,
            &json!({"error": {"message": "The model `gpt-9` does not exist or you do not have access to it.", "type": "invalid_request_error", "code": "model_not_found"}}),
        ),
        ok(),
    ]);

    let error = client(&server.url())
        .complete(&simple_request())
        .await
        .unwrap_err();

    let expected = (
        "Rejected",
        false,
        false,
        "the model service rejected the request: OpenAI answered HTTP 404 Not Found: The model `gpt-9` \
does not exist or you do not have access to it."
            .to_owned(),
    );
    assert_eq!(describe(&error), expected);
    assert_eq!(server.requests().len(), 1);
}

fn cut_stream() -> MockResponse {
    let body = fixture("openai/text.sse");
    // Inside the usage chunk, before `[DONE]` and after the finish_reason chunk's predecessor.
    let cut_at = body.find("\"content\":\" — it").unwrap();
    MockResponse::sse_pieces(vec![
        Piece::Bytes(body.as_bytes()[..cut_at].to_vec()),
        Piece::Cut,
    ])
}

#[tokio::test]
async fn stream_cut_early_is_retried() {
    let server = MockServer::start(vec![cut_stream(), ok()]);

    let reply = client(&server.url())
        .complete(&simple_request())
        .await
        .unwrap();

    assert_eq!(reply.content, TEXT);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn stream_always_cut_says_it_ended_early() {
    let server = MockServer::start(vec![cut_stream(), cut_stream(), cut_stream()]);

    let error = client(&server.url())
        .complete(&simple_request())
        .await
        .unwrap_err();

    let expected = (
        "Service",
        true,
        false,
        "the model service failed: the stream from OpenAI ended early, before its end marker \
(`data: [DONE]`) (gave up after 3 attempts)"
            .to_owned(),
    );
    assert_eq!(describe(&error), expected);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn stalled_stream_fails_after_the_idle_timeout() {
    let body = fixture("openai/text.sse");
    let first_event = body.find("\n\n").unwrap() + 2;
    let stalled = || {
        MockResponse::sse_pieces(vec![
            Piece::Bytes(body.as_bytes()[..first_event].to_vec()),
            Piece::Pause(Duration::from_millis(100)),
            Piece::Bytes(b": still here\n\n".to_vec()),
            Piece::Stall,
        ])
    };
    let server = MockServer::start(vec![stalled(), stalled()]);
    let mut settings = settings(&server.url());
    settings.idle_timeout = Duration::from_millis(300);
    settings.max_attempts = 2;
    let client =
        OpenAiClient::new("openai:test-model".into(), settings, OpenAiFlavor::OpenAi).unwrap();
    let started = Instant::now();

    let error = client.complete(&simple_request()).await.unwrap_err();

    let elapsed = started.elapsed();
    let expected = (
        "Service",
        true,
        false,
        "the model service failed: OpenAI sent nothing for 300 ms in the middle of its answer (the idle \
timeout) (gave up after 2 attempts)"
            .to_owned(),
    );
    assert_eq!(describe(&error), expected);
    assert_eq!(server.requests().len(), 2);
    // Two attempts of 100 ms + 300 ms each; the pause did not trip the timeout.
    assert!(
        elapsed >= Duration::from_millis(800) && elapsed < Duration::from_secs(4),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn nothing_listening_is_a_transport_error_after_retries() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");

    let error = client(&url).complete(&simple_request()).await.unwrap_err();

    let expected = (
        "Service",
        true,
        false,
        format!(
            "the model service failed: could not reach OpenAI at {url}/v1/chat/completions: error sending \
request: client error (Connect): tcp connect error: Connection refused (os error 111) (gave up after 3 attempts)"
        ),
    );
    assert_eq!(describe(&error), expected);
}

#[test]
fn a_bad_address_is_a_bad_spec() {
    let error = OpenAiClient::new(
        "openai-compat:x".into(),
        settings("localhost:8080"),
        OpenAiFlavor::Compatible,
    )
    .unwrap_err();

    let expected = (
        "BadSpec",
        false,
        true,
        "the model service address `localhost:8080/v1` must start with http:// or https://"
            .to_owned(),
    );
    assert_eq!(describe(&error), expected);
}
