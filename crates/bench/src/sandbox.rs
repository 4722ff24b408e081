//! Spawn overhead per command of the sandbox backends (issue 3's benchmark): the wall time of
//! one real [`Sandbox::run`] of `none`, `bwrap` and `gvisor`, side by side in one process.
//!
//! What one sample is: `Instant` before and after `run(...).await`, so it holds everything a
//! command the agent causes pays: the private HOME/TMPDIR made and removed, the cgroup (bwrap)
//! or the OCI bundle and `runsc delete` (gvisor), the spawn, the wait and the output capture.
//!
//! Order:
//! 1. Build each backend and probe it (`BwrapSandbox::probe`, `GvisorSandbox::probe`). A
//!    backend that cannot be built or probed is left out with its error sentence, which the
//!    table prints in its place; `none` always builds.
//! 2. Warm up: each available backend runs each command once, untimed (page cache, Python's
//!    imports), checked like a timed run.
//! 3. `true` in an empty temporary workdir, `--true-runs` repetitions (default 50).
//! 4. The BILL-412 suite, `python3 -m pytest -q -p no:cacheprovider` in a fresh copy of
//!    `examples/billing` (no `__pycache__`) per run, `--pytest-runs` repetitions (default 10).
//!    The copy is made before the clock starts and removed after it stops.
//!
//! In steps 3 and 4 every repetition runs each backend once, round-robin, starting one backend
//! further each time, so drift and noise of the machine fall on all backends alike. Every run
//! must exit 0, and the suite's stdout must say "40 passed"; otherwise the benchmark stops with
//! the command's output: a failing command is never timed.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use plumb_sandbox::{
    BwrapSandbox, CommandOutput, CommandSpec, GvisorSandbox, NoSandbox, Sandbox, SandboxKind,
};
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

use crate::measure::{Samples, ms};

pub const DEFAULT_TRUE_RUNS: usize = 50;
pub const DEFAULT_PYTEST_RUNS: usize = 10;
/// Issue 3's target: what `bwrap` may add to a command over `none`, judged on the medians.
pub const BWRAP_ADDED_TARGET_MS: f64 = 10.0;
/// The backends in the table's order; `none` first, as the baseline.
pub const BACKENDS: [SandboxKind; 3] = [SandboxKind::None, SandboxKind::Bwrap, SandboxKind::Gvisor];

/// What the BILL-412 suite prints when all of it passes.
const SUITE_PASSED: &str = "40 passed";
/// Generous: gVisor starts Python through the pyenv shim in over a second.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The two commands measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// `true` in an empty workdir: the spawn overhead alone.
    True,
    /// The BILL-412 test suite in a copy of `examples/billing`.
    Suite,
}

impl Workload {
    pub const ALL: [Workload; 2] = [Workload::True, Workload::Suite];

    pub fn label(self) -> &'static str {
        match self {
            Workload::True => "`true`",
            Workload::Suite => "BILL-412 suite (pytest, 40 tests)",
        }
    }

    fn argv(self) -> Vec<String> {
        let words: &[&str] = match self {
            Workload::True => &["true"],
            Workload::Suite => &["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        };
        words.iter().map(|w| (*w).to_owned()).collect()
    }
}

/// How many times each command runs under each backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub true_runs: usize,
    pub pytest_runs: usize,
}

/// The samples of one backend on one command.
pub struct Measured {
    pub backend: SandboxKind,
    pub workload: Workload,
    pub samples: Samples,
}

/// Everything measured, and the backends that could not be.
pub struct SandboxResult {
    pub measured: Vec<Measured>,
    /// A backend left out, with the sentence saying why.
    pub unavailable: Vec<(SandboxKind, String)>,
    /// The `examples/billing` folder the copies were made from.
    pub billing: PathBuf,
    /// Files in each copy.
    pub billing_files: usize,
}

/// A backend that built and passed its probe.
struct Ready {
    kind: SandboxKind,
    sandbox: Box<dyn Sandbox>,
}

/// Runs the whole sandbox benchmark; `temp` holds the scratch directories and workdirs.
pub fn measure(opts: Options, temp: &Path, rt: &Runtime) -> Result<SandboxResult> {
    rt.block_on(measure_async(opts, temp))
}

async fn measure_async(opts: Options, temp: &Path) -> Result<SandboxResult> {
    let billing = billing_source()?;
    let empty = temp.join("empty-workdir");
    let copies = temp.join("billing-copies");
    fs::create_dir_all(&empty)?;
    fs::create_dir_all(&copies)?;

    let mut ready = Vec::new();
    let mut unavailable = Vec::new();
    for kind in BACKENDS {
        eprintln!("bench: building and probing {}", kind.as_str());
        match build(kind, &temp.join("scratch").join(kind.as_str())).await {
            Ok(sandbox) => ready.push(Ready { kind, sandbox }),
            Err(why) => {
                eprintln!("bench: {} left out: {why}", kind.as_str());
                unavailable.push((kind, why));
            }
        }
    }

    let mut workdirs = Workdirs {
        empty,
        copies,
        billing: billing.clone(),
        next: 0,
    };
    eprintln!("bench: warming up");
    for backend in &ready {
        for workload in Workload::ALL {
            time_once(backend, workload, &mut workdirs).await?;
        }
    }

    let mut measured = Vec::new();
    for workload in Workload::ALL {
        let runs = match workload {
            Workload::True => opts.true_runs,
            Workload::Suite => opts.pytest_runs,
        };
        eprintln!(
            "bench: {} × {runs} per backend, round-robin",
            workload.label()
        );
        let mut samples: Vec<Samples> = ready.iter().map(|_| Samples::default()).collect();
        for rep in 0..runs {
            for offset in 0..ready.len() {
                let index = (rep + offset) % ready.len();
                let took = time_once(&ready[index], workload, &mut workdirs).await?;
                samples[index].push(ms(took));
            }
        }
        for (backend, samples) in ready.iter().zip(samples) {
            measured.push(Measured {
                backend: backend.kind,
                workload,
                samples,
            });
        }
    }
    Ok(SandboxResult {
        measured,
        unavailable,
        billing_files: count_files(&billing)?,
        billing,
    })
}

/// Builds a backend with its scratch directory under `scratch` and probes it; the error is a
/// sentence for the table.
async fn build(kind: SandboxKind, scratch: &Path) -> Result<Box<dyn Sandbox>, String> {
    fs::create_dir_all(scratch).map_err(|e| {
        format!(
            "could not make the scratch directory {}: {e}",
            scratch.display()
        )
    })?;
    match kind {
        SandboxKind::None => Ok(Box::new(NoSandbox::new(scratch.to_path_buf()))),
        SandboxKind::Bwrap => {
            let sandbox = BwrapSandbox::new().map_err(|e| e.to_string())?;
            sandbox.probe().await.map_err(|e| e.to_string())?;
            Ok(Box::new(sandbox))
        }
        SandboxKind::Gvisor => {
            GvisorSandbox::probe().await?;
            let sandbox = GvisorSandbox::new(scratch.to_path_buf()).map_err(|e| e.to_string())?;
            Ok(Box::new(sandbox))
        }
    }
}

/// Where the commands run: one empty folder for `true`, a fresh copy of `examples/billing`
/// per suite run.
struct Workdirs {
    empty: PathBuf,
    copies: PathBuf,
    billing: PathBuf,
    next: usize,
}

impl Workdirs {
    fn fresh_copy(&mut self) -> Result<PathBuf> {
        self.next += 1;
        let dir = self.copies.join(format!("billing-{}", self.next));
        copy_tree(&self.billing, &dir)?;
        Ok(dir)
    }
}

/// Runs `workload` once under `backend`, checks that it passed, and returns how long
/// `Sandbox::run` took.
async fn time_once(
    backend: &Ready,
    workload: Workload,
    workdirs: &mut Workdirs,
) -> Result<Duration> {
    let workdir = match workload {
        Workload::True => workdirs.empty.clone(),
        Workload::Suite => workdirs.fresh_copy()?,
    };
    let mut spec = CommandSpec::new(workload.argv(), workdir.clone());
    spec.limits.timeout = RUN_TIMEOUT;
    let cancel = CancellationToken::new();

    let started = Instant::now();
    let result = backend.sandbox.run(&spec, &cancel).await;
    let took = started.elapsed();

    let name = backend.kind.as_str();
    let out = result.with_context(|| format!("{name} could not run {}", workload.label()))?;
    check(&out, workload).with_context(|| format!("{name} ran {}", workload.label()))?;
    if workload == Workload::Suite {
        fs::remove_dir_all(&workdir)
            .with_context(|| format!("removing the copy {}", workdir.display()))?;
    }
    Ok(took)
}

/// Fails unless the command exited 0 (and, for the suite, all 40 tests passed).
fn check(out: &CommandOutput, workload: Workload) -> Result<()> {
    if passed(out.success(), &out.stdout, workload) {
        return Ok(());
    }
    bail!(
        "it did not pass, so it is not timed (exit {:?}, signal {:?}, timed out {}); fix the \
         command or the backend and run again.\nstdout (tail):\n{}\nstderr (tail):\n{}",
        out.exit_code,
        out.signal,
        out.timed_out,
        tail(&out.stdout),
        tail(&out.stderr)
    )
}

/// Whether a run counts: exit 0, and for the suite a summary line starting "40 passed".
fn passed(success: bool, stdout: &str, workload: Workload) -> bool {
    success
        && match workload {
            Workload::True => true,
            Workload::Suite => stdout
                .lines()
                .any(|line| line.trim_start().starts_with(SUITE_PASSED)),
        }
}

/// The last 15 lines of a command's output.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// `examples/billing` of this checkout.
fn billing_source() -> Result<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/billing");
    dir.canonicalize()
        .with_context(|| format!("finding the BILL-412 example at {}", dir.display()))
}

/// Python's caches, left out of every copy so each run starts from source.
fn is_cache(name: &std::ffi::OsStr) -> bool {
    name == "__pycache__" || name == ".pytest_cache"
}

/// Copies the tree at `from` to `to` (which must not exist), leaving out Python's caches.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir(to).with_context(|| format!("making {}", to.display()))?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !is_cache(&name) {
                copy_tree(&entry.path(), &to.join(&name))?;
            }
        } else if kind.is_file() {
            fs::copy(entry.path(), to.join(&name))
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Files a copy of `root` holds.
fn count_files(root: &Path) -> Result<usize> {
    let mut count = 0;
    for entry in fs::read_dir(root)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if !is_cache(&entry.file_name()) {
                count += count_files(&entry.path())?;
            }
        } else if kind.is_file() {
            count += 1;
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn copies_leave_python_caches_out() {
        let temp = tempfile::tempdir().unwrap();
        let from = temp.path().join("from");
        fs::create_dir_all(from.join("pkg/__pycache__")).unwrap();
        fs::create_dir_all(from.join(".pytest_cache")).unwrap();
        fs::write(from.join("pkg/a.py"), "x = 1\n").unwrap();
        fs::write(from.join("pkg/__pycache__/a.pyc"), "junk").unwrap();
        fs::write(from.join(".pytest_cache/README"), "junk").unwrap();
        let to = temp.path().join("to");

        copy_tree(&from, &to).unwrap();
        let mut actual: Vec<String> = walk(&to);
        actual.sort();

        assert_eq!(actual, ["pkg", "pkg/a.py"]);
    }

    fn walk(root: &Path) -> Vec<String> {
        let mut found = Vec::new();
        let mut pending = vec![root.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                found.push(
                    path.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
                if path.is_dir() {
                    pending.push(path);
                }
            }
        }
        found
    }

    #[test]
    fn a_failing_command_is_not_timed() {
        let cases = [
            (true, "", Workload::True),
            (false, "", Workload::True),
            (true, "40 passed in 0.09s", Workload::Suite),
            (true, "39 passed in 0.09s", Workload::Suite),
            (true, "140 passed in 0.09s", Workload::Suite),
            (false, "1 failed, 40 passed in 0.09s", Workload::Suite),
        ];

        let actual: Vec<bool> = cases
            .iter()
            .map(|(success, stdout, workload)| passed(*success, stdout, *workload))
            .collect();

        assert_eq!(actual, [true, false, true, false, false, false]);
    }
}
