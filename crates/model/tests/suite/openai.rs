//! The OpenAI chat-completions client against the mock server: stream assembly, usage and cost,
//! and the request it sends.

use plumb_model::http::{OpenAiClient, OpenAiFlavor};
use plumb_model::price::{Price, estimate_tokens};
use plumb_model::{ModelClient, ModelError};
use plumb_protocol::{ModelReply, ToolCall, Usage};
use plumb_test_support::mock_http::{MockResponse, MockServer, awkward_pieces};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{KEY, conversation, fixture, settings, simple_request};

fn client(server: &MockServer) -> OpenAiClient {
    OpenAiClient::new(
        "openai:test-model".into(),
        settings(&server.url()),
        OpenAiFlavor::OpenAi,
    )
    .unwrap()
}

#[tokio::test]
async fn text_reply_with_cached_usage_and_cost() {
    let server = MockServer::start(vec![MockResponse::sse(fixture("openai/text.sse"))]);
    let mut settings = settings(&server.url());
    settings.price = Some(Price {
        input: 2.0,
        cached_input: 0.5,
        output: 8.0,
    });
    let client =
        OpenAiClient::new("openai:test-model".into(), settings, OpenAiFlavor::OpenAi).unwrap();

    let actual = client.complete(&simple_request()).await.unwrap();

    // (176 fresh × 2 + 1024 cached × 0.5 + 25 out × 8) / 1e6
    let expected = ModelReply {
        content: "The bug is in `round_half_even` — it rounds 2.5 to 3.".into(),
        tool_calls: Vec::new(),
        usage: Usage {
            input_tokens: 1200,
            cached_tokens: 1024,
            output_tokens: 25,
            usd: 0.001064,
            estimated: false,
        },
        exhausted: false,
    };
    assert_eq!(actual, expected);
    assert_eq!(client.name(), "openai:test-model");
}

#[tokio::test]
async fn tool_call_arguments_in_pieces_split_at_awkward_bytes() {
    // CRLF line ends, cut every 7 bytes, between \r and \n, and inside "é".
    let body = fixture("openai/tool_call.sse").replace('\n', "\r\n");
    let pieces = awkward_pieces(body.as_bytes(), 7);
    assert!(pieces.len() > 100, "{}", pieces.len());
    let server = MockServer::start(vec![MockResponse::sse_pieces(pieces)]);

    let actual = client(&server).complete(&simple_request()).await.unwrap();

    let expected = ModelReply {
        content: String::new(),
        tool_calls: vec![ToolCall {
            id: "call_Qk1wRead".into(),
            name: "read_file".into(),
            arguments: json!({"path": "src/billing/café.py", "start": 40, "end": 80}),
        }],
        usage: Usage {
            input_tokens: 900,
            cached_tokens: 0,
            output_tokens: 31,
            usd: 0.0,
            estimated: false,
        },
        exhausted: false,
    };
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn parallel_tool_calls_interleaved_by_index() {
    let body = fixture("openai/parallel_tools.sse");
    let server = MockServer::start(vec![MockResponse::sse_pieces(awkward_pieces(
        body.as_bytes(),
        11,
    ))]);

    let actual = client(&server).complete(&simple_request()).await.unwrap();

    let expected = ModelReply {
        content: "Looking at both.".into(),
        tool_calls: vec![
            ToolCall {
                id: "call_A1".into(),
                name: "search".into(),
                arguments: json!({"pattern": "def round_half"}),
            },
            ToolCall {
                id: "call_B2".into(),
                name: "read_file".into(),
                arguments: json!({"path": "README.md"}),
            },
        ],
        usage: Usage {
            input_tokens: 500,
            cached_tokens: 0,
            output_tokens: 40,
            usd: 0.0,
            estimated: false,
        },
        exhausted: false,
    };
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn malformed_arguments_come_back_as_raw_text() {
    let server = MockServer::start(vec![MockResponse::sse(fixture(
        "openai/malformed_args.sse",
    ))]);

    let actual = client(&server).complete(&simple_request()).await.unwrap();

    let expected = vec![
        ToolCall {
            id: "call_bad".into(),
            name: "edit".into(),
            arguments: Value::String("{'path': 'a.py', 'old': \"x\"}".into()),
        },
        ToolCall {
            id: "call_empty".into(),
            name: "list_files".into(),
            arguments: json!({}),
        },
    ];
    assert_eq!(actual.tool_calls, expected);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn request_body_and_headers() {
    let server = MockServer::start(vec![MockResponse::sse(fixture("openai/text.sse"))]);

    let client = client(&server);

    client.complete(&conversation()).await.unwrap();

    assert!(!format!("{client:?}").contains(KEY));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert!(!request.body_text().contains(KEY));
    let expected = json!({
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are plumb."},
            {"role": "system", "content": "Repository map:\nsrc/billing.py"},
            {"role": "user", "content": "Fix BILL-412."},
            {
                "role": "assistant",
                "content": "Reading first.",
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": "{\"path\":\"src/billing.py\",\"start\":1}"},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "search", "arguments": "{\"pattern\": "},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "def total(): ..."},
            {"role": "tool", "tool_call_id": "call_b", "content": "The arguments were not valid JSON."},
            {"role": "user", "content": "Note: 3 rounds left."},
        ],
        "tools": [{
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read lines of a file.",
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "start": {"type": "integer"}},
                    "required": ["path"],
                },
            },
        }],
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_completion_tokens": 4096,
    });
    assert_eq!(request.json(), expected);
}

/// A local server without a key: no `authorization`, `max_tokens`, no tools field, no `[DONE]`
/// (the finish_reason chunk ends the answer), no usage (estimated), a call without an id.
#[tokio::test]
async fn compatible_server_without_key_usage_or_done() {
    let server = MockServer::start(vec![MockResponse::sse(fixture("openai/local_no_done.sse"))]);
    let mut settings = settings(&server.url());
    settings.api_key = None;
    let client = OpenAiClient::new(
        "ollama:qwen2.5-coder:7b".into(),
        settings,
        OpenAiFlavor::Compatible,
    )
    .unwrap();

    let actual = client.complete(&simple_request()).await.unwrap();

    let expected = ModelReply {
        content: "Running the tests.".into(),
        tool_calls: vec![ToolCall {
            id: "call_1".into(),
            name: "run_tests".into(),
            arguments: json!({"filter": "billing"}),
        }],
        // Counted with the o200k tokenizer: each message's text and three tokens of framing, three
        // more before the reply; the reply's text, the tool's name and its arguments.
        usage: Usage {
            input_tokens: (3 + estimate_tokens("You are plumb."))
                + (3 + estimate_tokens("Why does the invoice total round wrong?"))
                + 3,
            cached_tokens: 0,
            output_tokens: estimate_tokens("Running the tests.")
                + estimate_tokens("run_tests")
                + estimate_tokens(r#"{"filter":"billing"}"#),
            usd: 0.0,
            estimated: true,
        },
        exhausted: false,
    };
    assert_eq!(actual, expected);
    let request = &server.requests()[0];
    assert_eq!(request.header("authorization"), None);
    let body = request.json();
    assert_eq!(
        (
            body.get("max_tokens"),
            body.get("max_completion_tokens"),
            body.get("tools")
        ),
        (Some(&json!(4096)), None, None)
    );
}

#[tokio::test]
async fn context_length_error_is_not_retried() {
    let openai_error = json!({"error": {
        "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130502 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }});
    let llama_error = json!({"error": {
        "code": 400,
        "message": "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 9000,
        "n_ctx": 8192,
    }});
    let server = MockServer::start(vec![
        MockResponse::json(400, &openai_error),
        MockResponse::json(400, &llama_error),
    ]);
    let compat = OpenAiClient::new(
        "openai-compat:llama".into(),
        settings(&server.url()),
        OpenAiFlavor::Compatible,
    )
    .unwrap();

    let first = client(&server)
        .complete(&simple_request())
        .await
        .unwrap_err();
    let second = compat.complete(&simple_request()).await.unwrap_err();

    let actual: Vec<(bool, String)> = [first, second]
        .iter()
        .map(|e| {
            (
                matches!(e, ModelError::ContextWindowExceeded(_)),
                e.to_string(),
            )
        })
        .collect();
    let url = server.url();
    let expected = vec![
        (
            true,
            "the request no longer fits the model's context window: OpenAI answered HTTP 400 Bad Request: \
This model's maximum context length is 128000 tokens. However, your messages resulted in 130502 tokens. \
Please reduce the length of the messages."
                .to_owned(),
        ),
        (
            true,
            format!(
                "the request no longer fits the model's context window: the OpenAI-compatible server at {url}/v1 \
answered HTTP 400 Bad Request: request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it"
            ),
        ),
    ];
    assert_eq!(actual, expected);
    assert_eq!(server.requests().len(), 2);
}
