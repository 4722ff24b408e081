//! The three budgets of a run (docs/contracts.md §4). Tokens and estimated USD are counted from
//! what the provider reports, so those two run against a mock OpenAI server that sends 2,000 tokens
//! in and 100 out with every reply; the wall clock runs out during a slow test. Each ends the run
//! as `budget_exceeded`: exit 1, no patch, the workspace rolled back and the attempt kept.

use plumb_protocol::Outcome;
use plumb_test_support::Script;
use plumb_test_support::mock_http::{MockResponse, MockServer};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::rolled_back_keeping;
use crate::suite::common::{Fixture, plumb_command, report, stderr};

/// One streamed chat-completions reply calling `tool` with `args`, reporting 2,000 prompt tokens
/// and 100 completion tokens.
fn openai_turn(tool: &str, args: &Value) -> MockResponse {
    let chunk = |delta: Value, finish: Value| {
        let data = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {data}\n\n")
    };
    let mut body = chunk(json!({"role": "assistant", "content": ""}), Value::Null);
    body.push_str(&chunk(
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": tool, "arguments": args.to_string()}}]}),
        Value::Null,
    ));
    body.push_str(&chunk(json!({}), json!("tool_calls")));
    let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 2000, "completion_tokens": 100}});
    body.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    MockResponse::sse(body)
}

/// Six replies: a new file (so there is something to roll back), then reads of new windows.
fn six_turns() -> Vec<MockResponse> {
    let mut turns = vec![openai_turn(
        "create_file",
        &json!({"path": "notes.txt", "content": "half done\n"}),
    )];
    turns.extend((1..=5).map(|line| {
        openai_turn(
            "read_file",
            &json!({"path": "billing/tax.py", "start_line": line}),
        )
    }));
    turns
}

/// `plumb fix --model openai:gpt-4.1` against `server`, with `settings` as `-c` overrides.
fn hosted_fix(fixture: &Fixture, server: &MockServer, settings: &[&str]) -> std::process::Output {
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
        "openai:gpt-4.1",
        "--json",
        "--sandbox",
        "none",
        "-c",
        &format!("providers.openai.base_url={}/v1", server.url()),
        // The budgets are judged on the fixer's requests; the review step has its own tests.
        "-c",
        "review.enabled=false",
    ]);
    for setting in settings {
        command.args(["-c", setting]);
    }
    command
        .env("OPENAI_API_KEY", "sk-plumb-test-budget")
        .output()
        .unwrap()
}

#[test]
fn the_token_budget_ends_the_run_before_the_request_that_would_pass_it() {
    let fixture = Fixture::billing();
    let server = MockServer::start(six_turns());

    let output = hosted_fix(&fixture, &server, &["limits.max_tokens=5000"]);

    let report = report(&output);
    let actual = (
        output.status.code(),
        report.outcome,
        report.reason.clone(),
        report.rounds,
        server.requests().len(),
        (report.usage.input_tokens, report.usage.output_tokens),
        rolled_back_keeping(&report, "notes.txt"),
    );
    // 2,100 tokens a round: 6,300 after three rounds, past 5,000, so no fourth request.
    let expected = (
        Some(1),
        Outcome::BudgetExceeded,
        "the token budget (5000) ran out".to_string(),
        3,
        3,
        (6000, 300),
        true,
    );
    assert_eq!(actual, expected, "stderr: {}", stderr(&output));
}

#[test]
fn the_cost_budget_at_the_users_price_stops_before_a_request_it_cannot_pay_for() {
    let fixture = Fixture::billing();
    // The user's own settings: a price of $1,000 per million tokens makes each reply $2.10.
    let settings = fixture.home.path().join("config/plumb/plumb.toml");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        "[limits]\nmax_usd = 5.0\n\n[prices.\"openai:gpt-4.1\"]\ninput = 1000.0\noutput = 1000.0\n",
    )
    .unwrap();
    let server = MockServer::start(six_turns());

    let output = hosted_fix(&fixture, &server, &[]);

    let report = report(&output);
    let actual = (
        output.status.code(),
        report.outcome,
        report.reason.clone(),
        report.rounds,
        server.requests().len(),
        format!("{:.2}", report.usage.usd),
        rolled_back_keeping(&report, "notes.txt"),
    );
    // $4.20 after two rounds, and a third like the last would pass $5.
    let expected = (
        Some(1),
        Outcome::BudgetExceeded,
        "the next request would pass the cost budget ($5.00): $4.2000 spent, and the last request alone cost $2.1000".to_string(),
        2,
        2,
        "4.20".to_string(),
        true,
    );
    assert_eq!(actual, expected, "stderr: {}", stderr(&output));
}

#[test]
fn the_wall_clock_budget_ends_the_run_after_a_slow_test() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("slow.jsonl");
    Script::new()
        .tool(
            "create_file",
            json!({"path": "tests/test_slow.py", "content": "import time\n\n\ndef test_slow():\n    time.sleep(20)\n"}),
        )
        .tool("run_tests", json!({"tests": ["tests/test_slow.py"]}))
        .tool("done", json!({"summary": "never reached"}))
        .write(&script);

    let output = fixture.fix_with_script(&script, &["-c", "limits.wall_clock_secs=15"]);

    let report = report(&output);
    let actual = (
        output.status.code(),
        report.outcome,
        report.reason.clone(),
        report.rounds,
        rolled_back_keeping(&report, "tests/test_slow.py"),
    );
    let expected = (
        Some(1),
        Outcome::BudgetExceeded,
        "the wall-clock budget (15 s) ran out".to_string(),
        2,
        true,
    );
    assert_eq!(actual, expected, "stderr: {}", stderr(&output));
}
