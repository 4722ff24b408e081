//! The embedded model for real: `plumb fix --model local:0.5b` on BILL-412, with the `plumb-llm`
//! runner and the 0.5B GGUF file (`plumb models fetch 0.5b`; `.ci/run`'s set-up fetches it). The
//! assertions are on the mechanics — an outcome that is success or a clean failure, within the
//! round limit, a journal, one well-formed tool call per reply, the prompt cache reused (and the
//! system turn's state kept on disk), the repository untouched — not on the model's luck.

use plumb_protocol::{Event, Outcome};

use super::common::{Fixture, journal_events, plumb_command, report, stderr};

const ROUNDS: u32 = 4;
/// Every tool the model is offered (the registry's and `done`).
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

/// Where plumb itself looks for the 0.5B model (`$PLUMB_MODELS_DIR`, else the XDG cache), so the
/// test reads the file the run will load.
fn model_file() -> std::path::PathBuf {
    let model = plumb_model::catalog::local_model(Some("0.5b")).unwrap();
    plumb_model::catalog::models_dir().join(model.file_name)
}

#[test]
fn local_small_model_runs_bill_412_to_a_clean_outcome() {
    let model = model_file();
    assert!(
        model.is_file(),
        "{} is missing: run `plumb models fetch 0.5b` (scripts/setup-test-deps.sh --tests does)",
        model.display()
    );
    let fixture = Fixture::billing();
    let before = plumb_test_support::tree_digest(fixture.repo_path());
    let repo = fixture.repo_path().display().to_string();
    let ticket = fixture.ticket().display().to_string();
    let rounds = ROUNDS.to_string();
    let output = plumb_command(fixture.home.path())
        .args([
            "fix",
            "--repo",
            &repo,
            "--ticket",
            &ticket,
            "--model",
            "local:0.5b",
            "--json",
            "--max-rounds",
            &rounds,
        ])
        .args(["-c", "local.max_reply_tokens=384"])
        .output()
        .unwrap();
    let code = output.status.code();
    assert!(
        matches!(code, Some(0) | Some(1)),
        "exit {code:?}: {}",
        stderr(&output)
    );
    let report = report(&output);
    assert!(
        matches!(
            report.outcome,
            Outcome::Success | Outcome::RoundLimit | Outcome::Stuck | Outcome::ModelStopped
        ),
        "{:?}: {}",
        report.outcome,
        report.reason
    );
    assert!(
        report.rounds >= 1 && report.rounds <= ROUNDS,
        "{} rounds",
        report.rounds
    );
    let events = journal_events(&report);
    let replies: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ModelReply { reply, .. } => Some(reply.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(replies.len(), report.rounds as usize);
    for reply in &replies {
        assert!(reply.usage.input_tokens > 0);
        if reply.content.ends_with(plumb_model::CUT_OFF_MARK) {
            // The reply limit cut it before the call was complete: no call, and the model is told.
            assert!(reply.tool_calls.is_empty(), "{reply:?}");
            continue;
        }
        // Otherwise the grammar makes every reply exactly one call of a known tool.
        assert_eq!(reply.tool_calls.len(), 1, "{reply:?}");
        assert!(
            TOOLS.contains(&reply.tool_calls[0].name.as_str()),
            "{reply:?}"
        );
        assert!(reply.tool_calls[0].arguments.is_object(), "{reply:?}");
    }
    let cut_notes = events
        .iter()
        .filter(|e| matches!(e, Event::Note { text, .. } if text.contains("cut off at the reply length limit")))
        .count();
    let cut_replies = replies
        .iter()
        .filter(|r| r.content.ends_with(plumb_model::CUT_OFF_MARK))
        .count();
    assert_eq!(
        cut_notes, cut_replies,
        "every cut reply is explained to the model"
    );
    if replies.len() > 1 {
        assert!(
            replies[1..].iter().all(|r| r.usage.cached_tokens > 0),
            "later rounds reuse the prompt prefix: {:?}",
            replies.iter().map(|r| r.usage).collect::<Vec<_>>()
        );
    }
    assert_eq!(report.usage.usd, 0.0);
    // The warmed system turn is kept beside the model for the next run to load.
    let states = model.with_file_name("prompt-states");
    let kept = std::fs::read_dir(&states).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|entry| entry.file_name().to_string_lossy().ends_with(".state"))
    });
    assert!(kept, "no prompt state in {}", states.display());
    assert_eq!(
        plumb_test_support::tree_digest(fixture.repo_path()),
        before,
        "the repository is exactly as it was"
    );
}
