//! The hosted providers end to end: the real `plumb` binary runs BILL-412 against a local mock
//! server that replays streaming bodies in the OpenAI and Anthropic wire formats, split at awkward
//! byte boundaries. The assertions are on what plumb sent (tool schemas, every tool result paired
//! with its call, the key only in its header) and on the outcome of each failure mode.

use plumb_model::{ScriptTurn, parse_script};
use plumb_protocol::Outcome;
use plumb_test_support::mock_http::{
    MockResponse, MockServer, Piece, RecordedRequest, awkward_pieces,
};
use serde_json::{Value, json};

use super::common::{Fixture, journal_events, plumb_command, report, stderr};

const KEY: &str = "sk-plumb-test-4f1c9a7e2b";

const TOOLS: [&str; 9] = [
    "search_code",
    "read_file",
    "list_files",
    "edit_file",
    "replace_function",
    "create_file",
    "run_tests",
    "run",
    "done",
];

fn script() -> Vec<ScriptTurn> {
    let path = plumb_test_support::billing_example().join("bill-412.script.jsonl");
    parse_script(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn sse(data: &Value) -> String {
    format!("data: {data}\n\n")
}

/// One scripted turn as an OpenAI chat-completions stream: text in two pieces, each call's
/// arguments in five, a finish chunk, a usage chunk and `[DONE]`.
pub(super) fn openai_body(turn: &ScriptTurn, round: usize) -> Vec<u8> {
    let mut body = String::new();
    let chunk = |delta: Value, finish: Value| json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    body.push_str(&sse(&chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )));
    let half = turn.content.chars().count() / 2;
    let first: String = turn.content.chars().take(half).collect();
    let second: String = turn.content.chars().skip(half).collect();
    for piece in [first, second] {
        body.push_str(&sse(&chunk(json!({"content": piece}), Value::Null)));
    }
    for (index, call) in turn.tool_calls.iter().enumerate() {
        let id = format!("call_{round}_{index}");
        body.push_str(&sse(&chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": call.name, "arguments": ""}}]}),
            Value::Null,
        )));
        let arguments = call.arguments.to_string();
        let chars: Vec<char> = arguments.chars().collect();
        let size = chars.len().div_ceil(5).max(1);
        for part in chars.chunks(size) {
            let part: String = part.iter().collect();
            body.push_str(&sse(&chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}),
                Value::Null,
            )));
        }
    }
    body.push_str(&sse(&chunk(json!({}), json!("tool_calls"))));
    body.push_str(&sse(&json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 2000, "completion_tokens": 100, "prompt_tokens_details": {"cached_tokens": 1500}}})));
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// One scripted turn as an Anthropic messages stream with a text block and tool_use blocks whose
/// input arrives as `input_json_delta` pieces.
fn anthropic_body(turn: &ScriptTurn, round: usize) -> Vec<u8> {
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let mut body = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "usage": {"input_tokens": 500, "cache_read_input_tokens": 1500, "cache_creation_input_tokens": 0, "output_tokens": 1}}}),
    );
    body.push_str(&event("ping", json!({"type": "ping"})));
    let mut index = 0;
    if !turn.content.is_empty() {
        body.push_str(&event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
        body.push_str(&event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": turn.content}})));
        body.push_str(&event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    for (n, call) in turn.tool_calls.iter().enumerate() {
        let id = format!("toolu_{round}_{n}");
        body.push_str(&event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": call.name, "input": {}}})));
        let arguments = call.arguments.to_string();
        let chars: Vec<char> = arguments.chars().collect();
        let size = chars.len().div_ceil(5).max(1);
        for part in chars.chunks(size) {
            let part: String = part.iter().collect();
            body.push_str(&event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": part}})));
        }
        body.push_str(&event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    body.push_str(&event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 100}})));
    body.push_str(&event("message_stop", json!({"type": "message_stop"})));
    body.into_bytes()
}

/// BILL-412's script as OpenAI streams, one per round (8).
pub(super) fn openai_responses() -> Vec<MockResponse> {
    script()
        .iter()
        .enumerate()
        .map(|(round, turn)| {
            MockResponse::sse_pieces(awkward_pieces(&openai_body(turn, round + 1), 7))
        })
        .collect()
}

fn run_fix(
    fixture: &Fixture,
    model: &str,
    overrides: &[String],
    key: Option<(&str, &str)>,
) -> std::process::Output {
    let repo = fixture.repo_path().display().to_string();
    let ticket = fixture.ticket().display().to_string();
    let mut command = plumb_command(fixture.home.path());
    command.args([
        "fix",
        "--repo",
        &repo,
        "--ticket",
        &ticket,
        "--model",
        model,
        "--json",
        "--sandbox",
        "none",
    ]);
    // These count and read the fixer's requests; the review step has its own tests
    // (suite::review, attack::disk scripts a reviewer's reply on the wire).
    command.args([
        "-c",
        "model_service.initial_backoff_ms=10",
        "-c",
        "model_service.max_backoff_ms=50",
        "-c",
        "review.enabled=false",
    ]);
    for item in overrides {
        command.args(["-c", item]);
    }
    command
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY");
    if let Some((name, value)) = key {
        command.env(name, value);
    }
    command.output().unwrap()
}

pub(super) fn openai_fix(
    fixture: &Fixture,
    server: &MockServer,
    extra: &[&str],
) -> std::process::Output {
    let mut overrides = vec![format!("providers.openai.base_url={}/v1", server.url())];
    overrides.extend(extra.iter().map(|s| s.to_string()));
    run_fix(
        fixture,
        "openai:gpt-4.1",
        &overrides,
        Some(("OPENAI_API_KEY", KEY)),
    )
}

/// Every tool message answers a call made earlier in the same request, and every call is answered.
fn assert_openai_pairing(request: &Value) {
    let messages = request["messages"].as_array().unwrap();
    let mut open: Vec<String> = Vec::new();
    for message in messages {
        match message["role"].as_str().unwrap() {
            "assistant" => {
                assert!(
                    open.is_empty(),
                    "calls left unanswered before a new assistant turn: {open:?}"
                );
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    assert_eq!(call["type"], "function");
                    let arguments = call["function"]["arguments"].as_str().unwrap();
                    serde_json::from_str::<Value>(arguments).unwrap();
                    open.push(call["id"].as_str().unwrap().to_string());
                }
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap().to_string();
                assert!(open.contains(&id), "tool result {id} answers no open call");
                open.retain(|o| o != &id);
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "calls never answered: {open:?}");
}

fn assert_key_only_in_header(requests: &[RecordedRequest], header: &str, expected: &str) {
    for request in requests {
        assert!(
            !request.body_text().contains(KEY),
            "the key is in a request body"
        );
        assert_eq!(request.header(header), Some(expected));
    }
}

fn assert_key_not_in_journal(journal: &str) {
    let text = std::fs::read_to_string(journal).unwrap();
    assert!(!text.contains(KEY), "the key is in the journal");
}

#[test]
fn openai_full_run_sends_schemas_pairs_results_and_keeps_the_key_in_its_header() {
    let fixture = Fixture::billing();
    let server = MockServer::start(openai_responses());
    let output = openai_fix(&fixture, &server, &[]);
    let report = report(&output);
    assert_eq!(report.outcome, Outcome::Success, "{}", stderr(&output));
    assert_eq!(report.rounds, 8);
    let requests = server.requests();
    assert_eq!(requests.len(), 8);
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(request.path, "/v1/chat/completions");
        let body = request.json();
        assert_eq!(body["model"], "gpt-4.1");
        assert_eq!(body["stream"], true);
        let names: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, TOOLS);
        let edit = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == "edit_file")
            .unwrap();
        assert_eq!(
            edit["function"]["parameters"]["required"],
            json!(["path", "old_text", "new_text"])
        );
        assert_openai_pairing(&body);
    }
    // The last request carries all seven earlier calls and their results.
    let last = requests[7].json();
    let results = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    assert_eq!(results, 7);
    assert_key_only_in_header(&requests, "authorization", &format!("Bearer {KEY}"));
    assert_key_not_in_journal(&report.journal);
    assert_eq!(report.usage.input_tokens, 8 * 2000);
    assert_eq!(report.usage.cached_tokens, 8 * 1500);
    assert_eq!(report.usage.output_tokens, 8 * 100);
    assert!(report.usage.usd > 0.0, "gpt-4.1 has a price in the catalog");
    assert!(
        report.patch.contains("billing/invoice_totals.py"),
        "{}",
        report.patch
    );
}

#[test]
fn anthropic_full_run_sends_tool_results_as_blocks() {
    let fixture = Fixture::billing();
    let responses = script()
        .iter()
        .enumerate()
        .map(|(round, turn)| {
            MockResponse::sse_pieces(awkward_pieces(&anthropic_body(turn, round + 1), 11))
        })
        .collect();
    let server = MockServer::start(responses);
    let overrides = vec![format!("providers.anthropic.base_url={}/v1", server.url())];
    let output = run_fix(
        &fixture,
        "anthropic:claude-sonnet-4-5",
        &overrides,
        Some(("ANTHROPIC_API_KEY", KEY)),
    );
    let report = report(&output);
    assert_eq!(report.outcome, Outcome::Success, "{}", stderr(&output));
    let requests = server.requests();
    assert_eq!(requests.len(), 8);
    for request in &requests {
        assert_eq!(request.path, "/v1/messages");
        assert!(request.header("anthropic-version").is_some());
        let body = request.json();
        let names: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, TOOLS);
        assert!(body["tools"][0]["input_schema"].is_object());
        // Roles alternate, starting with the user; every tool_result answers the tool_use before it.
        let messages = body["messages"].as_array().unwrap();
        let mut expected_role = "user";
        let mut open: Vec<String> = Vec::new();
        for message in messages {
            assert_eq!(message["role"], expected_role, "{message}");
            expected_role = if expected_role == "user" {
                "assistant"
            } else {
                "user"
            };
            for block in message["content"].as_array().into_iter().flatten() {
                match block["type"].as_str().unwrap() {
                    "tool_use" => open.push(block["id"].as_str().unwrap().to_string()),
                    "tool_result" => {
                        let id = block["tool_use_id"].as_str().unwrap().to_string();
                        assert!(open.contains(&id), "tool_result {id} answers no tool_use");
                        open.retain(|o| o != &id);
                    }
                    _ => {}
                }
            }
        }
        assert!(open.is_empty(), "unanswered tool_use blocks: {open:?}");
    }
    assert_key_only_in_header(&requests, "x-api-key", KEY);
    assert_key_not_in_journal(&report.journal);
    assert_eq!(report.usage.input_tokens, 8 * 2000);
    assert_eq!(report.usage.cached_tokens, 8 * 1500);
}

#[test]
fn a_429_is_retried_after_its_retry_after() {
    let fixture = Fixture::billing();
    let mut responses = vec![
        MockResponse::json(
            429,
            &json!({"error": {"message": "rate limited", "type": "rate_limit_error"}}),
        )
        .header("retry-after", "0"),
    ];
    responses.extend(openai_responses());
    let server = MockServer::start(responses);
    let output = openai_fix(&fixture, &server, &[]);
    assert_eq!(
        report(&output).outcome,
        Outcome::Success,
        "{}",
        stderr(&output)
    );
    assert_eq!(server.requests().len(), 9);
}

#[test]
fn three_500s_end_the_run_as_an_infrastructure_failure() {
    let fixture = Fixture::billing();
    let error = MockResponse::json(
        500,
        &json!({"error": {"message": "the server had an error"}}),
    );
    let server = MockServer::start(vec![error.clone(), error.clone(), error.clone(), error]);
    let output = openai_fix(&fixture, &server, &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let report = report(&output);
    assert_eq!(report.outcome, Outcome::InfraError);
    assert!(report.reason.contains("500"), "{}", report.reason);
    assert_eq!(server.requests().len(), 3, "three attempts, not four");
    assert!(
        std::fs::read_dir(fixture.repo_path()).is_ok(),
        "the repository is still there"
    );
}

#[test]
fn a_stream_cut_before_its_end_is_retried() {
    let fixture = Fixture::billing();
    let mut responses = openai_responses();
    let first = openai_body(&script()[0], 1);
    let cut_at = first.len() / 2;
    responses.insert(
        0,
        MockResponse::sse_pieces(vec![Piece::Bytes(first[..cut_at].to_vec()), Piece::Cut]),
    );
    let server = MockServer::start(responses);
    let output = openai_fix(&fixture, &server, &[]);
    assert_eq!(
        report(&output).outcome,
        Outcome::Success,
        "{}",
        stderr(&output)
    );
    assert_eq!(server.requests().len(), 9);
}

#[test]
fn a_stream_always_cut_fails_saying_so() {
    let fixture = Fixture::billing();
    let first = openai_body(&script()[0], 1);
    let cut = MockResponse::sse_pieces(vec![
        Piece::Bytes(first[..first.len() / 2].to_vec()),
        Piece::Cut,
    ]);
    let server = MockServer::start(vec![cut.clone(), cut.clone(), cut]);
    let output = openai_fix(&fixture, &server, &[]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let report = report(&output);
    assert!(
        report.reason.contains("ended") || report.reason.contains("cut"),
        "{}",
        report.reason
    );
}

#[test]
fn an_idle_stream_times_out_and_is_retried() {
    let fixture = Fixture::billing();
    let mut responses = openai_responses();
    let first = openai_body(&script()[0], 1);
    responses.insert(
        0,
        MockResponse::sse_pieces(vec![Piece::Bytes(first[..40].to_vec()), Piece::Stall]),
    );
    let server = MockServer::start(responses);
    let output = openai_fix(&fixture, &server, &["model_service.idle_timeout_ms=400"]);
    assert_eq!(
        report(&output).outcome,
        Outcome::Success,
        "{}",
        stderr(&output)
    );
    assert_eq!(server.requests().len(), 9);
}

#[test]
fn malformed_tool_call_json_becomes_a_note_and_the_run_goes_on() {
    let fixture = Fixture::billing();
    let broken = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_bad\",\"type\":\"function\",\"function\":{\"name\":\"search_code\",\"arguments\":\"{\\\"query\\\": \\\"gst\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    let mut responses = vec![MockResponse::sse(broken)];
    responses.extend(openai_responses());
    let server = MockServer::start(responses);
    let output = openai_fix(&fixture, &server, &[]);
    let report = report(&output);
    assert_eq!(report.outcome, Outcome::Success, "{}", stderr(&output));
    let second = server.requests()[1].json();
    let answer = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_bad")
        .unwrap_or_else(|| panic!("no answer to the broken call: {second}"));
    let text = answer["content"].as_str().unwrap();
    assert!(
        text.contains("could not be used") && text.contains("not valid JSON"),
        "{text}"
    );
    let events = journal_events(&report);
    assert!(!events.is_empty());
}

#[test]
fn a_missing_key_is_bad_input_naming_the_variable() {
    let fixture = Fixture::billing();
    let output = run_fix(&fixture, "openai:gpt-4.1", &[], None);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("OPENAI_API_KEY"),
        "{}",
        stderr(&output)
    );
    let named = run_fix(
        &fixture,
        "anthropic:claude-sonnet-4-5",
        &["providers.anthropic.api_key_env=TEAM_CLAUDE_KEY".to_string()],
        None,
    );
    assert_eq!(named.status.code(), Some(2));
    assert!(
        stderr(&named).contains("TEAM_CLAUDE_KEY"),
        "{}",
        stderr(&named)
    );
}
