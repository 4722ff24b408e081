//! The printed page: the machine and fixtures, the results table ([`crate::table`]), where the
//! harness time goes (the journal split of [`crate::harness`]), an estimate of the checkpoints'
//! share from the engine's own checkpoint figures, and the command that repeats the run.

use std::fmt::Write;
use std::path::Path;

use crate::fixtures::Prepared;
use crate::harness::{HarnessResult, PARTS, PER_ROUND_TARGET_MS, ROUND_ENDS};
use crate::machine::Machine;
use crate::measure::Samples;
use crate::table::{Row, render as render_table, thousands};

/// Everything the page shows.
pub struct Report<'a> {
    pub machine: &'a Machine,
    pub runs: usize,
    pub raw_args: &'a [String],
    pub fixtures: &'a [Prepared],
    pub gen_seconds: f64,
    pub kept_dir: Option<&'a Path>,
    /// The temporary folder holding the copies and the run folders.
    pub temp_dir: &'a Path,
    pub rows: &'a [Row],
    pub harnesses: &'a [HarnessResult],
    /// Per fixture: checkpoint with one file changed, checkpoint with nothing changed.
    pub checkpoints: &'a [(Samples, Samples)],
}

/// The harness rows of one fixture.
pub fn harness_rows(fixture: &str, result: &HarnessResult) -> Vec<Row> {
    let per_round = result.per_round.median();
    vec![
        Row::timed(
            format!(
                "harness time per round: (total − commands) / {} rounds, outcome {}",
                result.rounds,
                result.outcome.as_str()
            ),
            fixture,
            &result.per_round,
        )
        .target(
            &format!("< {PER_ROUND_TARGET_MS:.0} ms"),
            per_round < PER_ROUND_TARGET_MS,
        ),
        Row::timed(
            "harness time per round once prepared (copy, baseline, first prompt left out)",
            fixture,
            &result.per_round_after_prepare,
        ),
        Row::timed("run: prepare_ms", fixture, &result.prepare),
        Row::timed(
            "run: commands_ms (tests, in the sandbox)",
            fixture,
            &result.commands,
        ),
        Row::timed("run: total_ms", fixture, &result.total),
    ]
}

pub fn render(report: &Report<'_>) -> String {
    let mut page = String::new();
    let m = report.machine;
    let _ = writeln!(page, "# plumb engine benchmark\n");
    let _ = writeln!(
        page,
        "- machine: {} CPUs (nproc), kernel {} (uname -r), {}",
        m.nproc, m.kernel, m.cpu
    );
    let _ = writeln!(
        page,
        "- load average (1 min): {} at the start, {} at the end",
        m.load_at_start,
        crate::machine::load_average()
    );
    let _ = writeln!(page, "- build profile: {}", m.profile);
    let rg = m.rg.as_deref().unwrap_or("rg not installed");
    let _ = writeln!(page, "- tools: {}; {rg}; {}", m.git, m.python);
    let _ = writeln!(
        page,
        "- every figure: {} runs, median and minimum in milliseconds; \"meets target\" is judged on the median",
        report.runs
    );
    for prepared in report.fixtures {
        let s = &prepared.stats;
        let _ = writeln!(
            page,
            "- fixture `{}`: {} files ({} Python) in {} packages, {} lines, {} bytes — {}",
            prepared.fixture.name,
            thousands(s.files),
            thousands(s.python_files),
            s.packages,
            thousands(s.lines),
            thousands(s.bytes),
            prepared.fixture.root.display()
        );
    }
    let kept = match report.kept_dir {
        Some(dir) => format!("kept in {}", dir.display()),
        None => "a temporary folder, removed at the end".to_string(),
    };
    let _ = writeln!(
        page,
        "- the generated repository took {:.1} s to write and commit ({kept})",
        report.gen_seconds
    );
    let _ = writeln!(
        page,
        "- copies, run folders and journals go to {} ({}; set TMPDIR to move them)\n",
        report.temp_dir.display(),
        crate::machine::filesystem_of(report.temp_dir)
    );
    page.push_str(&render_table(report.rows));
    page.push_str(&breakdown(report));
    let args: String = report
        .raw_args
        .iter()
        .map(|arg| format!(" {arg}"))
        .collect();
    let tmpdir = std::env::var("TMPDIR")
        .map(|dir| format!("TMPDIR={dir} "))
        .unwrap_or_default();
    let _ = writeln!(page, "\nRepeat with: `{tmpdir}scripts/bench.sh{args}`");
    page
}

/// Where the harness time goes, per fixture, and the checkpoints' estimated share.
fn breakdown(report: &Report<'_>) -> String {
    let mut text =
        String::from("\n## Where the harness time goes (median per run, ms)\n\n| part |");
    let mut rule = String::from("|---|");
    for prepared in report.fixtures {
        let _ = write!(text, " {} |", prepared.fixture.name);
        rule.push_str("--:|");
    }
    let _ = writeln!(text, "\n{rule}");
    for (index, part) in PARTS.iter().enumerate() {
        let _ = write!(text, "| {part} |");
        for result in report.harnesses {
            let value = result.parts.get(index).map_or(0.0, Samples::median);
            let _ = write!(text, " {value:.0} |");
        }
        text.push('\n');
    }
    let _ = write!(text, "| harness time (total − commands) |");
    for result in report.harnesses {
        let _ = write!(text, " {:.0} |", result.harness.median());
    }
    text.push_str(
        "\n\nEach part is its own median, so the parts need not add up to the total exactly.\n\n",
    );
    for ((prepared, result), (changed, unchanged)) in report
        .fixtures
        .iter()
        .zip(report.harnesses)
        .zip(report.checkpoints)
    {
        let ends = result.rounds.saturating_sub(1);
        let round_ends = result.parts.get(ROUND_ENDS).map_or(0.0, Samples::median);
        let _ = writeln!(
            text,
            "- `{}`: {} round ends take {round_ends:.0} ms ({:.1} ms each), and each pays a checkpoint of an \
             unchanged copy ({:.1} ms in the rows above); the {} checkpoints after edits compare with {:.1} ms each.",
            prepared.fixture.name,
            ends,
            round_ends / f64::from(ends.max(1)),
            unchanged.median(),
            result.commits,
            changed.median(),
        );
    }
    text
}
