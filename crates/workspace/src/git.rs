//! Running the git CLI against the shadow repository, and nothing else.
//!
//! Invariants of every invocation:
//! - `--git-dir` (the shadow dir, outside the copy) and `--work-tree` (the copy) are passed explicitly, so
//!   git never discovers a repository, least of all the user's.
//! - The environment is cleared, then rebuilt from `PATH`, an empty private `HOME`, `GIT_CONFIG_NOSYSTEM`,
//!   `GIT_CONFIG_GLOBAL=/dev/null`, `LC_ALL=C` and a fixed author, committer and date, so that the same tree
//!   and the same sequence of checkpoints give the same commit ids on any machine.
//! - [`SAFETY_CONFIG`] switches off everything that could make git run a program or rewrite content (hooks,
//!   fsmonitor, gpg, auto-gc, line-ending conversion).
//! - Arguments are separate strings built by this crate from validated values; no shell is involved.
//! - Each child runs in its own process group with a time limit (the sooner of [`TIME_LIMIT`] and
//!   the run's deadline, when it has one); on timeout the whole group is killed, and any lock file
//!   it left in the shadow dir removed (only plumb's git, one call at a time, works there).
//!   Output is read on two threads and capped.
//! - Git never reads the copy: staging is plumb's own walk (`stage/`), diffs are between trees, and
//!   a rollback checks out into a fresh folder. The work tree argument only matters to
//!   `checkout-index`, which writes into a new, empty folder.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::WorkspaceError;

/// Configuration passed with `-c` on every call. Command-line config outranks anything a repository config
/// could say, and the shadow config is ours anyway; this is belt and braces against a `.git` the agent writes.
const SAFETY_CONFIG: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.quotepath=off",
    "core.filemode=true",
    "core.symlinks=true",
    "core.ignorecase=false",
    "core.excludesFile=/dev/null",
    "core.attributesFile=/dev/null",
    "commit.gpgsign=false",
    "tag.gpgsign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "advice.detachedHead=false",
    "init.defaultBranch=plumb",
    // Submodules never: no gitlink is ever staged, and no `.gitmodules` is ever read as config.
    "submodule.recurse=false",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "fetch.recurseSubmodules=false",
];

/// The fixed identity and date of every shadow commit; replay relies on the baseline being reproducible.
const IDENTITY: &[(&str, &str)] = &[
    ("GIT_AUTHOR_NAME", "plumb"),
    ("GIT_AUTHOR_EMAIL", "plumb@localhost"),
    ("GIT_COMMITTER_NAME", "plumb"),
    ("GIT_COMMITTER_EMAIL", "plumb@localhost"),
    ("GIT_AUTHOR_DATE", "1970-01-01T00:00:00Z"),
    ("GIT_COMMITTER_DATE", "1970-01-01T00:00:00Z"),
];

/// Time limit of one git call. Generous: `add -A` on a large fresh copy hashes every file.
const TIME_LIMIT: Duration = Duration::from_secs(300);
/// Most stdout bytes kept from one call (the patch text is the largest output).
pub(crate) const MAX_STDOUT: usize = 64 * 1024 * 1024;
/// Most stderr bytes kept from one call.
const MAX_STDERR: usize = 64 * 1024;

/// A handle on the shadow repository: where it is, which tree it tracks, and the isolated environment.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    git_dir: PathBuf,
    work_tree: PathBuf,
    home: PathBuf,
    path_env: OsString,
    /// No call runs past this (the run's wall-clock deadline, or the finish's grace after it).
    deadline: Option<Instant>,
}

/// What a successful call printed.
pub(crate) struct GitOutput {
    pub(crate) stdout: Vec<u8>,
}

impl GitOutput {
    /// Stdout as UTF-8 with the trailing newline removed.
    pub(crate) fn text(&self, command: &str) -> Result<&str, WorkspaceError> {
        std::str::from_utf8(&self.stdout)
            .map(|s| s.trim_end_matches('\n'))
            .map_err(|_| WorkspaceError::GitOutput {
                command: command.to_owned(),
                detail: "output is not UTF-8".to_owned(),
            })
    }
}

/// Failure modes that callers sometimes treat specially.
pub(crate) enum GitFailure {
    /// Stdout passed [`MAX_STDOUT`].
    TooLarge {
        command: String,
    },
    Other(WorkspaceError),
}

impl From<GitFailure> for WorkspaceError {
    fn from(failure: GitFailure) -> Self {
        match failure {
            GitFailure::TooLarge { command } => WorkspaceError::GitOutput {
                command,
                detail: format!("more than {MAX_STDOUT} bytes"),
            },
            GitFailure::Other(err) => err,
        }
    }
}

impl Git {
    pub(crate) fn new(git_dir: PathBuf, work_tree: PathBuf, home: PathBuf) -> Git {
        let path_env = std::env::var_os("PATH")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
        Git {
            git_dir,
            work_tree,
            home,
            path_env,
            deadline: None,
        }
    }

    /// Calls from now on end by `deadline` (`None`: only [`TIME_LIMIT`] bounds them).
    pub(crate) fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// `git init --bare` of the shadow dir, without templates (so no sample hooks and no default exclude).
    pub(crate) fn init(&self) -> Result<(), WorkspaceError> {
        let mut cmd = self.base_command();
        cmd.args([
            "init",
            "--quiet",
            "--bare",
            "--template=",
            "--initial-branch=plumb",
            // plumb writes the objects itself (`stage/objects.rs`), in SHA-1's format.
            "--object-format=sha1",
        ]);
        // The shadow dir is absolute (prepare canonicalises the run directory), so it cannot read as an option.
        cmd.arg(&self.git_dir);
        self.execute(cmd, "init --bare", None)
            .map_err(WorkspaceError::from)?;
        Ok(())
    }

    /// Runs `git --git-dir=… --work-tree=… <args>` and returns its stdout; a non-zero exit is an error.
    pub(crate) fn run(&self, args: &[&str]) -> Result<GitOutput, WorkspaceError> {
        self.run_inner(args, None).map_err(WorkspaceError::from)
    }

    /// Like [`Git::run`] with `input` written to git's stdin (commit messages travel this way, never as an
    /// argument).
    pub(crate) fn run_with_input(
        &self,
        args: &[&str],
        input: &[u8],
    ) -> Result<GitOutput, WorkspaceError> {
        self.run_inner(args, Some(input))
            .map_err(WorkspaceError::from)
    }

    /// Like [`Git::run`], but reports oversized output as [`GitFailure::TooLarge`] so the caller can name it.
    pub(crate) fn run_capped(&self, args: &[&str]) -> Result<GitOutput, GitFailure> {
        self.run_inner(args, None)
    }

    /// The same repository with another work tree (for writing a commit's tree into a second folder).
    pub(crate) fn with_work_tree(&self, work_tree: PathBuf) -> Git {
        Git {
            work_tree,
            ..self.clone()
        }
    }

    /// Like [`Git::run`] with a private index file, so the shadow repository's own index is untouched.
    pub(crate) fn run_with_index(
        &self,
        args: &[&str],
        index: &Path,
    ) -> Result<GitOutput, WorkspaceError> {
        let mut cmd = self.repo_command(args);
        cmd.env("GIT_INDEX_FILE", index);
        self.execute(cmd, &args.join(" "), None)
            .map_err(WorkspaceError::from)
    }

    /// `git <args>` in the work tree with no repository given: git finds the one the folder is the
    /// top of, if any, and never looks above it (`GIT_CEILING_DIRECTORIES`). `env` adds variables
    /// (an index file, the identity of a commit); `input` goes to stdin.
    pub(crate) fn run_in_folder(
        &self,
        args: &[&str],
        env: &[(&str, &OsStr)],
        input: Option<&[u8]>,
    ) -> Result<GitOutput, WorkspaceError> {
        let mut cmd = self.base_command();
        cmd.args(args).current_dir(&self.work_tree);
        if let Some(parent) = self.work_tree.parent() {
            cmd.env("GIT_CEILING_DIRECTORIES", parent);
        }
        cmd.envs(env.iter().map(|(key, value)| (*key, *value)));
        self.execute(cmd, &args.join(" "), input)
            .map_err(WorkspaceError::from)
    }

    /// Like [`Git::run_with_input`] with more environment variables (a commit's author, an index).
    pub(crate) fn run_with_env(
        &self,
        args: &[&str],
        env: &[(&str, &OsStr)],
        input: Option<&[u8]>,
    ) -> Result<GitOutput, WorkspaceError> {
        let mut cmd = self.repo_command(args);
        cmd.envs(env.iter().map(|(key, value)| (*key, *value)));
        self.execute(cmd, &args.join(" "), input)
            .map_err(WorkspaceError::from)
    }

    fn run_inner(&self, args: &[&str], input: Option<&[u8]>) -> Result<GitOutput, GitFailure> {
        let cmd = self.repo_command(args);
        self.execute(cmd, &args.join(" "), input)
    }

    /// `git --git-dir=… --work-tree=… <args>` in the work tree, with the isolated environment.
    fn repo_command(&self, args: &[&str]) -> Command {
        let mut cmd = self.base_command();
        let mut git_dir = OsString::from("--git-dir=");
        git_dir.push(self.git_dir.as_os_str());
        let mut work_tree = OsString::from("--work-tree=");
        work_tree.push(self.work_tree.as_os_str());
        cmd.arg(git_dir).arg(work_tree).args(args);
        cmd.current_dir(&self.work_tree);
        cmd
    }

    /// `git` with the isolated environment and the safety config, but no repository arguments yet.
    fn base_command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.env_clear()
            .env("PATH", &self.path_env)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("LC_ALL", "C")
            .envs(IDENTITY.iter().copied());
        cmd.arg("--no-pager");
        for setting in SAFETY_CONFIG {
            cmd.arg("-c").arg(setting);
        }
        cmd.current_dir(&self.home);
        cmd
    }

    fn execute(
        &self,
        mut cmd: Command,
        command: &str,
        input: Option<&[u8]>,
    ) -> Result<GitOutput, GitFailure> {
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
        let (limit, by_deadline) = match self.deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(GitFailure::Other(WorkspaceError::OutOfTime {
                        doing: format!("about to run git {}", subcommand(command)),
                    }));
                }
                (left.min(TIME_LIMIT), left < TIME_LIMIT)
            }
            None => (TIME_LIMIT, false),
        };
        // A killed plumb must not leave git running on (issue 20).
        plumb_sandbox::die_with_parent(&mut cmd);
        let mut child = cmd.spawn().map_err(|source| {
            GitFailure::Other(if source.kind() == io::ErrorKind::NotFound {
                WorkspaceError::GitMissing { source }
            } else {
                WorkspaceError::io("start git in", self.work_tree.clone(), source)
            })
        })?;

        if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
            // Inputs are short commit messages, far below a pipe buffer, so this cannot block on git's output.
            // A write error means git exited early; its status and stderr tell why.
            let _ = stdin.write_all(bytes);
        }
        let stdout = child
            .stdout
            .take()
            .map(|pipe| thread::spawn(move || read_capped(pipe, MAX_STDOUT)));
        let stderr = child
            .stderr
            .take()
            .map(|pipe| thread::spawn(move || read_capped(pipe, MAX_STDERR)));

        let status = wait_with_limit(&mut child, limit).map_err(|source| {
            GitFailure::Other(WorkspaceError::io(
                "wait for git in",
                self.work_tree.clone(),
                source,
            ))
        })?;
        let stdout = join_reader(stdout, command)?;
        let stderr = join_reader(stderr, command)?;

        let Some(status) = status else {
            clear_locks(&self.git_dir);
            return Err(GitFailure::Other(if by_deadline {
                WorkspaceError::OutOfTime {
                    doing: format!("running git {}", subcommand(command)),
                }
            } else {
                WorkspaceError::GitTimeout {
                    command: command.to_owned(),
                    seconds: TIME_LIMIT.as_secs(),
                }
            }));
        };
        if !status.success() {
            return Err(GitFailure::Other(WorkspaceError::Git {
                command: command.to_owned(),
                status: status.to_string(),
                stderr: String::from_utf8_lossy(&stderr.bytes).trim().to_owned(),
            }));
        }
        if stdout.truncated {
            return Err(GitFailure::TooLarge {
                command: command.to_owned(),
            });
        }
        Ok(GitOutput {
            stdout: stdout.bytes,
        })
    }
}

/// The git command's name (`diff`, `commit-tree`) without its arguments, for a sentence.
fn subcommand(command: &str) -> &str {
    command.split(' ').next().unwrap_or(command)
}

/// Removes the lock files a killed git may have left in `git_dir`: the index's, HEAD's, the
/// packed refs', the config's and every ref's. Only plumb's own git works in the shadow dir, one
/// call at a time, so a lock there with no call running is stale by construction.
pub(crate) fn clear_locks(git_dir: &Path) {
    for name in [
        "index.lock",
        "HEAD.lock",
        "packed-refs.lock",
        "config.lock",
        "shallow.lock",
    ] {
        let _ = std::fs::remove_file(git_dir.join(name));
    }
    let mut folders = vec![git_dir.join("refs")];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                folders.push(entry.path());
            } else if entry.file_name().as_encoded_bytes().ends_with(b".lock") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

struct Captured {
    bytes: Vec<u8>,
    truncated: bool,
}

/// Reads a pipe to its end, keeping at most `cap` bytes (the rest is drained so the child never blocks).
fn read_capped(mut pipe: impl Read, cap: usize) -> io::Result<Captured> {
    let mut bytes = Vec::new();
    let mut truncated = false;
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let room = cap.saturating_sub(bytes.len());
        if n > room {
            truncated = true;
        }
        bytes.extend_from_slice(buf.get(..n.min(room)).unwrap_or_default());
    }
    Ok(Captured { bytes, truncated })
}

fn join_reader(
    handle: Option<thread::JoinHandle<io::Result<Captured>>>,
    command: &str,
) -> Result<Captured, GitFailure> {
    let Some(handle) = handle else {
        return Ok(Captured {
            bytes: Vec::new(),
            truncated: false,
        });
    };
    match handle.join() {
        Ok(Ok(captured)) => Ok(captured),
        Ok(Err(err)) => Err(GitFailure::Other(WorkspaceError::GitOutput {
            command: command.to_owned(),
            detail: format!("reading its output failed: {err}"),
        })),
        Err(_) => Err(GitFailure::Other(WorkspaceError::GitOutput {
            command: command.to_owned(),
            detail: "the output reader stopped unexpectedly".to_owned(),
        })),
    }
}

/// Waits for `child` at most `limit`; on timeout kills its process group and returns `None`.
/// Polls with a short, growing sleep: git calls here mostly take a few milliseconds.
fn wait_with_limit(child: &mut Child, limit: Duration) -> io::Result<Option<ExitStatus>> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(50);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if start.elapsed() >= limit {
            kill_group(child);
            let _ = child.wait();
            return Ok(None);
        }
        thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// Kills the child's process group (it was started with `process_group(0)`, so the group id is its pid),
/// then the child itself in case the group kill was refused.
fn kill_group(child: &mut Child) {
    let raw = i32::try_from(child.id()).unwrap_or(0);
    // Never signal group 1 or 0: those would reach processes that are not ours.
    if raw > 1
        && let Some(pid) = rustix::process::Pid::from_raw(raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn classify(err: &WorkspaceError) -> (String, bool) {
        let debug = format!("{err:?}");
        let name = debug
            .split([' ', '{'])
            .next()
            .unwrap_or_default()
            .to_owned();
        (name, err.is_infra())
    }

    #[test]
    fn missing_git_and_failing_git_are_infrastructure() {
        let tmp = tempfile::TempDir::new().unwrap();
        let mut no_git = Git::new(
            tmp.path().join("g"),
            tmp.path().to_path_buf(),
            tmp.path().to_path_buf(),
        );
        no_git.path_env = tmp.path().join("empty-bin").into_os_string();
        let real = Git::new(
            tmp.path().join("g"),
            tmp.path().to_path_buf(),
            tmp.path().to_path_buf(),
        );

        let actual = vec![
            classify(&no_git.run(&["version"]).err().unwrap()),
            classify(&real.run(&["rev-parse", "--verify", "HEAD"]).err().unwrap()),
        ];

        let expected = vec![("GitMissing".to_owned(), true), ("Git".to_owned(), true)];
        assert_eq!(actual, expected);
    }

    #[test]
    fn git_runs_with_an_isolated_environment() {
        let tmp = tempfile::TempDir::new().unwrap();
        let git = Git::new(
            tmp.path().join("g"),
            tmp.path().to_path_buf(),
            tmp.path().to_path_buf(),
        );
        git.init().unwrap();

        let out = git.run(&["var", "GIT_AUTHOR_IDENT"]).unwrap();
        let actual = out.text("var").unwrap().to_owned();

        assert_eq!(actual, "plumb <plumb@localhost> 0 +0000");
    }

    #[test]
    fn past_the_deadline_no_git_starts_and_the_locks_a_killed_one_left_are_cleared() {
        let tmp = tempfile::TempDir::new().unwrap();
        let git_dir = tmp.path().join("g");
        let mut git = Git::new(
            git_dir.clone(),
            tmp.path().to_path_buf(),
            tmp.path().to_path_buf(),
        );
        git.init().unwrap();
        git.set_deadline(Some(Instant::now()));
        let late = git.run(&["version"]).err().unwrap();
        std::fs::write(git_dir.join("index.lock"), "").unwrap();
        std::fs::create_dir_all(git_dir.join("refs/plumb")).unwrap();
        std::fs::write(git_dir.join("refs/plumb/attempt.lock"), "").unwrap();
        std::fs::write(git_dir.join("refs/plumb/kept"), "").unwrap();

        clear_locks(&git_dir);
        let actual = (
            late.to_string(),
            late.is_budget(),
            git_dir.join("index.lock").exists(),
            git_dir.join("refs/plumb/attempt.lock").exists(),
            git_dir.join("refs/plumb/kept").exists(),
        );

        let expected = (
            "the wall-clock budget ran out while plumb was about to run git version".to_string(),
            true,
            false,
            false,
            true,
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_child_past_its_limit_is_killed_with_its_group() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30"])
            .process_group(0)
            .spawn()
            .unwrap();
        let group = child.id();

        let start = Instant::now();
        let status = wait_with_limit(&mut child, Duration::from_millis(100)).unwrap();
        // Killed processes may linger as zombies until init reaps them; only live ones count.
        let group_gone = (0..100).any(|_| {
            thread::sleep(Duration::from_millis(10));
            let ps = Command::new("ps")
                .args(["-eo", "pgid=,stat="])
                .output()
                .unwrap();
            !String::from_utf8_lossy(&ps.stdout).lines().any(|line| {
                let mut cols = line.split_whitespace();
                cols.next() == Some(group.to_string().as_str())
                    && !cols.next().unwrap_or_default().starts_with('Z')
            })
        });
        let actual = (
            status.is_none(),
            group_gone,
            start.elapsed() < Duration::from_secs(10),
        );

        assert_eq!(actual, (true, true, true));
    }
}
