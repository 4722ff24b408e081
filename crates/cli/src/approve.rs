//! The terminal's approval gate (DESIGN.md §5 step 8): the diff in colour (paged when it is longer
//! than the screen), the checks, the review and the patch's SHA-256, then one question. Only the
//! answer `yes` approves, naming the SHA-256 that was shown; any other answer, the end of input,
//! Ctrl-C or no answer in time (plumb-agent's `ask` holds the clock) keeps the change out.

use std::io::{IsTerminal, Write};
use std::process::{Command, Stdio};

use async_trait::async_trait;
use plumb_agent::{ApprovalGate, ApprovalRequest, Decision};
use plumb_protocol::{CheckStatus, ReviewVerdict};

/// The terminal gate. Writes to stderr and reads a line from stdin.
pub(crate) struct TerminalGate {
    color: bool,
}

impl TerminalGate {
    pub(crate) fn new() -> Self {
        Self {
            color: std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// Whether a person can be asked: stdin and stderr are a terminal.
    pub(crate) fn can_ask() -> bool {
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
    }
}

#[async_trait]
impl ApprovalGate for TerminalGate {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        let diff = colored_diff(&request.patch, self.color);
        let diff_lines = diff.lines().count();
        if !(diff_lines + 12 > screen_rows() && page(&diff)) {
            eprint!("{diff}");
        }
        eprint!("{}", summary(request, self.color));
        eprint!(
            "Apply this change to {}? Type yes to apply it; anything else keeps it out: ",
            request.destination
        );
        let _ = std::io::stderr().flush();
        let line = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map(|n| (n, line))
        });
        let answer = tokio::select! {
            answer = line => answer,
            _ = tokio::signal::ctrl_c() => {
                eprintln!();
                return Decision::Reject { reason: "cancelled with Ctrl-C".to_string() };
            }
        };
        match answer {
            Ok(Ok((0, _))) => {
                eprintln!();
                Decision::Reject {
                    reason: "no answer (the input ended)".to_string(),
                }
            }
            Ok(Ok((_, line))) if line.trim().eq_ignore_ascii_case("yes") => Decision::Approve {
                sha256: request.patch_sha256.clone(),
            },
            Ok(Ok((_, line))) => Decision::Reject {
                reason: format!("the answer was {:?}, not yes", line.trim()),
            },
            Ok(Err(err)) => Decision::Reject {
                reason: format!("the answer could not be read: {err}"),
            },
            Err(err) => Decision::Reject {
                reason: format!("the answer could not be read: {err}"),
            },
        }
    }
}

/// The checks, flags, review and SHA-256 under the diff.
fn summary(request: &ApprovalRequest, color: bool) -> String {
    let paint = |code: &str, text: &str| paint(color, code, text);
    let mut out = String::from("\nchecks:\n");
    for check in &request.checks {
        let mark = match check.status {
            CheckStatus::Passed => paint("32", "passed "),
            CheckStatus::Failed => paint("31", "FAILED "),
            CheckStatus::Flagged => paint("33", "FLAGGED"),
            CheckStatus::NotRun => "not run".to_string(),
        };
        out.push_str(&format!(
            "  {mark}  {:<10} {}\n",
            check.step.as_str(),
            check.evidence.lines().next().unwrap_or_default()
        ));
    }
    for flag in &request.flags {
        out.push_str(&format!("  {}  {flag}\n", paint("33", "FLAG   ")));
    }
    match &request.review {
        Some(review) => {
            let code = match review.verdict {
                ReviewVerdict::Approve => "32",
                ReviewVerdict::RequestChanges => "31",
                ReviewVerdict::NeedsAttention => "33",
            };
            out.push_str(&format!(
                "review by {}: {}",
                review.reviewer,
                paint(code, review.verdict.words())
            ));
            if !review.summary.is_empty() {
                out.push_str(&format!(" — {}", review.summary));
            }
            out.push('\n');
            for note in &review.notes {
                out.push_str(&format!("    {}\n", note.sentence()));
            }
            for why in &review.attention {
                out.push_str(&format!("    attention: {why}\n"));
            }
        }
        None => out.push_str("review: none (review.enabled is off)\n"),
    }
    out.push_str(&format!(
        "patch sha256: {}\n",
        paint("1", &request.patch_sha256)
    ));
    out
}

/// The diff with added lines green, removed red, hunk heads cyan, file heads bold.
fn colored_diff(diff: &str, color: bool) -> String {
    let mut out = String::with_capacity(diff.len() + diff.len() / 8);
    for line in diff.lines() {
        let code =
            if line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff ") {
                "1"
            } else if line.starts_with('+') {
                "32"
            } else if line.starts_with('-') {
                "31"
            } else if line.starts_with("@@") {
                "36"
            } else {
                ""
            };
        if code.is_empty() {
            out.push_str(line);
        } else {
            out.push_str(&paint(color, code, line));
        }
        out.push('\n');
    }
    out
}

fn paint(color: bool, code: &str, text: &str) -> String {
    if color {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// The terminal's height in rows (24 when it cannot be read).
fn screen_rows() -> usize {
    rustix::termios::tcgetwinsize(std::io::stderr())
        .ok()
        .map(|size| usize::from(size.ws_row))
        .filter(|rows| *rows > 0)
        .unwrap_or(24)
}

/// Shows `text` through `$PAGER` (default `less -R`), split like a shell would but never run by
/// one; false when there is no pager to run (empty `PAGER`, or it cannot start).
fn page(text: &str) -> bool {
    let pager = std::env::var("PAGER").unwrap_or_else(|_| "less -R".to_string());
    let Ok(argv) = shell_words::split(&pager) else {
        return false;
    };
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    let Ok(mut child) = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(std::io::stderr())
        .spawn()
    else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A pager quit early closes the pipe; the rest need not be written.
        let _ = stdin.write_all(text.as_bytes());
    }
    child.wait().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_without_color_is_unchanged_and_with_color_each_kind_is_painted() {
        let diff = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n ctx\n";
        assert_eq!(colored_diff(diff, false), diff);
        let painted = colored_diff(diff, true);
        assert!(
            painted.contains("\x1b[31m-old\x1b[0m\n\x1b[32m+new\x1b[0m\n ctx\n"),
            "{painted:?}"
        );
        assert!(painted.contains("\x1b[36m@@ -1 +1 @@\x1b[0m"));
    }
}
