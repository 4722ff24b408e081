//! `plumb fix`'s flags end to end (docs/contracts.md §7): `--ticket-text`, `--test-cmd`,
//! `--journal` and `--out` each reach where they say in a BILL-412 run, `--out` writes nothing when
//! there is no verified patch, and a value that cannot be used is bad input (exit 2) before any run
//! starts.

use plumb_protocol::{CheckStep, Event, Outcome, Role};
use plumb_test_support::{Script, billing_example};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::suite::common::{Fixture, journal_events, plumb, report, requests_of, stderr};

#[test]
fn ticket_text_test_cmd_journal_and_out_reach_where_they_say_in_a_bill_412_run() {
    let fixture = Fixture::billing();
    let ticket = std::fs::read_to_string(fixture.ticket()).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    // Folders that do not exist yet: plumb makes them.
    let journal = elsewhere.path().join("journals/bill-412.jsonl");
    let out = elsewhere.path().join("patches/bill-412.patch");
    let script = billing_example().join("bill-412.script.jsonl");
    let model = format!("script:{}", script.display());
    let repo = fixture.repo_path().display().to_string();
    let (journal_arg, out_arg) = (journal.display().to_string(), out.display().to_string());

    let output = plumb(
        fixture.home.path(),
        &[
            "fix",
            "--repo",
            &repo,
            "--ticket-text",
            &ticket,
            "--model",
            &model,
            "--json",
            "--sandbox",
            "none",
            "--test-cmd",
            "python3 -m pytest -q -k 'not refund'",
            "--journal",
            &journal_arg,
            "--out",
            &out_arg,
        ],
    );

    let report = report(&output);
    let events = journal_events(&report);
    let meta = events.iter().find_map(|event| match event {
        Event::RunStarted { meta } => Some((meta.ticket.clone(), meta.test_command.clone())),
        _ => None,
    });
    let first_request_has_ticket = requests_of(&events).first().and_then(|request| {
        request
            .messages
            .iter()
            .find(|message| message.role == Role::User)
            .map(|message| message.content.contains(ticket.trim()))
    });
    let full_suite = report
        .checks
        .iter()
        .find(|check| check.step == CheckStep::FullSuite)
        .map(|check| check.evidence.clone());
    let actual = (
        output.status.code(),
        report.outcome,
        meta,
        first_request_has_ticket,
        full_suite,
        report.journal.clone(),
        std::path::Path::new(&report.workspace)
            .join("journal.jsonl")
            .exists(),
        std::fs::read_to_string(&out).ok(),
    );
    let expected = (
        Some(0),
        Outcome::Success,
        Some((
            ticket,
            ["python3", "-m", "pytest", "-q", "-k", "not refund"]
                .map(String::from)
                .to_vec(),
        )),
        Some(true),
        Some(
            "33 passed, 8 deselected (baseline: 32 passed, 8 deselected); every test that passed at baseline still passes"
                .to_string(),
        ),
        journal_arg,
        false,
        Some(report.patch.clone()),
    );
    assert_eq!(actual, expected, "stderr: {}", stderr(&output));
    assert!(report.patch.contains("+    tax = compute_gst(net, rate)"));
}

#[test]
fn without_a_verified_patch_out_writes_no_file() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("give-up.jsonl");
    Script::new()
        .tool("done", json!({"summary": "nothing to do"}))
        .write(&script);
    let out = fixture.home.path().join("fix.patch");

    let output = fixture.fix_with_script(&script, &["--out", &out.display().to_string()]);

    let actual = (output.status.code(), report(&output).patch, out.exists());
    assert_eq!(
        actual,
        (Some(1), String::new(), false),
        "stderr: {}",
        stderr(&output)
    );
}

#[test]
fn flag_values_that_cannot_be_used_are_bad_input_before_the_run() {
    let fixture = Fixture::billing();
    let repo = fixture.repo_path().display().to_string();
    let ticket = fixture.ticket().display().to_string();
    let folder = fixture.home.path().display().to_string();
    let under_a_file = format!("{ticket}/fix.patch");
    let script = fixture.script_path("unused.jsonl");
    Script::new()
        .tool("done", json!({"summary": "never run"}))
        .write(&script);
    let model = format!("script:{}", script.display());
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["--ticket", &ticket, "--test-cmd", "python3 -m pytest 'tests"],
            "--test-cmd: the test command `python3 -m pytest 'tests` cannot be split into words (missing closing quote)".to_string(),
        ),
        (
            vec!["--ticket", &ticket, "--test-cmd", "  "],
            "--test-cmd: the test command is empty".to_string(),
        ),
        (
            vec!["--ticket-text", " \n "],
            "the ticket is empty; say what should change in --ticket FILE or --ticket-text TEXT"
                .to_string(),
        ),
        (
            vec!["--ticket", &ticket, "--ticket-text", "GST on the discounted price"],
            "'--ticket <FILE>' cannot be used with '--ticket-text <TEXT>'".to_string(),
        ),
        (
            vec!["--ticket", &ticket, "--out", &folder],
            format!("--out {folder} is a folder; pass the path of a file"),
        ),
        (
            vec!["--ticket", &ticket, "--out", &under_a_file],
            format!("--out {under_a_file} cannot be written: {ticket} is a file, not a folder"),
        ),
        (
            vec!["--ticket", &ticket, "--journal", &folder],
            format!("--journal {folder} is a folder; pass the path of a file"),
        ),
        (
            vec!["--ticket", &ticket, "--journal", &under_a_file],
            format!("--journal {under_a_file} cannot be written: {ticket} is a file, not a folder"),
        ),
    ];
    let runs = fixture.home.path().join("runs");
    let actual: Vec<(Option<i32>, bool, bool)> = cases
        .iter()
        .map(|(flags, needle)| {
            let mut args = vec![
                "fix",
                "--repo",
                &repo,
                "--model",
                &model,
                "--sandbox",
                "none",
            ];
            args.extend_from_slice(flags);
            let output = plumb(fixture.home.path(), &args);
            let err = stderr(&output);
            let no_run = std::fs::read_dir(&runs).map_or(true, |mut dir| dir.next().is_none());
            (output.status.code(), err.contains(needle.as_str()), no_run)
        })
        .collect();
    let expected = vec![(Some(2), true, true); cases.len()];
    assert_eq!(actual, expected);
}
