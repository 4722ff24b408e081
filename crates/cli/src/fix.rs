//! `plumb fix`: check the inputs, build the run, print progress, print the result. The patch
//! goes to stdout byte for byte when stdout is a file or a pipe, escaped when it is a terminal;
//! everything else through `screen` on stderr.

use std::path::{Path, PathBuf};

use plumb_agent::ApprovalRequest;
use plumb_agent::input::{Inbox, Submitter};
use plumb_config::FlagSetting;
use plumb_protocol::{CheckStatus, FinalReport, SandboxKind, Usage, thousands};

use crate::approve::TerminalGate;
use crate::args::{FixArgs, SandboxArg};
use crate::screen::{self, Stream, one_line, say};
use crate::{Failure, home, launch, setup};

pub(crate) async fn run(args: FixArgs, overrides: &[String]) -> Result<i32, Failure> {
    // A branch name git would refuse is known now, not after the run.
    if let Some(name) = &args.branch {
        home::check_branch(name)?;
    }
    let repo = local_repo(&args.repo)?;
    let ticket = read_ticket(&args)?;
    for (flag, path) in [("--out", &args.out), ("--journal", &args.journal)] {
        if let Some(path) = path {
            check_output_path(flag, path)?;
        }
    }
    let asking = !args.json && TerminalGate::can_ask();
    if args.branch.is_some() && !asking {
        return Err(Failure::bad_input(
            "--branch commits the change once you approve it at a terminal, and there is none here (or --json is given); run without --branch, then plumb apply RUN --sha SHA --branch NAME",
        ));
    }
    let loaded = setup::load_config(Some(&repo), overrides.to_vec(), flag_settings(&args))?;
    let approval = loaded.config.approval.clone();
    let model = setup::connect_model(&loaded.config.model, &loaded.config)?;
    let test_command = args
        .test_cmd
        .as_deref()
        .map(plumb_verify::parse_command)
        .transpose()
        .map_err(|err| Failure::bad_input(format!("--test-cmd: {err}")))?;
    plumb_verify::check_test_ids(&args.fail_to_pass).map_err(|err| {
        Failure::bad_input(format!(
            "--fail-to-pass: {err}; give each test in the runner's own id form, e.g. tests/test_x.py::test_y"
        ))
    })?;
    let task = launch::Task {
        repo_label: repo.display().to_string(),
        repo,
        ticket,
        model,
        reviewer: None,
        test_command,
        journal_path: args.journal.clone(),
        expect_base_tree: None,
        fail_to_pass: args.fail_to_pass.clone(),
    };
    // One input channel for the run and, after it, the approval question: Ctrl-C cancels
    // the one or answers no to the other.
    let inputs = plumb_agent::input::channel();
    let report = launch::run(task, loaded.config, loaded.provenance, &inputs).await?;
    let unwritten = match &args.out {
        Some(out) if !report.patch.is_empty() => write_patch(out, &report.patch).err(),
        _ => None,
    };
    // The report comes first either way: a verified patch is never lost to a failed write.
    // At a terminal that will be asked, the approval screen shows the patch instead.
    let verified = report.outcome == plumb_protocol::Outcome::Success;
    let show_patch = !(asking && verified && Stream::Out.is_terminal());
    print_report_with(&report, args.json, show_patch);
    if verified && !args.json {
        if asking {
            approve_and_apply(&report, &approval, args.branch.as_deref(), inputs).await;
        } else {
            say!(
                "not applied: plumb brings a change home only when a person approves it, and no terminal is here to ask; to apply it: plumb apply {} --sha {}",
                one_line(&report.run_id),
                one_line(&report.patch_sha256)
            );
        }
    }
    match unwritten {
        Some(failure) => Err(failure),
        None => Ok(report.outcome.exit_code()),
    }
}

/// Asks at the terminal; on approval applies the patch (or commits it on `branch`). Whatever the
/// answer, the verified patch stays in the run folder for `plumb apply`.
async fn approve_and_apply(
    report: &FinalReport,
    limits: &plumb_config::Approval,
    branch: Option<&str>,
    (submitter, inbox): (Submitter, Inbox),
) {
    let run_dir = Path::new(&report.workspace);
    let destination = match branch {
        Some(name) => format!("a new branch {name} of {}", report.repo),
        None => report.repo.clone(),
    };
    let request = ApprovalRequest {
        run_id: report.run_id.clone(),
        destination,
        patch: report.patch.clone(),
        patch_sha256: report.patch_sha256.clone(),
        checks: report.checks.clone(),
        flags: report.flags.clone(),
        review: report.review.clone(),
    };
    let later = format!(
        "the patch is in {}; to apply it later: plumb apply {} --sha {}",
        run_dir.join(home::PATCH_FILE).display(),
        report.run_id,
        report.patch_sha256
    );
    match plumb_agent::ask(&TerminalGate::new(submitter, inbox), &request, limits).await {
        Ok(approval) => match home::bring_home(run_dir, report, approval.sha256(), branch) {
            Ok(done) => say!("{done}"),
            Err(failure) => say!("not applied: {}", failure.message),
        },
        Err(reason) => say!("not applied: {reason}; your files are as they were; {later}"),
    }
}

/// A file that `--out` or `--journal` names, checked before the run so that no run is lost to a
/// path that cannot be written: it must not be a folder, nor lie under a file. Folders that do not
/// exist yet are made when the file is written.
fn check_output_path(flag: &str, path: &Path) -> Result<(), Failure> {
    if path.is_dir() {
        return Err(Failure::bad_input(format!(
            "{flag} {} is a folder; pass the path of a file to write in it",
            path.display()
        )));
    }
    let nearest = path
        .ancestors()
        .skip(1)
        .find(|ancestor| !ancestor.as_os_str().is_empty() && ancestor.exists());
    match nearest {
        Some(ancestor) if !ancestor.is_dir() => Err(Failure::bad_input(format!(
            "{flag} {} cannot be written: {} is a file, not a folder; pass a path inside a folder",
            path.display(),
            ancestor.display()
        ))),
        _ => Ok(()),
    }
}

/// Writes the verified patch to `out`, making its folder first (as the journal's is made).
fn write_patch(out: &Path, patch: &str) -> Result<(), Failure> {
    let failed = |err: std::io::Error| {
        Failure::infra(format!(
            "could not write the patch to {}: {err}; the patch is in the report printed above",
            out.display()
        ))
    };
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    std::fs::write(out, patch).map_err(failed)
}

/// The flags that are settings, so each setting's source can name its flag.
fn flag_settings(args: &FixArgs) -> Vec<FlagSetting> {
    let mut flags = Vec::new();
    if let Some(n) = args.max_rounds {
        flags.push(FlagSetting::integer(
            "--max-rounds",
            "limits.max_rounds",
            i64::from(n),
        ));
    }
    if let Some(sandbox) = args.sandbox {
        let name = match sandbox {
            SandboxArg::Bwrap => "bwrap",
            SandboxArg::Gvisor => "gvisor",
            SandboxArg::None => "none",
        };
        flags.push(FlagSetting::text("--sandbox", "sandbox", name));
    }
    if let Some(command) = &args.test_cmd {
        flags.push(FlagSetting::text("--test-cmd", "test_command", command));
    }
    if let Some(model) = &args.model {
        flags.push(FlagSetting::text("--model", "model", model));
    }
    flags
}

/// The repository folder, or a sentence saying what is wrong with the path.
fn local_repo(text: &str) -> Result<PathBuf, Failure> {
    if text.contains("://") || text.starts_with("git@") {
        return Err(Failure::bad_input(format!(
            "--repo {text} looks like a URL; this build of plumb takes a local folder, so clone it first and pass the folder"
        )));
    }
    let path = PathBuf::from(text);
    let meta = std::fs::metadata(&path).map_err(|_| {
        Failure::bad_input(format!(
            "--repo {text} does not exist; pass the folder of the repository to fix"
        ))
    })?;
    if !meta.is_dir() {
        return Err(Failure::bad_input(format!(
            "--repo {text} is a file, not a folder; pass the folder of the repository to fix"
        )));
    }
    path.canonicalize()
        .map_err(|err| Failure::bad_input(format!("--repo {text} cannot be opened: {err}")))
}

fn read_ticket(args: &FixArgs) -> Result<String, Failure> {
    let text = match (&args.ticket, &args.ticket_text) {
        (Some(path), _) => std::fs::read_to_string(path).map_err(|err| {
            let why = if path.exists() {
                err.to_string()
            } else {
                "no such file".to_string()
            };
            Failure::bad_input(format!(
                "--ticket {} cannot be read ({why}); pass a readable file, or the text with --ticket-text",
                path.display()
            ))
        })?,
        (None, Some(text)) => text.clone(),
        (None, None) => {
            return Err(Failure::bad_input(
                "no ticket given; pass --ticket FILE or --ticket-text TEXT",
            ));
        }
    };
    if text.trim().is_empty() {
        return Err(Failure::bad_input(
            "the ticket is empty; say what should change in --ticket FILE or --ticket-text TEXT",
        ));
    }
    Ok(text)
}

/// The end of a run: with `--json` the report alone on stdout; else the patch on stdout and the
/// checks, the outcome and the journal's path on stderr.
pub(crate) fn print_report(report: &FinalReport, json: bool) {
    print_report_with(report, json, true);
}

/// [`print_report`], with the patch on stdout only when `show_patch`.
fn print_report_with(report: &FinalReport, json: bool, show_patch: bool) {
    if json {
        match serde_json::to_string_pretty(report) {
            Ok(text) => screen::json_out(&text),
            Err(err) => say!("plumb: the report could not be written as JSON: {err}"),
        }
        return;
    }
    if show_patch
        && !report.patch.is_empty()
        && let Err(err) = screen::patch_out(&report.patch)
    {
        say!(
            "plumb: the patch could not be written to stdout ({err}); it is in {}",
            Path::new(&report.workspace)
                .join(home::PATCH_FILE)
                .display()
        );
    }
    say!();
    say!("checks:");
    for check in &report.checks {
        let mark = match check.status {
            CheckStatus::Passed => "passed ",
            CheckStatus::Failed => "FAILED ",
            CheckStatus::Flagged => "FLAGGED",
            CheckStatus::NotRun => "not run",
        };
        say!(
            "  {mark}  {:<10} {}",
            check.step.as_str(),
            screen::indented(&check.evidence, "                       ")
        );
    }
    if report.sandbox == SandboxKind::None {
        let chosen = report
            .settings
            .iter()
            .find(|s| s.key == "sandbox")
            .map(|s| format!(" (chosen by {})", one_line(&s.chosen_by())))
            .unwrap_or_default();
        say!("  WARNING  commands ran without a sandbox{chosen}");
    }
    for ignored in &report.ignored_settings {
        say!("  WARNING  {}", one_line(&ignored.sentence()));
    }
    say!(
        "outcome: {} after {} rounds — {}",
        report.outcome.as_str(),
        report.rounds,
        report.reason
    );
    say!("model: {}", usage_line(&report.usage));
    if let Some(why) = report.review.as_ref().and_then(|r| r.not_reviewed.as_ref()) {
        say!("review: not reviewed — {}", one_line(why));
    } else if let Some(review) = &report.review {
        say!(
            "review by {}: {}{}",
            one_line(&review.reviewer),
            review.verdict.words(),
            if review.summary.is_empty() {
                String::new()
            } else {
                format!(" — {}", one_line(&review.summary))
            }
        );
    }
    if !report.patch_sha256.is_empty() {
        say!("patch sha256: {}", one_line(&report.patch_sha256));
    }
    if let Some(kept) = &report.attempt_ref {
        say!(
            "failed attempt kept as {} in {}/workspace/shadow.git",
            one_line(kept),
            one_line(&report.workspace)
        );
    }
    say!("journal: {}", one_line(&report.journal));
    say!("run folder: {}", one_line(&report.workspace));
}

/// The run's tokens and cost for the summary: `12,400 tokens in (9,800 of them cached), 640 out,
/// $0.0312`. The cost is left out when it is zero (a local model, or no price for the model);
/// counts plumb made itself because the provider sent none are marked.
fn usage_line(usage: &Usage) -> String {
    let mut line = format!(
        "{} tokens in ({} of them cached), {} out",
        thousands(usage.input_tokens),
        thousands(usage.cached_tokens),
        thousands(usage.output_tokens)
    );
    if usage.usd > 0.0 {
        line.push_str(&format!(", ${:.4}", usage.usd));
    }
    if usage.estimated {
        line.push_str(" (counted by plumb where the provider reported no usage)");
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_line_groups_digits_and_marks_estimates() {
        let mut usage = Usage {
            input_tokens: 1_234_567,
            cached_tokens: 999,
            output_tokens: 1_000,
            usd: 0.0,
            estimated: false,
        };
        assert_eq!(
            usage_line(&usage),
            "1,234,567 tokens in (999 of them cached), 1,000 out"
        );
        usage.usd = 0.03125;
        usage.estimated = true;
        assert_eq!(
            usage_line(&usage),
            "1,234,567 tokens in (999 of them cached), 1,000 out, $0.0312 \
             (counted by plumb where the provider reported no usage)"
        );
    }
}
