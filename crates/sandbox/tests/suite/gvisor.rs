//! The gVisor backend against the real `runsc`: what a command gets, and the limits. The
//! escape attempts are in `gvisor_escape.rs`, killing in `gvisor_kill.rs`; the fixtures here.
//!
//! Where gVisor cannot work, every test fails with [`GvisorSandbox::probe`]'s sentence:
//! these tests never skip silently.

#[path = "gvisor_escape.rs"]
mod escape;
#[path = "gvisor_kill.rs"]
mod kill;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use plumb_sandbox::{CommandOutput, CommandSpec, EnvPolicy, GvisorSandbox, Sandbox, SandboxError};
use pretty_assertions::assert_eq;
use tempfile::TempDir;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use super::run_dirs::{Place, RunDirs, parent_env};

/// Fake secrets in the parent environment; none may reach a command.
pub const SECRETS: [(&str, &str); 4] = [
    ("PLUMB_TEST_SECRET", "hunter2-gvisor"),
    ("OPENAI_API_KEY", "sk-test-gvisor"),
    ("AWS_SECRET_ACCESS_KEY", "aws-secret-gvisor"),
    ("SSH_AUTH_SOCK", "/tmp/ssh-agent-gvisor.sock"),
];

/// Panics with the probe's sentence when gVisor does not work here (probed once).
pub async fn require_gvisor() {
    static PROBE: OnceCell<Result<(), String>> = OnceCell::const_new();
    if let Err(reason) = PROBE.get_or_init(GvisorSandbox::probe).await {
        panic!("gVisor does not work on this machine, and the gvisor suite needs it: {reason}");
    }
}

pub struct GvisorFixture {
    /// `<run>/work` (the workspace) and `<run>/shadow.git`, under the target's temp dir or
    /// in `/tmp` (see `run_dirs.rs`).
    pub run_dir: TempDir,
    /// A host directory outside the run, in `/tmp`, holding `secret.txt`.
    pub outside: TempDir,
    /// Bundles and runsc's state; its path also marks this fixture's runsc processes.
    pub scratch: TempDir,
    pub sandbox: GvisorSandbox,
}

impl GvisorFixture {
    pub async fn new() -> Self {
        Self::at(Place::Target).await
    }

    /// With the run directory at `place`.
    pub async fn at(place: Place) -> Self {
        require_gvisor().await;
        let RunDirs { run_dir, outside } = RunDirs::new("gvisor-run-", place);
        let scratch = tempfile::Builder::new()
            .prefix("gvisor-scratch-")
            .tempdir()
            .unwrap();
        let sandbox = GvisorSandbox::new(scratch.path().join("gvisor"))
            .unwrap()
            .with_env_policy(EnvPolicy::from_parent(parent_env(&SECRETS)));
        Self {
            run_dir,
            outside,
            scratch,
            sandbox,
        }
    }

    /// The workspace, absolute and without symbolic links.
    pub fn work(&self) -> PathBuf {
        self.run_dir.path().canonicalize().unwrap().join("work")
    }

    pub fn spec(&self, argv: &[&str]) -> CommandSpec {
        CommandSpec::new(argv.iter().map(|a| (*a).to_owned()).collect(), self.work())
    }

    pub fn sh(&self, script: &str) -> CommandSpec {
        self.spec(&["sh", "-c", script])
    }

    pub async fn run(&self, spec: &CommandSpec) -> CommandOutput {
        self.sandbox
            .run(spec, &CancellationToken::new())
            .await
            .unwrap()
    }

    /// Text in the command line of every runsc process of this fixture.
    pub fn marker(&self) -> String {
        self.scratch.path().to_string_lossy().into_owned()
    }

    /// What the runs left under the scratch directory: bundles, and runsc state files.
    pub fn leftovers(&self) -> Vec<String> {
        let dir = self.scratch.path().join("gvisor");
        let mut left = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == "runsc-state" {
                for state in std::fs::read_dir(entry.path()).unwrap().flatten() {
                    left.push(format!(
                        "runsc-state/{}",
                        state.file_name().to_string_lossy()
                    ));
                }
            } else {
                left.push(name);
            }
        }
        left
    }
}

/// One pass over `/proc`: pid, parent pid and command line of every process.
fn processes() -> Vec<(u32, u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let after_name = stat.rsplit(')').next()?;
            let ppid = after_name.split_whitespace().nth(1)?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            Some((
                pid,
                ppid,
                String::from_utf8_lossy(&cmdline).replace('\0', " "),
            ))
        })
        .collect()
}

/// Adds to `seen` the processes whose command line holds `marker`, and their descendants
/// (gVisor's stub processes have an empty command line).
fn scan(marker: &str, seen: &mut BTreeSet<u32>) {
    let all = processes();
    loop {
        let before = seen.len();
        for (pid, ppid, cmdline) in &all {
            if cmdline.contains(marker) || seen.contains(ppid) {
                seen.insert(*pid);
            }
        }
        if seen.len() == before {
            return;
        }
    }
}

/// Records every runsc process of a fixture (runsc, gofer, sandbox, stubs) while it runs.
pub struct ProcessWatch {
    marker: String,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<BTreeSet<u32>>,
}

impl ProcessWatch {
    pub fn start(marker: String) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            let marker = marker.clone();
            std::thread::spawn(move || {
                let mut seen = BTreeSet::new();
                while !stop.load(Ordering::Relaxed) {
                    scan(&marker, &mut seen);
                    std::thread::sleep(Duration::from_millis(20));
                }
                seen
            })
        };
        Self {
            marker,
            stop,
            thread,
        }
    }

    /// Stops watching; returns how many processes were seen and which of them (or any new
    /// one with the marker) are still alive after up to two seconds.
    pub fn survivors(self) -> (usize, Vec<u32>) {
        self.stop.store(true, Ordering::Relaxed);
        let seen = self.thread.join().unwrap();
        let until = Instant::now() + Duration::from_secs(2);
        loop {
            let mut now = BTreeSet::new();
            scan(&self.marker, &mut now);
            let alive: Vec<u32> = seen
                .iter()
                .chain(now.iter())
                .copied()
                .collect::<BTreeSet<u32>>()
                .into_iter()
                .filter(|pid| is_alive(*pid))
                .collect();
            if alive.is_empty() || Instant::now() > until {
                return (seen.len(), alive);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Whether `pid` is a live process (not gone, not a zombie).
fn is_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !(state.starts_with('Z') || state.starts_with('X'))
        }
        Err(_) => false,
    }
}

/// The enforced limits that do not depend on this machine's cgroups.
fn without_cgroup_limits(enforced: &[String]) -> Vec<String> {
    enforced
        .iter()
        .filter(|name| !name.starts_with("memory (") && !name.starts_with("cpus ("))
        .cloned()
        .collect()
}

#[tokio::test]
async fn probe_says_gvisor_works_here() {
    let actual = GvisorSandbox::probe().await;

    assert_eq!(actual, Ok(()));
}

#[tokio::test]
async fn exit_code_and_both_streams_come_back() {
    exit_code_and_streams(Place::Target).await;
}

#[tokio::test]
async fn exit_code_and_both_streams_come_back_from_a_workspace_under_tmp() {
    exit_code_and_streams(Place::Tmp).await;
}

async fn exit_code_and_streams(place: Place) {
    let fx = GvisorFixture::at(place).await;

    let mut out = fx
        .run(&fx.sh(
            "echo out; echo err >&2; pwd; echo $HOME $TMPDIR; touch /tmp/t && echo tmp writable; \
             touch .. 2>/dev/null || echo parent read-only; exit 3",
        ))
        .await;
    out.duration = Duration::ZERO;
    out.enforced = without_cgroup_limits(&out.enforced);

    let expected = CommandOutput {
        exit_code: Some(3),
        signal: None,
        stdout: format!(
            "out\n{}\n/home/sandbox /tmp\ntmp writable\nparent read-only\n",
            fx.work().display()
        ),
        stderr: "err\n".to_owned(),
        timed_out: false,
        cancelled: false,
        stdout_truncated_bytes: 0,
        stderr_truncated_bytes: 0,
        duration: Duration::ZERO,
        enforced: [
            "timeout",
            "output cap",
            "no core dumps",
            "file size",
            "read-only system",
            "network off",
            "pid namespace",
            GvisorSandbox::PROCESSES_ENFORCED,
        ]
        .map(str::to_owned)
        .to_vec(),
        limits_hit: Vec::new(),
    };
    assert_eq!(out, expected);
    assert_eq!(fx.leftovers(), Vec::<String>::new());
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let fx = GvisorFixture::new().await;

    let err = fx
        .sandbox
        .run(
            &fx.spec(&["no-such-program-plumb"]),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();

    assert!(matches!(err, SandboxError::Spawn { .. }), "{err:?}");
    assert_eq!(
        (err.to_string(), err.is_infra()),
        (
            "could not start `no-such-program-plumb`: not found; install it or change the command"
                .to_owned(),
            false
        )
    );
}

#[tokio::test]
async fn python_pytest_passes_inside() {
    let fx = GvisorFixture::new().await;
    std::fs::write(
        fx.work().join("calc.py"),
        "def add(a, b):\n    return a + b\n",
    )
    .unwrap();
    std::fs::write(
        fx.work().join("test_calc.py"),
        "from calc import add\n\n\
         def test_add():\n    assert add(1, 2) == 3\n\n\
         def test_tmp_path(tmp_path):\n    (tmp_path / 'x').write_text('y')\n    \
         assert (tmp_path / 'x').read_text() == 'y'\n",
    )
    .unwrap();
    let mut spec = fx.spec(&["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]);
    spec.limits.timeout = Duration::from_secs(120);

    let out = fx.run(&spec).await;

    assert!(out.success() && out.stdout.contains("2 passed"), "{out:#?}");
}

#[tokio::test]
async fn file_size_and_process_limits_hold_inside() {
    let fx = GvisorFixture::new().await;
    let mut write = fx.sh("head -c 3000000 /dev/zero > big");
    write.limits.max_file_bytes = 1_000_000;
    let mut fork = fx.spec(&[
        "python3",
        "-c",
        "import os, time\n\
         n = 0\n\
         for _ in range(60):\n\
         \x20   try:\n\
         \x20       pid = os.fork()\n\
         \x20   except OSError:\n\
         \x20       break\n\
         \x20   if pid == 0:\n\
         \x20       time.sleep(5)\n\
         \x20       os._exit(0)\n\
         \x20   n += 1\n\
         print('forked', n)\n",
    ]);
    fork.limits.max_processes = 16;

    fx.run(&write).await;
    let forked = fx.run(&fork).await;
    let size = std::fs::metadata(fx.work().join("big")).unwrap().len();

    let forked_count: u32 = forked
        .stdout
        .trim()
        .strip_prefix("forked ")
        .and_then(|n| n.parse().ok())
        .unwrap_or(u32::MAX);
    assert_eq!(size, 1_000_000);
    assert!(forked_count < 16, "{forked:#?}");
}

#[tokio::test]
async fn memory_limit_kills_a_hog_when_reported() {
    let fx = GvisorFixture::new().await;
    let mut spec = fx.spec(&[
        "python3",
        "-c",
        "x = bytearray(768 << 20); x[::4096] = b'y' * len(x[::4096]); print('allocated')",
    ]);
    spec.limits.memory_bytes = 256 << 20;
    spec.limits.timeout = Duration::from_secs(60);

    let out = fx.run(&spec).await;

    let limited = out.enforced.iter().any(|n| n.starts_with("memory ("));
    if limited {
        assert!(
            !out.success() && !out.stdout.contains("allocated"),
            "768 MiB allocated under a 256 MiB limit: {out:#?}"
        );
    } else {
        assert!(out.success(), "no memory limit was reported, yet: {out:#?}");
    }
}

/// Whether `path` exists on the host, without following a final symlink.
pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}
