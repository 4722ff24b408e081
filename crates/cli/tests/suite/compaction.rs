//! Compaction end to end: a BILL-412 run made long by reads of the other modules, with a history
//! budget it passes. First with the scripted model, which has no summary to give (plumb's own
//! list of calls stands in); then the same run through the mock OpenAI server, which answers the
//! summary requests at the rounds the first run compacted. Both reach the patch of the same run
//! without compaction, and `plumb replay` of the second reaches it again, the model's summaries
//! given back at the same points.

use plumb_model::{ScriptTurn, parse_script};
use plumb_protocol::{Event, Outcome, SUMMARY_TOOL, ToolCall};
use plumb_test_support::mock_http::{MockResponse, MockServer, awkward_pieces};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::{Fixture, journal_events, plumb, report, requests_of, stderr};
use super::providers::{openai_body, openai_fix};

/// The history budget of these runs: the smallest plumb takes, passed by a few whole reads.
const BUDGET: &str = "limits.history_tokens=1000";

/// BILL-412's script with whole-file reads of the other modules after its second round, then
/// `billing/models.py` read again: its first read was in round 5, which the first compaction
/// takes out, so it must run again (a read still shown whole would be refused as repeated).
fn long_script() -> Vec<ScriptTurn> {
    let path = plumb_test_support::billing_example().join("bill-412.script.jsonl");
    let mut turns = parse_script(&std::fs::read_to_string(path).unwrap()).unwrap();
    let reads = [
        "billing/tax.py",
        "billing/discounts.py",
        "billing/models.py",
        "billing/refunds.py",
        "tests/test_invoice_totals.py",
        "tests/test_tax.py",
        "tests/test_discounts.py",
        "tests/test_refunds.py",
    ];
    let extra = reads.iter().enumerate().map(|(n, path)| ScriptTurn {
        content: format!("Reading {path} for how it treats discounts."),
        tool_calls: vec![ToolCall {
            id: format!("read_{n}"),
            name: "read_file".into(),
            arguments: json!({ "path": path }),
        }],
        alternatives: Vec::new(),
    });
    let again = ScriptTurn {
        content: "Reading billing/models.py again.".into(),
        tool_calls: vec![ToolCall {
            id: "read_again".into(),
            name: "read_file".into(),
            arguments: json!({ "path": "billing/models.py" }),
        }],
        alternatives: Vec::new(),
    };
    turns.splice(2..2, extra.chain([again]));
    turns
}

fn write_script(fixture: &Fixture, turns: &[ScriptTurn]) -> std::path::PathBuf {
    let path = fixture.script_path("long.jsonl");
    let lines: Vec<String> = turns
        .iter()
        .map(|turn| {
            json!({
                "content": turn.content,
                "tool_calls": turn.tool_calls.iter().map(|call| json!({"name": call.name, "arguments": call.arguments})).collect::<Vec<_>>(),
            })
            .to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

fn summary_turn(n: usize) -> ScriptTurn {
    ScriptTurn {
        content: String::new(),
        tool_calls: vec![ToolCall {
            id: format!("summary_{n}"),
            name: SUMMARY_TOOL.into(),
            arguments: json!({"summary": format!("Summary {n}: GST is computed before the discount in billing/invoice_totals.py line_totals; tests/test_gst.py reproduces it.")}),
        }],
        alternatives: Vec::new(),
    }
}

/// The rounds a journal compacted at, and whether by the model.
fn compactions(events: &[Event]) -> Vec<(u32, bool)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Compacted {
                round, by_model, ..
            } => Some((*round, *by_model)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_long_run_compacts_its_history_and_still_reaches_the_same_patch() {
    let fixture = Fixture::billing();
    let turns = long_script();
    let script = write_script(&fixture, &turns);
    let no_review = ["-c", "review.enabled=false"];

    // Without a budget: the patch to reach.
    let plain = report(&fixture.fix_with_script(&script, &no_review));
    assert_eq!(plain.outcome, Outcome::Success);
    assert!(compactions(&journal_events(&plain)).is_empty());

    // The script has no summary to give: plumb's own stands in, with a warning.
    let scripted_output =
        fixture.fix_with_script(&script, &["-c", "review.enabled=false", "-c", BUDGET]);
    let scripted = report(&scripted_output);
    assert_eq!(
        scripted.outcome,
        Outcome::Success,
        "{}",
        stderr(&scripted_output)
    );
    assert_eq!(scripted.patch_sha256, plain.patch_sha256);
    let events = journal_events(&scripted);
    let at = compactions(&events);
    assert!(!at.is_empty(), "the run never compacted");
    assert!(at.iter().all(|(_, by_model)| !by_model), "{at:?}");
    assert!(stderr(&scripted_output).contains("history compacted"));
    assert_eq!(
        at[0].0, 11,
        "the first compaction comes before the read again"
    );
    // Positions in the history count from the start of the run: the read again is not taken
    // for a repeat of one the summary replaced.
    let read_again = events
        .iter()
        .find_map(|event| match event {
            Event::ToolFinished {
                round: 11, output, ..
            } => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        read_again.starts_with("billing/models.py: lines 1–95 of 95"),
        "{read_again}"
    );
    // Every request of the run after the first compaction is within the budget's reach: the
    // history never holds the older rounds' whole results again.
    let requests = requests_of(&events);
    assert!(
        requests.len() > turns.len(),
        "the summary requests are journaled"
    );

    // The mock server answers each summary request, at the rounds the scripted run compacted.
    let mut served: Vec<ScriptTurn> = Vec::new();
    for (index, turn) in turns.iter().enumerate() {
        let round = index as u32 + 1;
        for (n, _) in at.iter().filter(|(at, _)| *at == round).enumerate() {
            served.push(summary_turn(index * 10 + n));
        }
        served.push(turn.clone());
    }
    let responses = served
        .iter()
        .enumerate()
        .map(|(n, turn)| MockResponse::sse_pieces(awkward_pieces(&openai_body(turn, n + 1), 7)))
        .collect();
    let server = MockServer::start(responses);
    let output = openai_fix(&fixture, &server, &[BUDGET]);
    let by_openai = report(&output);
    assert_eq!(by_openai.outcome, Outcome::Success, "{}", stderr(&output));
    assert_eq!(by_openai.patch_sha256, plain.patch_sha256);
    let events = journal_events(&by_openai);
    let model_at = compactions(&events);
    assert_eq!(
        model_at,
        at.iter()
            .map(|(round, _)| (*round, true))
            .collect::<Vec<_>>()
    );
    assert_eq!(server.remaining(), 0, "every response was asked for");

    // What the server was sent: each summary request offers the summary tool alone, and the
    // request after it holds the summary and not the older rounds it replaced.
    let sent: Vec<serde_json::Value> = server.requests().iter().map(|r| r.json()).collect();
    let tool_names = |body: &serde_json::Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let summary_requests: Vec<usize> = (0..sent.len())
        .filter(|&n| tool_names(&sent[n]) == [SUMMARY_TOOL])
        .collect();
    assert_eq!(summary_requests.len(), at.len());
    for &n in &summary_requests {
        let asked = sent[n]["messages"][1]["content"].as_str().unwrap();
        assert!(
            asked.contains("BILL-412"),
            "the ticket is in the request: {asked}"
        );
        let next = sent[n + 1].to_string();
        assert!(next.contains("Summary of the first"), "{next}");
        assert!(next.contains(&format!("Summary {}", served_index(&served, n))));
        assert_eq!(tool_names(&sent[n + 1]).len(), 9);
    }
    let first_read = "Reading billing/tax.py for how it treats discounts.";
    assert!(
        sent[summary_requests[0]]["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains(first_read)
    );
    assert!(
        !sent[summary_requests[0] + 1]
            .to_string()
            .contains(first_read)
    );

    // The replay gives the model's summaries back where they were asked for.
    let replayed_output = plumb(
        fixture.home.path(),
        &["replay", &by_openai.journal, "--json"],
    );
    let replayed = report(&replayed_output);
    assert_eq!(
        (
            replayed.outcome,
            replayed.patch_sha256 == plain.patch_sha256
        ),
        (Outcome::Success, true),
        "{}",
        stderr(&replayed_output)
    );
    assert_eq!(compactions(&journal_events(&replayed)), model_at);
}

/// The number in the summary the `n`th request was answered with.
fn served_index(served: &[ScriptTurn], n: usize) -> String {
    let summary = served[n].tool_calls[0].arguments["summary"]
        .as_str()
        .unwrap();
    summary
        .trim_start_matches("Summary ")
        .split(':')
        .next()
        .unwrap()
        .to_string()
}
