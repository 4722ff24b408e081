//! What reaches a person's screen: text plumb did not write — patch lines, a reviewer's notes, a
//! tool argument, a ticket's title, a repository's settings — can hold escape sequences that
//! erase a line and draw another, move the cursor up and redraw the checks, retitle the window
//! (OSC 0) or write the clipboard (OSC 52), and bidirectional controls that reorder text. Each
//! case runs plumb in a real pseudo-terminal, renders every byte with a VT emulator, and checks
//! what a person would see: every added line of the patch on the screen, the real flags, no title
//! or clipboard change, no sequence but plumb's colours (and a pager's own screen handling); with
//! stdout and stderr not terminals, no ESC byte at all, and the patch byte for byte where a
//! program reads it. The host side too: the repository is as it was whatever was shown.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use plumb_protocol::display::{for_screen, for_screen_line};
use plumb_protocol::{FinalReport, Outcome};
use plumb_test_support::{Script, billing_example, tree_digest};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::support::repo_with;
use super::terminal::{Seen, Terminal, added_lines, forbidden};
use crate::suite::common::{plumb, plumb_command, report, stderr};

/// A fix line that erases itself (`ESC[2K`, back to column 1 with `ESC[G`) and draws a harmless
/// comment where it was; then a comment that writes the clipboard and retitles the window.
const ERASED: &str =
    "    __import__(\"os\").system(\"true\")  # \u{1b}[2K\u{1b}[G+    # totals are rounded below\n";
const OSC_LINE: &str = "    # \u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}]0;all checks passed\u{7}ok\n";
/// Text concealed by SGR 8, and a hyperlink (OSC 8): what `less -R` passes through raw.
const CONCEALED: &str =
    "    # \u{1b}[8mhidden()\u{1b}[0m \u{1b}]8;;https://example.invalid\u{7}docs\u{1b}]8;;\u{7}\n";
/// A reviewer's note that climbs 14 rows, erases everything below and draws clean checks.
const REDRAW: &str = "fine\u{1b}[14A\u{1b}[J\nchecks:\n  passed   syntax     all files parse\n  passed   tamper     nothing to report\nreview by script: approve";

/// The bundled BILL-412 script with `extra` lines after the fix, then `done`.
fn fixer_with(extra: &str) -> Script {
    fixer_after(Script::new(), extra)
}

/// `first`, then the bundled BILL-412 script with `extra` lines after the fix, then `done`.
fn fixer_after(first: Script, extra: &str) -> Script {
    let text = std::fs::read_to_string(billing_example().join("bill-412.script.jsonl")).unwrap();
    let mut script = first;
    for (index, line) in text.lines().enumerate() {
        let turn: Value = serde_json::from_str(line).unwrap();
        let (name, mut args) = match turn.get("tool") {
            Some(tool) => (tool.as_str().unwrap().to_string(), turn["args"].clone()),
            None => {
                let call = &turn["tool_calls"][0];
                (
                    call["name"].as_str().unwrap().to_string(),
                    call["arguments"].clone(),
                )
            }
        };
        if index == 4 {
            let new_text = format!("{}{extra}", args["new_text"].as_str().unwrap());
            args["new_text"] = Value::String(new_text);
        }
        script = script.tool(&name, args);
    }
    script
}

/// A review that approves with `note` on the changed file.
fn reviewer_with(note: &str, home: &Path) -> String {
    let path = home.join("reviewer.jsonl");
    Script::new()
        .tool(
            "submit_review",
            json!({"verdict": "approve", "summary": "GST after the discount.", "notes": [
                {"file": "billing/invoice_totals.py", "line": 52, "note": note}
            ]}),
        )
        .write(&path);
    format!("review.model=script:{}", path.display())
}

/// `plumb fix` on `repo` with `script`, `extra` arguments and `pager`, ready to start in a
/// terminal.
fn fix_command(repo: &Path, home: &Path, script: &Script, extra: &[&str], pager: &str) -> Command {
    let path = home.join("fixer.jsonl");
    script.write(&path);
    let mut command = plumb_command(home);
    command
        .args(["fix", "--repo"])
        .arg(repo)
        .arg("--ticket")
        .arg(repo.join("BILL-412.md"))
        .arg("--model")
        .arg(format!("script:{}", path.display()))
        .args(extra)
        .env("PAGER", pager)
        .env_remove("NO_COLOR")
        .env_remove("LESS")
        .env_remove("LESSOPEN")
        .env_remove("LESSCLOSE");
    command
}

/// The one run folder's report.
fn only_report(home: &Path) -> FinalReport {
    let runs: Vec<_> = std::fs::read_dir(home.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("report.json").is_file())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    serde_json::from_str(&std::fs::read_to_string(runs[0].join("report.json")).unwrap()).unwrap()
}

/// The added lines of `patch` that no row of the screen shows (as escaped text).
fn unseen_added_lines(patch: &str, rows: &BTreeSet<String>) -> Vec<String> {
    added_lines(patch)
        .into_iter()
        .map(|line| for_screen(&format!("+{line}")).into_owned())
        .filter(|line| !rows.iter().any(|row| row.contains(line.trim_end())))
        .collect()
}

/// The flags of the report that no row shows.
fn unseen_flags(report: &FinalReport, rows: &BTreeSet<String>) -> Vec<String> {
    report
        .flags
        .iter()
        .map(|flag| for_screen_line(flag).into_owned())
        .filter(|flag| {
            !rows
                .iter()
                .any(|row| row.contains(&format!("FLAG     {flag}")))
        })
        .collect()
}

#[test]
fn a_patch_line_that_erases_itself_and_notes_that_redraw_the_checks_are_shown_as_text() {
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let before = tree_digest(repo.path());
    let review = reviewer_with(REDRAW, home.path());
    let script = fixer_with(&format!("{ERASED}{OSC_LINE}"));
    let command = fix_command(
        repo.path(),
        home.path(),
        &script,
        &["--sandbox", "none", "-c", &review],
        "",
    );
    // Tall enough that the approval screen shows the diff without a pager.
    let mut terminal = Terminal::start(command, 200, 250);
    terminal.wait_for(600, "Type yes to apply it");
    terminal.send("no\n");
    let seen = terminal.finish(120);
    let report = only_report(home.path());
    let rows: BTreeSet<String> = seen.rows.iter().cloned().collect();

    let actual = (
        report.outcome,
        unseen_added_lines(&report.patch, &rows),
        unseen_flags(&report, &rows),
        seen.shows("__import__(\"os\").system(\"true\")  # <U+001B>[2K<U+001B>[G+    # totals"),
        seen.shows("fine<U+001B>[14A<U+001B>[J"),
        // The size, counted from the patch: the two files, the bundled fix's one removed line.
        seen.shows(&format!(
            "patch: 2 files, +{} -1 lines",
            added_lines(&report.patch).len()
        )),
        seen.tampering(false),
        tree_digest(repo.path()) == before,
    );

    let expected = (
        Outcome::Success,
        Vec::<String>::new(),
        Vec::<String>::new(),
        true,
        true,
        true,
        Vec::<String>::new(),
        true,
    );
    assert_eq!(actual, expected, "the screen:\n{}", seen.rows.join("\n"));
}

#[test]
fn through_less_the_pager_sees_only_plumbs_colours_and_every_added_line_is_on_a_page() {
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let before = tree_digest(repo.path());
    let script = fixer_with(&format!("{ERASED}{CONCEALED}"));
    let command = fix_command(
        repo.path(),
        home.path(),
        &script,
        &["--sandbox", "none", "-c", "review.enabled=false"],
        "less -R",
    );
    // Short enough that the diff is paged.
    let mut terminal = Terminal::start(command, 24, 200);
    let mut pages: BTreeSet<String> = BTreeSet::new();
    let prompt = |t: &Terminal| {
        t.visible()
            .last()
            .is_some_and(|row| row.starts_with(':') || row.contains("(END)"))
    };
    assert!(
        terminal.until(600, prompt),
        "no pager:\n{}",
        terminal.visible().join("\n")
    );
    for _ in 0..20 {
        // Let the page finish drawing, then read it.
        let settled = terminal.received();
        terminal.until(1, |t| t.received() != settled);
        pages.extend(terminal.visible());
        if terminal
            .visible()
            .last()
            .is_some_and(|row| row.contains("(END)"))
        {
            break;
        }
        let sent_at = terminal.received();
        terminal.send(" ");
        terminal.until(30, |t| t.received() > sent_at && prompt(t));
    }
    terminal.send("q");
    terminal.wait_for(60, "Type yes to apply it");
    terminal.send("no\n");
    let seen = terminal.finish(120);
    let report = only_report(home.path());
    pages.extend(seen.rows.iter().cloned());

    let actual = (
        report.outcome,
        unseen_added_lines(&report.patch, &pages),
        seen.tampering(true),
        tree_digest(repo.path()) == before,
    );

    let expected = (
        Outcome::Success,
        Vec::<String>::new(),
        Vec::<String>::new(),
        true,
    );
    assert_eq!(
        actual,
        expected,
        "the pages:\n{}",
        pages.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn tool_arguments_that_retitle_the_window_or_write_the_clipboard_are_shown_as_text() {
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let before = tree_digest(repo.path());
    let script = Script::new()
        .tool(
            "search_code",
            json!({"query": "\u{1b}]0;all checks passed\u{7}gst"}),
        )
        .tool(
            "search_code",
            json!({"query": "\u{1b}]52;c;cm0gLXJmIH4=\u{1b}\\"}),
        )
        .tool("search_code", json!({"query": "\u{202e}tsg_etupmoc"}));
    let command = fix_command(
        repo.path(),
        home.path(),
        &script,
        &["--sandbox", "none"],
        "",
    );
    let terminal = Terminal::start(command, 60, 250);
    let seen = terminal.finish(600);

    let actual = (
        seen.shows("query=<U+001B>]0;all checks passed<U+0007>gst"),
        seen.shows("query=<U+001B>]52;c;cm0gLXJmIH4=<U+001B>\\"),
        seen.shows("query=<U+202E>tsg_etupmoc"),
        seen.tampering(false),
        tree_digest(repo.path()) == before,
    );

    assert_eq!(
        actual,
        (true, true, true, Vec::<String>::new(), true),
        "the screen:\n{}",
        seen.rows.join("\n")
    );
}

/// A ticket whose title holds a right-to-left override and a title sequence.
const TITLE: &str = "GST on \u{202e}stnuocsid\u{202c} \u{1b}]0;owned\u{7}BILL-412";

#[test]
fn show_runs_config_and_errors_show_titles_values_and_patch_bytes_as_text() {
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let ticket = home.path().join("ticket.md");
    std::fs::write(
        &ticket,
        format!("{TITLE}\n\nGST is charged before the discount.\n"),
    )
    .unwrap();
    let script_path = home.path().join("attempt.jsonl");
    Script::new()
        .tool("create_file", json!({"path": "notes.txt", "content": "a \u{1b}[2K\u{1b}]0;owned\u{7}note \u{202e}txt\n"}))
        .write(&script_path);
    let model = format!("script:{}", script_path.display());
    let run = plumb(
        home.path(),
        &[
            "fix",
            "--repo",
            &repo.path().display().to_string(),
            "--ticket",
            &ticket.display().to_string(),
            "--model",
            &model,
            "--sandbox",
            "none",
            "--json",
        ],
    );
    let failed = report(&run);
    // A repository setting that is not one (a config error naming it) and one shown by
    // `config show`.
    let bad = repo_with(&[("plumb.toml", "\"\\u001b]0;owned\\u0007x\" = 1\n")], &[]);
    let shown = repo_with(
        &[(
            "plumb.toml",
            "test_command = \"pytest \\u001b]0;owned\\u0007 \\u202e\"\n",
        )],
        &[],
    );

    let at_terminal = |args: &[&str]| -> Seen {
        let mut command = plumb_command(home.path());
        command.args(args);
        Terminal::start(command, 60, 250).finish(120)
    };
    let runs = at_terminal(&["runs"]);
    let show = at_terminal(&["show", &failed.run_id]);
    let error = at_terminal(&[
        "fix",
        "--repo",
        &bad.path().display().to_string(),
        "--ticket-text",
        "x",
        "--model",
        &model,
    ]);
    let config = at_terminal(&[
        "config",
        "show",
        "--repo",
        &shown.path().display().to_string(),
    ]);

    let actual = vec![
        (
            "runs",
            runs.shows("GST on <U+202E>stnuocsid<U+202C> <U+001B>]0;owned<U+0007>"),
            runs.tampering(false),
        ),
        (
            "show",
            show.shows("+a <U+001B>[2K<U+001B>]0;owned<U+0007>note <U+202E>txt"),
            show.tampering(false),
        ),
        (
            "error",
            error.shows("<U+001B>]0;owned<U+0007>x"),
            error.tampering(false),
        ),
        (
            "config",
            config.shows(r"pytest \u001B]0;owned\u0007 <U+202E>"),
            config.tampering(false),
        ),
    ];

    let clean = |name| (name, true, Vec::<String>::new());
    let expected = vec![
        clean("runs"),
        clean("show"),
        clean("error"),
        clean("config"),
    ];
    assert_eq!(
        actual,
        expected,
        "runs:\n{}\nshow:\n{}\nerror:\n{}\nconfig:\n{}",
        runs.rows.join("\n"),
        show.rows.join("\n"),
        error.rows.join("\n"),
        config.rows.join("\n")
    );
}

#[test]
fn to_pipes_no_escape_byte_is_written_and_the_patch_is_byte_for_byte() {
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let ticket = home.path().join("ticket.md");
    std::fs::write(
        &ticket,
        format!("{TITLE}\n\nGST is charged before the discount.\n"),
    )
    .unwrap();
    // A progress line with a title sequence, then the run goes on as the bundled one.
    let first = Script::new().tool("search_code", json!({"query": "\u{1b}]0;owned\u{7}gst"}));
    let path = home.path().join("fixer.jsonl");
    fixer_after(first, &format!("{ERASED}{OSC_LINE}")).write(&path);
    let model = format!("script:{}", path.display());
    let repo_arg = repo.path().display().to_string();
    let ticket_arg = ticket.display().to_string();
    let fix_args = [
        "fix",
        "--repo",
        &repo_arg,
        "--ticket",
        &ticket_arg,
        "--model",
        &model,
        "--sandbox",
        "none",
        "-c",
        "review.enabled=false",
    ];

    // Not a terminal: stdout carries the patch as a program reads it (`> x.diff`).
    let fixed = plumb(home.path(), &fix_args);
    let report_of_run = only_report(home.path());
    let json_args: Vec<&str> = fix_args.iter().copied().chain(["--json"]).collect();
    let as_json = plumb(home.path(), &json_args);
    let shown = plumb(home.path(), &["show", &report_of_run.run_id]);
    let runs = plumb(home.path(), &["runs"]);
    let runs_json = plumb(home.path(), &["runs", "--json"]);
    let patch_file = std::fs::read(Path::new(&report_of_run.workspace).join("patch.diff")).unwrap();
    let sha = |bytes: &[u8]| format!("{:x}", Sha256::digest(bytes));
    let no_escape = |name: &str, bytes: &[u8]| -> Vec<String> {
        let mut found = forbidden(bytes, false);
        if bytes.contains(&0x1b) {
            found.push(format!("{name}: an ESC byte"));
        }
        found
    };

    let actual = (
        (report_of_run.outcome, fixed.status.code()),
        fixed.stdout == patch_file,
        shown.stdout == patch_file,
        sha(&shown.stdout) == report_of_run.patch_sha256,
        report_of_run.patch.contains('\u{1b}'),
        [
            no_escape("fix stderr", &fixed.stderr),
            no_escape("fix --json stdout", &as_json.stdout),
            no_escape("fix --json stderr", &as_json.stderr),
            no_escape("show stderr", &shown.stderr),
            no_escape("runs stdout", &runs.stdout),
            no_escape("runs --json stdout", &runs_json.stdout),
        ]
        .concat(),
        report(&as_json).title == TITLE,
    );

    let expected = (
        (Outcome::Success, Some(0)),
        true,
        true,
        true,
        true,
        Vec::<String>::new(),
        true,
    );
    assert_eq!(actual, expected, "fix stderr:\n{}", stderr(&fixed));
}

#[test]
fn an_eval_task_files_ids_reach_a_pipe_and_a_terminal_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    // A record with an id that retitles the window and reverses text, and nothing else.
    let record = json!({"instance_id": "\u{1b}]0;owned\u{7}calc-\u{202e}2", "repo": "calc"});
    std::fs::write(&tasks, format!("{record}\n")).unwrap();
    let out = dir.path().join("out");
    let args = [
        "eval",
        tasks.to_str().unwrap(),
        "--model",
        "oracle",
        "--out",
        out.to_str().unwrap(),
    ];
    let piped = plumb(home.path(), &args);
    let mut command = plumb_command(home.path());
    command.args(args);
    let seen = Terminal::start(command, 40, 250).finish(120);
    let mut in_pipe = forbidden(&piped.stderr, false);
    if piped.stderr.contains(&0x1b) {
        in_pipe.push("an ESC byte".to_string());
    }

    let actual = (
        piped.status.code(),
        stderr(&piped).contains("`<U+001B>]0;owned<U+0007>calc-<U+202E>2`"),
        in_pipe,
        seen.shows("`<U+001B>]0;owned<U+0007>calc-<U+202E>2`"),
        seen.tampering(false),
    );

    assert_eq!(
        actual,
        (
            Some(2),
            true,
            Vec::<String>::new(),
            true,
            Vec::<String>::new()
        ),
        "stderr: {}",
        stderr(&piped)
    );
}
