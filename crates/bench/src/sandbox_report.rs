//! The sandbox benchmark's page: the machine facts that move its figures (CPUs, kernel, the
//! bwrap and runsc versions, the cgroup layout and what `plumb-sandbox` can use of it, whether
//! we run as root), one row per backend and command with its median, minimum and what it adds
//! over `none`, issue 3's target for `bwrap`, and the command that repeats the run.

use std::fmt::Write;
use std::path::Path;

use plumb_sandbox::{CheckKind, SandboxKind, check_backends};
use tokio::runtime::Runtime;

use crate::machine::{self, Machine, first_line};
use crate::measure::Samples;
use crate::sandbox::{BACKENDS, BWRAP_ADDED_TARGET_MS, Options, SandboxResult, Workload};

/// What the figures were measured on, beyond [`Machine`].
pub struct Facts {
    pub machine: Machine,
    pub user: String,
    pub bwrap: String,
    pub runsc: String,
    /// How cgroups are mounted here (v1, v2 or both).
    pub cgroup_layout: String,
    /// What `plumb doctor` says `plumb-sandbox` can use of them.
    pub cgroup_usable: String,
    pub python3: String,
}

/// Looks at the machine; asks `plumb-sandbox` what it sees of cgroups.
pub fn facts(rt: &Runtime) -> Facts {
    let cgroup_usable = rt
        .block_on(check_backends())
        .into_iter()
        .find(|status| status.kind == CheckKind::Cgroups)
        .map_or_else(|| "not reported".to_owned(), |status| status.detail);
    Facts {
        machine: machine::describe(),
        user: match effective_uid().as_deref() {
            Some("0") => "root (uid 0)".to_owned(),
            Some(uid) => {
                format!("uid {uid}, not root (gVisor needs root; bwrap needs user namespaces)")
            }
            None => "an unknown user (/proc/self/status unreadable)".to_owned(),
        },
        bwrap: first_line("bwrap", &["--version"]).unwrap_or_else(|| "bwrap missing".to_owned()),
        runsc: first_line("runsc", &["--version"]).unwrap_or_else(|| "runsc missing".to_owned()),
        cgroup_layout: cgroup_layout(),
        cgroup_usable,
        python3: python3(),
    }
}

/// The effective uid, the second figure of `/proc/self/status`'s `Uid:` line.
fn effective_uid() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("Uid:"))?;
    line.split_whitespace().nth(2).map(str::to_owned)
}

/// The cgroup file systems mounted, from `/proc/mounts`.
fn cgroup_layout() -> String {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    let (mut v1, mut v2) = (0, Vec::new());
    for line in mounts.lines() {
        let mut fields = line.split_whitespace();
        let (Some(_), Some(point), Some(kind)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        match kind {
            "cgroup" => v1 += 1,
            "cgroup2" => v2.push(point.to_owned()),
            _ => {}
        }
    }
    match (v1, v2.as_slice()) {
        (0, []) => "no cgroup file system mounted".to_owned(),
        (0, points) => format!("cgroup v2 only, at {}", points.join(", ")),
        (n, []) => format!("cgroup v1 only ({n} hierarchies)"),
        (n, points) => format!(
            "hybrid: {n} cgroup v1 hierarchies, cgroup v2 at {}",
            points.join(", ")
        ),
    }
}

/// Which `python3` the commands find first on `PATH`, and its Python and pytest versions.
fn python3() -> String {
    let found = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("python3"))
        .find(|path| path.is_file());
    let Some(path) = found else {
        return "python3 not found on PATH".to_owned();
    };
    let python = first_line("python3", &["--version"]).unwrap_or_default();
    let pytest = first_line("python3", &["-m", "pytest", "--version"])
        .unwrap_or_else(|| "pytest missing".to_owned());
    format!("{} ({python}, {pytest})", path.display())
}

/// One row of the table.
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    pub backend: &'static str,
    pub command: String,
    pub median: String,
    pub min: String,
    pub added: String,
    pub target: String,
    pub meets: String,
}

const DASH: &str = "—";

fn target_of(backend: SandboxKind) -> String {
    match backend {
        SandboxKind::Bwrap => format!("< {BWRAP_ADDED_TARGET_MS:.0} ms added"),
        SandboxKind::None | SandboxKind::Gvisor => DASH.to_owned(),
    }
}

/// The rows: per command, each backend in [`BACKENDS`] order; then one row per backend that
/// could not be measured, with its reason.
pub fn rows(result: &SandboxResult) -> Vec<Row> {
    let mut rows = Vec::new();
    for workload in Workload::ALL {
        let samples_of = |backend: SandboxKind| {
            result
                .measured
                .iter()
                .find(|m| m.backend == backend && m.workload == workload)
                .map(|m| &m.samples)
        };
        let baseline = samples_of(SandboxKind::None).map(Samples::median);
        for backend in BACKENDS {
            let Some(samples) = samples_of(backend) else {
                continue;
            };
            let added = match (backend, baseline) {
                (SandboxKind::None, _) => None,
                (SandboxKind::Bwrap | SandboxKind::Gvisor, base) => {
                    base.map(|base| samples.median() - base)
                }
            };
            let meets = match (backend, added) {
                (SandboxKind::Bwrap, Some(added)) => {
                    if added < BWRAP_ADDED_TARGET_MS {
                        "yes"
                    } else {
                        "no"
                    }
                }
                (SandboxKind::Bwrap, None) => "not judged: no `none` baseline",
                (SandboxKind::None | SandboxKind::Gvisor, _) => DASH,
            };
            rows.push(Row {
                backend: backend.as_str(),
                command: workload.label().to_owned(),
                median: format!("{:.1}", samples.median()),
                min: format!("{:.1}", samples.min()),
                added: match (backend, added) {
                    (SandboxKind::None, _) => "baseline".to_owned(),
                    (_, Some(added)) => format!("{added:+.1}"),
                    (_, None) => DASH.to_owned(),
                },
                target: target_of(backend),
                meets: meets.to_owned(),
            });
        }
    }
    for (backend, why) in &result.unavailable {
        rows.push(Row {
            backend: backend.as_str(),
            command: format!("not measured: {why}"),
            median: DASH.to_owned(),
            min: DASH.to_owned(),
            added: DASH.to_owned(),
            target: target_of(*backend),
            meets: match backend {
                SandboxKind::Bwrap => "not judged".to_owned(),
                SandboxKind::None | SandboxKind::Gvisor => DASH.to_owned(),
            },
        });
    }
    rows
}

/// Everything the page shows.
pub struct Page<'a> {
    pub facts: &'a Facts,
    pub opts: Options,
    pub result: &'a SandboxResult,
    /// The temporary folder holding the workdirs and scratch directories.
    pub temp_dir: &'a Path,
}

pub fn render(page: &Page<'_>) -> String {
    let mut text = String::new();
    let f = page.facts;
    let m = &f.machine;
    let _ = writeln!(
        text,
        "# plumb sandbox benchmark: spawn overhead per command\n"
    );
    let _ = writeln!(
        text,
        "- machine: {} CPUs (nproc), kernel {} (uname -r), {}",
        m.nproc, m.kernel, m.cpu
    );
    let _ = writeln!(
        text,
        "- load average (1 min): {} at the start, {} at the end",
        m.load_at_start,
        machine::load_average()
    );
    let _ = writeln!(
        text,
        "- build profile: {}; running as {}",
        m.profile, f.user
    );
    let _ = writeln!(text, "- bwrap: {}; runsc: {}", f.bwrap, f.runsc);
    let _ = writeln!(
        text,
        "- cgroups: {}; plumb-sandbox can use {}",
        f.cgroup_layout, f.cgroup_usable
    );
    let _ = writeln!(text, "- python3: {}", f.python3);
    let _ = writeln!(
        text,
        "- every figure: the wall time of one `Sandbox::run` (private HOME/TMPDIR, cgroup or \
         gVisor bundle, spawn, wait, cleanup), in ms; `true` {} runs and the suite {} runs per \
         backend, round-robin over the backends in each repetition, after one untimed warm-up \
         each; every run exited 0 (the suite with \"40 passed\")",
        page.opts.true_runs, page.opts.pytest_runs
    );
    let _ = writeln!(
        text,
        "- `true` runs in an empty folder; the suite (`python3 -m pytest -q -p no:cacheprovider`) \
         in a fresh copy of {} ({} files, no `__pycache__`) per run",
        page.result.billing.display(),
        page.result.billing_files
    );
    let _ = writeln!(
        text,
        "- workdirs and scratch go to {} ({}; set TMPDIR to move them)",
        page.temp_dir.display(),
        machine::filesystem_of(page.temp_dir)
    );
    let _ = writeln!(
        text,
        "- \"added vs none\" is the backend's median minus `none`'s median for the same command; \
         \"meets target\" is judged on it\n"
    );
    text.push_str(
        "| backend | command | median ms | min ms | added vs none (median ms) | target | meets target |\n\
         |---|---|--:|--:|--:|---|---|\n",
    );
    for row in rows(page.result) {
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} | {} | {} |",
            row.backend, row.command, row.median, row.min, row.added, row.target, row.meets
        );
    }
    let tmpdir = std::env::var("TMPDIR")
        .map(|dir| format!("TMPDIR={dir} "))
        .unwrap_or_default();
    let _ = writeln!(
        text,
        "\nRepeat with: `{tmpdir}scripts/bench.sh sandbox --true-runs {} --pytest-runs {}`",
        page.opts.true_runs, page.opts.pytest_runs
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Measured;
    use pretty_assertions::assert_eq;

    fn samples(values: &[f64]) -> Samples {
        let mut samples = Samples::default();
        for value in values {
            samples.push(*value);
        }
        samples
    }

    #[test]
    fn rows_show_what_each_backend_adds_and_judge_bwrap() {
        let measured = |backend, workload, values: &[f64]| Measured {
            backend,
            workload,
            samples: samples(values),
        };
        let result = SandboxResult {
            measured: vec![
                measured(SandboxKind::None, Workload::True, &[2.0, 1.0, 3.0]),
                measured(SandboxKind::Bwrap, Workload::True, &[9.0, 8.0, 10.0]),
                measured(SandboxKind::None, Workload::Suite, &[500.0]),
                measured(SandboxKind::Bwrap, Workload::Suite, &[512.5]),
            ],
            unavailable: vec![(SandboxKind::Gvisor, "runsc is missing".to_owned())],
            billing: "/x".into(),
            billing_files: 3,
        };

        let actual: Vec<Vec<String>> = rows(&result)
            .into_iter()
            .map(|r| {
                vec![
                    r.backend.to_owned(),
                    r.command,
                    r.median,
                    r.min,
                    r.added,
                    r.target,
                    r.meets,
                ]
            })
            .collect();

        let suite = "BILL-412 suite (pytest, 40 tests)";
        let expected: Vec<Vec<String>> = [
            ["none", "`true`", "2.0", "1.0", "baseline", "—", "—"],
            [
                "bwrap",
                "`true`",
                "9.0",
                "8.0",
                "+7.0",
                "< 10 ms added",
                "yes",
            ],
            ["none", suite, "500.0", "500.0", "baseline", "—", "—"],
            [
                "bwrap",
                suite,
                "512.5",
                "512.5",
                "+12.5",
                "< 10 ms added",
                "no",
            ],
            [
                "gvisor",
                "not measured: runsc is missing",
                "—",
                "—",
                "—",
                "—",
                "—",
            ],
        ]
        .iter()
        .map(|row| row.iter().map(|cell| (*cell).to_owned()).collect())
        .collect();
        assert_eq!(actual, expected);
    }
}
