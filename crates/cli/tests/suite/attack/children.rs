//! No child of plumb outlives it, however it ends: `plumb fix` is killed with `SIGKILL` (as a
//! supervisor's timeout does, with no chance to clean up) while a command it started is running,
//! and within a few seconds nothing it started may be left — under each sandbox backend, and
//! for the embedded model's runner.
//!
//! The command is a test the scripted model writes and runs with `run_tests`: it starts a child
//! of its own (and, behind a wall, one in a new session, which a process-group kill misses) and
//! sleeps. Every one of them carries a marker in its argv; plumb's own launchers (bwrap, runsc)
//! carry the run folder's path, and the sandbox's watches (which clean up after a killed plumb)
//! the killed plumb's pid.

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use plumb_test_support::Script;
use serde_json::json;

use super::support::{Outside, repo_with};
use crate::suite::common::plumb_command;

/// How long a killed plumb's children may take to go.
const GRACE: Duration = Duration::from_secs(5);

/// A test that starts a child (and a session leader when `new_session`) and sleeps; each
/// sleeper's argv ends with `marker`.
fn sleeping_test(marker: &str, new_session: bool) -> String {
    let session = if new_session {
        format!(
            "    subprocess.Popen([sys.executable, \"-c\", SLEEP, \"{marker}-session\"], \
             start_new_session=True)\n"
        )
    } else {
        String::new()
    };
    format!(
        "import subprocess, sys, time\n\n\
         SLEEP = \"import time; time.sleep(600)\"\n\n\n\
         def test_waits():\n\
         \x20   subprocess.Popen([sys.executable, \"-c\", SLEEP, \"{marker}-child\"])\n\
         {session}\
         \x20   time.sleep(600)\n"
    )
}

/// Live processes (not zombies: nothing reaps an orphan here) whose command line contains any of
/// `needles`, as `pid: cmdline`, waiting up to `wait` for them to go.
fn processes_with(needles: &[&str], wait: Duration) -> Vec<String> {
    let until = Instant::now() + wait;
    loop {
        let found = live_processes(needles);
        if found.is_empty() || Instant::now() > until {
            return found;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn live_processes(needles: &[&str]) -> Vec<String> {
    let ours = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != ours)
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            if state.starts_with('Z') || state.starts_with('X') {
                return None;
            }
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            needles
                .iter()
                .any(|n| cmdline.contains(n))
                .then(|| format!("{pid}: {}", cmdline.trim_end()))
        })
        .collect()
}

/// Kills what a failed case left behind, by pid, so it does not sleep on for ten minutes.
fn kill_leftovers(pids: impl IntoIterator<Item = u32>) {
    for pid in pids {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

/// The pid of a `pid: cmdline` line of [`processes_with`].
fn pid_of(line: &str) -> u32 {
    line.split(':').next().unwrap_or("").parse().unwrap_or(0)
}

/// A started `plumb fix`, its output going to files (a pipe would stay open as long as any
/// child that inherited it, and reading it would wait for exactly what is tested here).
struct Started {
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Drop for Started {
    /// A case that failed before its kill does not leave plumb running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Started {
    fn new(home: &Path, args: &[&str]) -> Self {
        let logs = home.join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        let (stdout, stderr) = (logs.join("stdout"), logs.join("stderr"));
        let child = plumb_command(home)
            .args(args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        Self {
            child,
            stdout,
            stderr,
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Waits until `ready` holds, failing if plumb ends first or it takes over `limit`.
    fn wait_for(&mut self, what: &str, limit: Duration, ready: impl Fn() -> bool) {
        let until = Instant::now() + limit;
        while !ready() {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("plumb ended ({status}) before {what}:\n{}", self.stderr());
            }
            assert!(
                Instant::now() < until,
                "{what} did not happen within {limit:?}:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `SIGKILL`s plumb and returns what it had written.
    fn kill(mut self) -> Output {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        Output {
            status,
            stdout: std::fs::read(&self.stdout).unwrap_or_default(),
            stderr: std::fs::read(&self.stderr).unwrap_or_default(),
        }
    }
}

/// Kills `plumb fix --sandbox SANDBOX` while its `run_tests` runs the sleeping test, then checks
/// nothing it started is left and nothing outside changed.
fn killed_while_a_test_runs(sandbox: &str, new_session: bool) {
    let outside = Outside::new();
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let marker = format!(
        "plumbkill{sandbox}{}",
        home.path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(['.', '-'], "")
    );
    let test_file = format!("tests/test_wait_{marker}.py");
    let script = home.path().join("script.jsonl");
    Script::new()
        .tool(
            "create_file",
            json!({"path": test_file, "content": sleeping_test(&marker, new_session)}),
        )
        .tool("run_tests", json!({"tests": [test_file]}))
        .write(&script);
    let model = format!("script:{}", script.display());
    let repo_arg = repo.path().display().to_string();
    let ticket = repo.path().join("BILL-412.md").display().to_string();
    let mut plumb = Started::new(
        home.path(),
        &[
            "fix",
            "--repo",
            &repo_arg,
            "--ticket",
            &ticket,
            "--model",
            &model,
            "--json",
            "--sandbox",
            sandbox,
        ],
    );
    // pytest, its child and maybe the session leader, each with the marker.
    let sleepers = 2 + usize::from(new_session);
    plumb.wait_for(
        "the test's processes started",
        Duration::from_secs(120),
        || {
            if sandbox == "gvisor" {
                gvisor_pythons(home.path()) >= sleepers
            } else {
                live_processes(&[&marker]).len() >= sleepers
            }
        },
    );

    let pid = plumb.child.id();
    let output = plumb.kill();
    let home_path = home.path().display().to_string();
    // The commands, plumb's launchers, and the watches that clean up after a killed plumb.
    let watch = format!("plumb-watch:{pid} ");
    let left = processes_with(&[&marker, &home_path, &watch], GRACE);
    kill_leftovers(left.iter().map(|line| pid_of(line)));
    let cgroups = cgroups_of(pid, GRACE);
    let states = if sandbox == "gvisor" {
        gvisor_states(home.path())
    } else {
        0
    };

    assert_eq!(
        (left, cgroups, states),
        (Vec::new(), Vec::new(), 0),
        "{sandbox}: processes plumb started outlived it, or their cgroups or runsc's state"
    );
    outside.assert_untouched(home.path(), &output);
}

/// The cgroups a plumb with pid `pid` made for its commands (`plumb-PID-N`, and
/// `plumb-gvisor-PID-N` made by runsc) still there, waiting up to `wait` for them to go.
fn cgroups_of(pid: u32, wait: Duration) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: u32, prefixes: &[String], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if prefixes.iter().any(|p| name.starts_with(p)) {
                out.push(path);
            } else if depth > 0 {
                walk(&path, depth - 1, prefixes, out);
            }
        }
    }
    let prefixes = [format!("plumb-{pid}-"), format!("plumb-gvisor-{pid}-")];
    let until = Instant::now() + wait;
    loop {
        let mut found = Vec::new();
        walk(Path::new("/sys/fs/cgroup"), 8, &prefixes, &mut found);
        if found.is_empty() || Instant::now() > until {
            return found;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// How many containers runsc still keeps state for in the run folders under `home`.
fn gvisor_states(home: &Path) -> usize {
    runsc_in_runs(home, |runsc| {
        runsc(&["list", "-quiet"])
            .unwrap_or_default()
            .split_whitespace()
            .count()
    })
}

/// Sums `count` over the run folders under `home`, given `runsc --root <run's state>`.
fn runsc_in_runs(
    home: &Path,
    count: impl Fn(&dyn Fn(&[&str]) -> Option<String>) -> usize,
) -> usize {
    let Ok(runs) = std::fs::read_dir(home.join("runs")) else {
        return 0;
    };
    runs.flatten()
        .map(|run| {
            let root = run.path().join("sandbox/runsc-state");
            let runsc = |args: &[&str]| {
                let out = std::process::Command::new("runsc")
                    .arg("--root")
                    .arg(&root)
                    .args(args)
                    .output()
                    .ok()?;
                Some(String::from_utf8_lossy(&out.stdout).into_owned())
            };
            count(&runsc)
        })
        .sum()
}

/// How many Python processes run in the run's gVisor sandboxes: their argv lives inside
/// gVisor's kernel, so the host sees only runsc's (which holds the run folder's path).
fn gvisor_pythons(home: &Path) -> usize {
    runsc_in_runs(home, |runsc| {
        let ids = runsc(&["list", "-quiet"]).unwrap_or_default();
        ids.split_whitespace()
            .map(|id| {
                let listing = runsc(&["ps", id]).unwrap_or_default();
                listing.lines().filter(|l| l.contains("python")).count()
            })
            .sum()
    })
}

#[test]
fn a_killed_plumb_leaves_no_command_running_without_a_sandbox() {
    // A new session leaves the process group, which is all `none` has: not tested there.
    killed_while_a_test_runs("none", false);
}

#[test]
fn a_killed_plumb_leaves_no_command_running_behind_bwrap() {
    killed_while_a_test_runs("bwrap", true);
}

#[test]
fn a_killed_plumb_leaves_no_command_running_behind_gvisor() {
    killed_while_a_test_runs("gvisor", true);
}

/// Where `plumb models fetch 0.5b` put the model, as `local_model.rs` looks for it.
fn small_model() -> PathBuf {
    let dir = std::env::var_os("PLUMB_MODELS_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("plumb/models"))
        })
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/plumb/models")
        });
    dir.join("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
}

/// The pids of `plumb-llm` processes whose parent is `parent`.
fn runners_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let (name, rest) = stat.split_once(") ").unwrap_or_default();
            let ppid = rest.split(' ').nth(1).and_then(|p| p.parse::<u32>().ok());
            name.ends_with("(plumb-llm") && ppid == Some(parent)
        })
        .collect()
}

/// Needs the 0.5B model, as `local_model.rs` does (`plumb models fetch 0.5b`).
#[test]
fn a_killed_plumb_leaves_no_model_runner_running() {
    let model = small_model();
    assert!(
        model.is_file(),
        "{} is missing: run `plumb models fetch 0.5b` (scripts/setup-test-deps.sh --tests does)",
        model.display()
    );
    let outside = Outside::new();
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let repo_arg = repo.path().display().to_string();
    let ticket = repo.path().join("BILL-412.md").display().to_string();
    let mut plumb = Started::new(
        home.path(),
        &[
            "fix",
            "--repo",
            &repo_arg,
            "--ticket",
            &ticket,
            "--model",
            "local:0.5b",
            "--json",
            "--sandbox",
            "none",
        ],
    );
    let pid = plumb.child.id();
    plumb.wait_for("the runner started", Duration::from_secs(120), || {
        !runners_of(pid).is_empty()
    });
    let runners = runners_of(pid);
    // Loaded and answering the first request: the model's turn is what a timeout interrupts.
    std::thread::sleep(Duration::from_secs(3));

    let output = plumb.kill();
    let until = Instant::now() + GRACE;
    let alive = |pid: &u32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        !stat.is_empty() && !state.starts_with('Z') && !state.starts_with('X')
    };
    while runners.iter().any(alive) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left: Vec<u32> = runners.iter().copied().filter(alive).collect();
    kill_leftovers(left.iter().copied());

    assert_eq!(left, Vec::<u32>::new(), "the model runner outlived plumb");
    outside.assert_untouched(home.path(), &output);
}
