//! Runs that must not end with a patch: a script that never fixes the bug, bad tool calls, a stuck
//! model. Each ends without a crash, rolled back, with the error notes the model saw.

use plumb_protocol::{Event, Message, Outcome, Role};
use plumb_test_support::{Script, git, tree_digest};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::{
    Fixture, journal_events, plumb_command, report, requests_of, shadow_git, stderr, work_dir,
};

const NEW_TEST: &str = "from decimal import Decimal\n\nfrom billing.invoice_totals import compute_invoice_totals\nfrom billing.models import Invoice, LineItem\n\n\ndef test_gst_after_discount():\n    item = LineItem(sku=\"KB\", description=\"kb\", unit_price=Decimal(\"1000.00\"), quantity=1, category=\"standard\", discount=Decimal(\"100.00\"))\n    totals = compute_invoice_totals(Invoice(number=\"I\", customer_id=\"C\", items=[item]))\n    assert totals.tax == Decimal(\"162.00\")\n";

#[test]
fn a_script_that_never_fixes_the_bug_exits_1_rolled_back_with_the_attempt_kept() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("never.jsonl");
    Script::new()
        .tool(
            "create_file",
            json!({"path": "tests/test_gst.py", "content": NEW_TEST}),
        )
        .tool("run_tests", json!({"tests": ["tests/test_gst.py"]}))
        .tool("done", json!({"summary": "I think it is fixed."}))
        .write(&script);
    let original = tree_digest(fixture.repo_path());

    let output = fixture.fix_with_script(&script, &[]);

    let report = report(&output);
    let mut workspace_now = tree_digest(&work_dir(&report));
    let mut original_files = original.clone();
    // The copy leaves out history and what .plumbignore names (the script's answer key).
    original_files.retain(|path, _| !path.starts_with(".git/") && path != "bill-412.script.jsonl");
    workspace_now.retain(|path, _| !path.contains("__pycache__"));
    let kept = report.attempt_ref.clone().unwrap();
    let kept_files = git(
        &shadow_git(&report),
        &["show", "--stat", "--format=", &kept],
    );
    let actual = (
        output.status.code(),
        report.outcome,
        report.patch.is_empty(),
        workspace_now == original_files,
        kept_files.contains("tests/test_gst.py"),
        tree_digest(fixture.repo_path()) == original,
    );
    assert_eq!(
        actual,
        (Some(1), Outcome::ModelStopped, true, true, true, true),
        "stderr: {}",
        stderr(&output)
    );
    // `done` was answered by the harness's own test run, which failed, and said so to the model.
    let done_note = tool_results(&journal_events(&report))
        .into_iter()
        .find(|(name, _, _)| name == "done")
        .unwrap();
    assert!(!done_note.1, "done must not count as ok when checks fail");
    assert!(done_note.2.contains("the checks failed"), "{}", done_note.2);
}

/// (tool name, ok, full output) of every finished tool call, in order.
fn tool_results(events: &[Event]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished {
                name, ok, output, ..
            } => Some((name.clone(), *ok, output.clone())),
            _ => None,
        })
        .collect()
}

/// The tool messages of the request that follows each round, keyed by round.
fn last_tool_message(events: &[Event], round: u32) -> Option<String> {
    requests_of(events)
        .into_iter()
        .find(|request| request.round == round)?
        .messages
        .iter()
        .rev()
        .find(|m: &&Message| m.role == Role::Tool)
        .map(|m| m.content.clone())
}

#[test]
fn bad_tool_calls_become_error_notes_in_the_next_request() {
    let fixture = Fixture::billing();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("outside.txt"), "keep me\n").unwrap();
    // A link inside the repository that points out of it.
    std::os::unix::fs::symlink(outside.path(), fixture.repo_path().join("escape")).unwrap();
    let outside_before = tree_digest(outside.path());
    let script = fixture.script_path("bad.jsonl");
    Script::new()
        .tool("shell", json!({"cmd": "cat /etc/passwd"}))
        .tool("read_file", json!({"file": "billing/tax.py"}))
        .tool("edit_file", json!({"path": "billing/invoice_totals.py", "old_text": "tax", "new_text": "gst"}))
        .tool("edit_file", json!({"path": "billing/invoice_totals.py", "old_text": "    tax = compute_gst(gross, rate)\n", "new_text": "    tax = compute_gst((gross, rate)\n"}))
        .tool("edit_file", json!({"path": "../outside.txt", "old_text": "keep", "new_text": "lost"}))
        .tool("edit_file", json!({"path": "escape/outside.txt", "old_text": "keep", "new_text": "lost"}))
        .tool("read_file", json!({"path": "escape/outside.txt"}))
        .write(&script);

    let output = fixture.fix_with_script(&script, &[]);

    let report = report(&output);
    let events = journal_events(&report);
    let notes: Vec<String> = (2..=8)
        .map(|round| last_tool_message(&events, round).unwrap_or_default())
        .collect();
    let expected_starts = [
        "Error: there is no tool called shell. The tools are:",
        "Error: bad arguments for read_file: unknown field `file`",
        "Error: old_text found ",
        "Error: edit NOT applied. Line ",
        "Error: you can only edit files inside the project folder.",
        "Error: you can only edit files inside the project folder.",
        "Error: you can only read files inside the project folder.",
    ];
    let mismatched: Vec<(String, &str)> = notes
        .iter()
        .zip(expected_starts)
        .filter(|(note, start)| !note.starts_with(start))
        .map(|(note, start)| (note.clone(), start))
        .collect();
    assert_eq!(mismatched, vec![], "stderr: {}", stderr(&output));
    let actual = (
        output.status.code(),
        report.outcome,
        tree_digest(outside.path()) == outside_before,
    );
    assert_eq!(actual, (Some(1), Outcome::ModelStopped, true));
}

#[test]
fn three_identical_failed_edits_stop_the_run_as_stuck() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("stuck.jsonl");
    let same_edit =
        json!({"path": "billing/invoice_totals.py", "old_text": "no such text", "new_text": "x"});
    Script::new()
        .tool("edit_file", same_edit.clone())
        .tool("edit_file", same_edit.clone())
        .tool("edit_file", same_edit.clone())
        .tool("edit_file", same_edit)
        .write(&script);

    let output = fixture.fix_with_script(&script, &[]);

    let report = report(&output);
    assert_eq!(
        (output.status.code(), report.outcome, report.rounds),
        (Some(1), Outcome::Stuck, 3),
        "stderr: {}",
        stderr(&output)
    );
}

#[test]
fn the_round_limit_ends_the_run() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("wander.jsonl");
    let mut builder = Script::new();
    for n in 1..=5 {
        builder = builder.tool(
            "read_file",
            json!({"path": "billing/tax.py", "start_line": n}),
        );
    }
    builder.write(&script);

    let output = fixture.fix_with_script(&script, &["--max-rounds", "3"]);

    let report = report(&output);
    assert_eq!(
        (output.status.code(), report.outcome, report.rounds),
        (Some(1), Outcome::RoundLimit, 3)
    );
}

#[test]
fn ctrl_c_cancels_cleanly_rolled_back_with_a_report() {
    let fixture = Fixture::billing();
    let script = fixture.slow_script();
    let model = format!("script:{}", script.display());
    let repo = fixture.repo_path().display().to_string();
    let ticket = fixture.ticket().display().to_string();
    let child = plumb_command(fixture.home.path())
        .args([
            "fix",
            "--repo",
            &repo,
            "--ticket",
            &ticket,
            "--model",
            &model,
            "--json",
            "--sandbox",
            "none",
        ])
        .args(["-c", "run.allowed_commands=[[\"sleep\"]]"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the agent's `sleep` is running, then press Ctrl-C (SIGINT to plumb alone).
    let started = std::time::Instant::now();
    while !sleep_is_running(fixture.home.path()) {
        assert!(
            started.elapsed().as_secs() < 60,
            "the scripted `sleep` never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());

    let output = child.wait_with_output().unwrap();

    let report = report(&output);
    let leftover = work_dir(&report).join("notes.txt").exists();
    let actual = (
        output.status.code(),
        report.outcome,
        leftover,
        report.attempt_ref.is_some(),
        report.reason.ends_with("(with Ctrl-C)"),
    );
    assert_eq!(
        actual,
        (Some(1), Outcome::Cancelled, false, true, true),
        "stderr: {}",
        stderr(&output)
    );
}

/// True when the `sleep 30` the scripted model asked for runs (in a workspace under `home`).
fn sleep_is_running(home: &std::path::Path) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| {
            std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| c == b"sleep\x0030\x00")
        })
        .any(|entry| {
            std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(home))
        })
}

#[test]
fn the_journal_starts_with_the_run_metadata_and_numbers_its_lines() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("short.jsonl");
    Script::new()
        .tool("search_code", json!({"query": "gst"}))
        .write(&script);

    let report = report(&fixture.fix_with_script(&script, &[]));

    let text = std::fs::read_to_string(&report.journal).unwrap();
    let lines: Vec<plumb_protocol::JournalLine> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seqs: Vec<u64> = lines.iter().map(|l| l.seq).collect();
    let first_is_meta = matches!(&lines[0].event, Event::RunStarted { meta } if meta.run_id == report.run_id && !meta.base_commit.is_empty());
    let last_is_end = matches!(&lines[lines.len() - 1].event, Event::RunFinished { .. });
    let all_current_same_run = lines
        .iter()
        .all(|l| l.v == plumb_protocol::JOURNAL_VERSION && l.run == report.run_id && l.ts > 0);
    assert_eq!(
        (first_is_meta, last_is_end, all_current_same_run, seqs),
        (
            true,
            true,
            true,
            (0..lines.len() as u64).collect::<Vec<_>>()
        )
    );
}
