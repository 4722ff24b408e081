//! `search_code` beside ripgrep on a large tree of the caller's choice (`plumb-bench search --tree
//! DIR`): the same queries, each run `runs` times, alternating the two so drift in the machine
//! hits both alike.
//!
//! Both sides run as fresh processes with their stdout read to the end through a pipe:
//! `plumb-bench __search DIR QUERY [--regex]` (the tool's search and its rendering, 50 rows at
//! most, every matching line counted) and `rg` with the flags that make it search what
//! `search_code` searches (`--hidden -g '!.git'`, the build output folders excluded, smart case,
//! line numbers, `-F` for a literal query). ripgrep has no cap on the rows it prints in all, so
//! it prints every match: the comparison is "find every match" on both sides, which is what
//! `search_code` does to report its total. A third row times `rg` stopped after 50 lines (the
//! pipe closed, as `| head -50` does) to show what a cap alone would buy ripgrep.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::machine::Machine;
use crate::measure::{Samples, ms, run_drained};
use crate::table::{self, Row};

/// Target: `search_code` within this factor of ripgrep's time.
pub const TARGET: f64 = 1.2;

/// The rows `search_code` shows at most (its default limit).
const CAP: usize = 50;

/// One query: what it stands for, its text, and whether it is a regular expression.
pub struct Query {
    pub what: &'static str,
    pub text: &'static str,
    pub regex: bool,
}

/// The default queries: a word in most source files, a rarer word, and a regular expression.
pub const QUERIES: [Query; 3] = [
    Query {
        what: "common word",
        text: "return",
        regex: false,
    },
    Query {
        what: "rare word",
        text: "TODO",
        regex: false,
    },
    Query {
        what: "regex",
        text: r"(class|struct|interface) \w+Error\b",
        regex: true,
    },
];

/// The folders `search_code` skips by name (its walk also skips folders tagged `CACHEDIR.TAG`,
/// which `rg` cannot express; a tree fresh from a package has none).
const SKIPPED: [&str; 2] = ["node_modules", "__pycache__"];

/// Times every query on `root` and returns the table.
pub fn measure(root: &Path, runs: usize, machine: &Machine) -> Result<String> {
    let exe = std::env::current_exe()?;
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| root.display().to_string());
    let mut rows = Vec::new();
    for query in &QUERIES {
        let ours_cmd = || {
            let mut cmd = Command::new(&exe);
            cmd.arg("__search").arg(root).arg(query.text);
            if query.regex {
                cmd.arg("--regex");
            }
            cmd
        };
        let rg_cmd = || {
            let mut cmd = Command::new("rg");
            cmd.args(["--hidden", "-g", "!.git"]);
            for skipped in SKIPPED {
                cmd.args(["-g", &format!("!{skipped}")]);
            }
            cmd.args(["-S", "-n"]);
            if !query.regex {
                cmd.arg("-F");
            }
            cmd.arg("-e").arg(query.text).arg(root);
            cmd
        };
        // Once each untimed: the page cache holds the tree for both.
        run_drained(&mut ours_cmd())?;
        run_drained(&mut rg_cmd())?;
        let (mut ours, mut rg, mut rg_capped) =
            (Samples::default(), Samples::default(), Samples::default());
        for _ in 0..runs {
            ours.push(ms(run_drained(&mut ours_cmd())?));
            rg.push(ms(run_drained(&mut rg_cmd())?));
            rg_capped.push(ms(run_first_lines(&mut rg_cmd(), CAP)?));
        }
        let label = format!("`{}` ({})", query.text.replace('|', "\\|"), query.what);
        rows.push(Row::timed(format!("search_code {label}"), &name, &ours));
        rows.push(Row::timed(format!("rg {label}, every match"), &name, &rg));
        rows.push(Row::timed(
            format!("rg {label}, stopped after {CAP} lines"),
            &name,
            &rg_capped,
        ));
        let ratio = ours.median() / rg.median();
        rows.push(
            Row::text(
                format!("search_code ÷ rg (every match), {}", query.what),
                &name,
                format!("{ratio:.2}×"),
                format!("{:.2}×", ours.min() / rg.min()),
            )
            .target(&format!("≤ {TARGET}×"), ratio <= TARGET),
        );
    }
    Ok(format!(
        "## search_code beside ripgrep on {} ({runs} runs each, fresh processes)\n\n{}, {} CPUs, {} build, {}, load {} at the start\n\n{}\nRepeat with `scripts/bench.sh search --tree {} --runs {runs}`.\n",
        root.display(),
        machine.cpu,
        machine.nproc,
        machine.profile,
        machine.rg.as_deref().unwrap_or("rg missing"),
        machine.load_at_start,
        table::render(&rows),
        root.display(),
    ))
}

/// Runs `cmd`, reads `lines` lines of its stdout, closes the pipe and waits for it to exit
/// (ripgrep stops at the broken pipe), timed from spawn to exit.
fn run_first_lines(cmd: &mut Command, lines: usize) -> Result<Duration> {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?;
    if let Some(stdout) = child.stdout.take() {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        for _ in 0..lines {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
        }
    }
    child.wait()?;
    Ok(started.elapsed())
}
