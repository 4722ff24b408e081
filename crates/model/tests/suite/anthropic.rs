//! The Anthropic Messages client against the mock server: stream assembly, usage with the prompt
//! cache, the request it sends, and its errors.

use plumb_model::http::AnthropicClient;
use plumb_model::price::Price;
use plumb_model::{ModelClient, ModelError, ModelRequest};
use plumb_protocol::{Message, ModelReply, ToolCall, Usage};
use plumb_test_support::mock_http::{MockResponse, MockServer, Piece, awkward_pieces};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{KEY, conversation, fixture, settings, simple_request};

fn client(server: &MockServer) -> AnthropicClient {
    AnthropicClient::new("anthropic:test-model".into(), settings(&server.url())).unwrap()
}

fn text_reply(usage: Usage) -> ModelReply {
    ModelReply {
        content: "The bug is in `round_half_even` — it rounds 2.5 to 3.".into(),
        tool_calls: Vec::new(),
        usage,
        exhausted: false,
    }
}

#[tokio::test]
async fn text_reply_with_cache_usage_and_cost() {
    let server = MockServer::start(vec![MockResponse::sse(fixture("anthropic/text.sse"))]);
    let mut settings = settings(&server.url());
    settings.price = Some(Price {
        input: 3.0,
        cached_input: 0.25,
        output: 15.0,
    });
    let client = AnthropicClient::new("anthropic:test-model".into(), settings).unwrap();

    let actual = client.complete(&simple_request()).await.unwrap();

    // input 25 + cache read 2000 + cache write 300; (325 × 3 + 2000 × 0.25 + 15 × 15) / 1e6
    let expected = text_reply(Usage {
        input_tokens: 2325,
        cached_tokens: 2000,
        output_tokens: 15,
        usd: 0.0017,
        estimated: false,
    });
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn tool_use_blocks_from_json_pieces_split_at_awkward_bytes() {
    let body = fixture("anthropic/tool_use.sse");
    let server = MockServer::start(vec![MockResponse::sse_pieces(awkward_pieces(
        body.as_bytes(),
        5,
    ))]);

    let actual = client(&server).complete(&simple_request()).await.unwrap();

    let expected = ModelReply {
        content: "I'll read the file and search.".into(),
        tool_calls: vec![
            ToolCall {
                id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                name: "read_file".into(),
                arguments: json!({"path": "src/billing/café.py", "start": 40, "end": 80}),
            },
            ToolCall {
                id: "toolu_02Srch".into(),
                name: "search".into(),
                arguments: json!({"pattern": "round_half"}),
            },
            // Cut short by the model: the raw text, for the caller to repair or report.
            ToolCall {
                id: "toolu_03Bad".into(),
                name: "edit".into(),
                arguments: Value::String("{\"path\": \"a.py\", \"old\": ".into()),
            },
        ],
        usage: Usage {
            input_tokens: 472,
            cached_tokens: 0,
            output_tokens: 89,
            usd: 0.0,
            estimated: false,
        },
        exhausted: false,
    };
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn request_body_and_headers() {
    let server = MockServer::start(vec![MockResponse::sse(fixture("anthropic/text.sse"))]);

    client(&server).complete(&conversation()).await.unwrap();

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/messages")
    );
    let headers = (
        request.header("x-api-key"),
        request.header("anthropic-version"),
        request.header("content-type"),
        request.header("authorization"),
    );
    assert_eq!(
        headers,
        (
            Some(KEY),
            Some("2023-06-01"),
            Some("application/json"),
            None
        )
    );
    assert!(!request.body_text().contains(KEY));
    let expected = json!({
        "model": "test-model",
        "max_tokens": 4096,
        "stream": true,
        "system": [
            {"type": "text", "text": "You are plumb."},
            {"type": "text", "text": "Repository map:\nsrc/billing.py", "cache_control": {"type": "ephemeral"}},
        ],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Fix BILL-412."}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Reading first."},
                {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "src/billing.py", "start": 1}},
                // The malformed call's raw text cannot be an `input` object.
                {"type": "tool_use", "id": "call_b", "name": "search", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": "def total(): ..."},
                {"type": "tool_result", "tool_use_id": "call_b", "content": "The arguments were not valid JSON."},
                {"type": "text", "text": "Note: 3 rounds left."},
            ]},
        ],
        "tools": [{
            "name": "read_file",
            "description": "Read lines of a file.",
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "start": {"type": "integer"}},
                "required": ["path"],
            },
        }],
    });
    assert_eq!(request.json(), expected);
}

/// A note the loop added before the tool result still lands after it, in the same user turn.
#[tokio::test]
async fn tool_results_open_the_merged_user_turn() {
    let server = MockServer::start(vec![MockResponse::sse(fixture("anthropic/text.sse"))]);
    let call = ToolCall {
        id: "toolu_x".into(),
        name: "run_tests".into(),
        arguments: json!({}),
    };
    let request = ModelRequest {
        messages: vec![
            Message::user("Go."),
            Message::assistant("", vec![call]),
            Message::user("Budget: 1 round left."),
            Message::tool("toolu_x", "2 passed"),
        ],
        tools: Vec::new(),
        ..ModelRequest::default()
    };

    client(&server).complete(&request).await.unwrap();

    let body = server.requests()[0].json();
    let expected = json!([
        {"role": "user", "content": [{"type": "text", "text": "Go."}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_x", "name": "run_tests", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_x", "content": "2 passed"},
            {"type": "text", "text": "Budget: 1 round left."},
        ]},
    ]);
    assert_eq!(
        (&body["messages"], body.get("system"), body.get("tools")),
        (&expected, None, None)
    );
}

#[tokio::test]
async fn overload_mid_stream_and_529_are_retried() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let server = MockServer::start(vec![
        MockResponse::sse(fixture("anthropic/overloaded_mid_stream.sse")),
        MockResponse::json(529, &overloaded),
        MockResponse::sse(fixture("anthropic/text.sse")),
    ]);

    let actual = client(&server).complete(&simple_request()).await.unwrap();

    let expected = text_reply(Usage {
        input_tokens: 2325,
        cached_tokens: 2000,
        output_tokens: 15,
        usd: 0.0,
        estimated: false,
    });
    assert_eq!(actual, expected);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn prompt_too_long_is_context_window_exceeded() {
    let too_long = json!({"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 215744 tokens > 200000 maximum",
    }});
    let server = MockServer::start(vec![MockResponse::json(400, &too_long)]);

    let error = client(&server)
        .complete(&simple_request())
        .await
        .unwrap_err();

    let actual = (
        matches!(error, ModelError::ContextWindowExceeded(_)),
        error.to_string(),
    );
    let expected = (
        true,
        "the request no longer fits the model's context window: Anthropic answered HTTP 400 Bad Request: \
prompt is too long: 215744 tokens > 200000 maximum"
            .to_owned(),
    );
    assert_eq!(actual, expected);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn stream_cut_before_message_stop_is_an_error_after_retries() {
    let body = fixture("anthropic/text.sse");
    let cut_at = body.find("event: message_delta").unwrap();
    let cut = || {
        MockResponse::sse_pieces(vec![
            Piece::Bytes(body.as_bytes()[..cut_at].to_vec()),
            Piece::Cut,
        ])
    };
    let server = MockServer::start(vec![cut(), cut(), cut()]);

    let error = client(&server)
        .complete(&simple_request())
        .await
        .unwrap_err();

    let actual = (matches!(error, ModelError::Service(_)), error.to_string());
    let expected = (
        true,
        "the model service failed: the stream from Anthropic ended early, before its end event \
(`message_stop`) (gave up after 3 attempts)"
            .to_owned(),
    );
    assert_eq!(actual, expected);
    assert_eq!(server.requests().len(), 3);
}
