use plumb_protocol::{Role, ToolCall};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn reply(id: &str, name: &str, arguments: Value) -> Turn {
    Turn::Assistant {
        content: format!("about {id}"),
        tool_calls: vec![ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        }],
    }
}

fn result(id: &str, lines: usize) -> Turn {
    Turn::ToolResult {
        call_id: id.into(),
        text: (0..lines)
            .map(|n| format!("{id} line {n} of output\n"))
            .collect(),
        one_line: format!("{id}: {lines} lines"),
        failed: false,
    }
}

/// `rounds` rounds, each a search and its result of `lines` lines.
fn rounds(rounds: usize, lines: usize) -> Vec<Turn> {
    (1..=rounds)
        .flat_map(|n| {
            let id = format!("c{n}");
            [
                reply(&id, "search_code", json!({"query": format!("q{n}")})),
                result(&id, lines),
            ]
        })
        .collect()
}

#[test]
fn the_budget_is_what_the_head_leaves_of_the_smaller_bound_and_never_tiny() {
    let budget =
        |window, share, tokens, head| HistoryLimits::new(window, share, tokens).budget(head);
    assert_eq!(budget(Some(16_384), 0.5, 0, 3_000), Some(5_192));
    assert_eq!(budget(Some(16_384), 0.5, 2_000, 3_000), Some(2_000));
    assert_eq!(
        budget(None, 0.5, 3_000, 6_000),
        Some(3_000),
        "the head does not count"
    );
    assert_eq!(
        budget(None, 0.5, 0, 3_000),
        None,
        "unknown window, no tokens"
    );
    assert_eq!(budget(Some(16_384), 0.0, 0, 3_000), None);
    assert_eq!(
        budget(Some(16_384), 0.5, 0, 9_000),
        Some(MIN_BUDGET),
        "a head past the share"
    );
    assert_eq!(
        budget(Some(1_000_000), 2.0, 0, 0),
        Some(1_000_000),
        "a share past 1 is 1"
    );
}

#[test]
fn the_kept_rounds_start_at_the_reply_of_the_oldest_whole_result() {
    let turns = rounds(8, 3);
    // Results 4..8 are kept whole: the reply of result 4 is turn 6.
    assert_eq!(kept_from(&turns, 5), 6);
    assert_eq!(kept_from(&turns, 8), 0);
    assert_eq!(kept_from(&turns, 20), 0);
    assert_eq!(kept_from(&turns, 1), 14);
}

#[test]
fn a_summary_is_asked_for_only_over_budget_and_when_the_older_rounds_are_worth_it() {
    let turns = rounds(30, 20);
    let total = history_tokens(&turns, 5);
    assert_eq!(to_summarise(&turns, 5, total), None, "at the budget");
    assert_eq!(
        to_summarise(&turns, 5, total - 1),
        Some(kept_from(&turns, 5))
    );
    // Five rounds: nothing older than the kept ones.
    let short = rounds(5, 200);
    assert_eq!(to_summarise(&short, 5, 1_000), None);
    // Over budget with five big whole results and two small older rounds: not worth a request.
    let mut few_old = rounds(2, 1);
    few_old.extend(rounds(5, 200).into_iter().map(|turn| match turn {
        Turn::Assistant {
            content,
            tool_calls,
        } => Turn::Assistant {
            content: format!("later {content}"),
            tool_calls,
        },
        other => other,
    }));
    assert_eq!(to_summarise(&few_old, 5, 1_000), None);
}

#[test]
fn whole_results_shrink_early_to_fit_and_at_least_one_stays() {
    let turns = rounds(6, 60);
    let whole = history_tokens(&turns, 5);
    assert_eq!(keep_within(&turns, 5, whole), 5);
    assert_eq!(keep_within(&turns, 5, whole - 1), 4);
    assert_eq!(
        keep_within(&turns, 5, 1),
        1,
        "the newest result stays whole"
    );
    assert!(history_tokens(&turns, 4) < whole);
}

#[test]
fn the_request_narrates_the_older_rounds_as_old_and_offers_one_tool() {
    let mut older = vec![Turn::Summary(
        "Summary of the first 2 rounds: found f".into(),
    )];
    older.extend(rounds(2, 30));
    older.push(Turn::Note("The tests failed. Here is all of it.".into()));
    let request = summary_request("BILL-412: tax on discounts", &older).unwrap();
    assert_eq!(request.tool.name, SUMMARY_TOOL);
    assert_eq!(request.messages[0].role, Role::System);
    let text = &request.messages[1].content;
    assert!(
        text.starts_with("Ticket:\nBILL-412: tax on discounts\n"),
        "{text}"
    );
    for expected in [
        "plumb said: Summary of the first 2 rounds: found f",
        "The agent said: about c1\nIt called search_code {\"query\":\"q1\"}",
        "Result: [older result, shortened] c1: 30 lines",
        "plumb said: The tests failed. Here is all of it.",
    ] {
        assert!(text.contains(expected), "{expected:?} not in {text}");
    }
    assert!(
        !text.contains("line 5 of output"),
        "old results are one line"
    );
}

#[test]
fn a_summary_is_read_from_its_call_and_a_bad_reply_says_why() {
    let call = |name: &str, arguments: Value| ModelReply {
        tool_calls: vec![ToolCall {
            id: "s".into(),
            name: name.into(),
            arguments,
        }],
        ..ModelReply::default()
    };
    assert_eq!(
        read_summary(&call(SUMMARY_TOOL, json!({"summary": "  found f\n"}))),
        Ok("found f".to_string())
    );
    let long = "x".repeat(SUMMARY_MAX_CHARS + 10);
    let cut = read_summary(&call(SUMMARY_TOOL, json!({ "summary": long }))).unwrap();
    assert_eq!(cut.chars().count(), SUMMARY_MAX_CHARS + 1);
    assert!(
        read_summary(&ModelReply::default())
            .unwrap_err()
            .contains("did not call")
    );
    assert!(
        read_summary(&call(SUMMARY_TOOL, json!({"summary": " "})))
            .unwrap_err()
            .contains("no summary")
    );
    assert!(read_summary(&call("done", json!({"summary": "x"}))).is_err());
}

#[test]
fn the_fallback_lists_the_calls_and_keeps_an_earlier_summary() {
    let mut older = vec![summary_turn("earlier: read m.py", 3).unwrap()];
    older.extend(rounds(2, 3));
    assert_eq!(
        fallback_summary(&older),
        "earlier: read m.py\n- called search_code query=q1\n- called search_code query=q2"
    );
}

#[test]
fn the_summary_turn_is_shown_whole_where_an_old_note_shrinks() {
    let summary = summary_turn("Found it. The bug is in f.", 12).unwrap();
    let mut turns = vec![summary, Turn::Note("Old note. More words.".into())];
    turns.extend(rounds(3, 2));
    let messages = crate::prompt::build_messages(&[], &turns, 1);
    assert_eq!(
        messages[0].content,
        "[plumb] Summary of the first 12 rounds of this run, taken out of the prompt to keep it short (what they changed is still changed; read a file again for its text now):\nFound it. The bug is in f."
    );
    assert_eq!(
        messages[1].content,
        "[plumb] Old note. [older note, shortened]"
    );
    assert_eq!(rounds_in(&turns), 3);
}
