//! What every attack case shares: a folder outside the repository holding a secret with a
//! unique token (the thing an attacker wants in a prompt or out of the machine), a repository
//! made from the billing example plus the attacker's files, and the host-side checks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A folder outside every repository and run folder, holding `secret.txt` with a token no test
/// output could contain by chance. [`Outside::assert_untouched`] checks plumb wrote nothing
/// there and leaked the token nowhere it writes.
pub struct Outside {
    dir: tempfile::TempDir,
    token: String,
    digest: BTreeMap<String, String>,
}

impl Outside {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let token = format!(
            "PLUMB-CANARY-{}-{}",
            std::process::id(),
            fastrand_token(dir.path())
        );
        std::fs::write(dir.path().join("secret.txt"), format!("{token}\n")).unwrap();
        let digest = plumb_test_support::tree_digest(dir.path());
        Self { dir, token, digest }
    }

    /// The folder's path (absolute).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The secret file's absolute path: what a hostile link points at.
    pub fn secret(&self) -> PathBuf {
        self.dir.path().join("secret.txt")
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// Writes another file outside (its text should hold [`Outside::token`]) and returns its path.
    pub fn add(&mut self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        self.digest = plumb_test_support::tree_digest(self.dir.path());
        path
    }

    /// Makes a git repository `name` outside with one commit (its text holds the token) and
    /// returns that commit's id: what a gitfile in the workspace would point host git at.
    pub fn add_repo(&mut self, name: &str) -> String {
        let repo = self.dir.path().join(name);
        std::fs::create_dir(&repo).unwrap();
        std::fs::write(repo.join("secret.txt"), format!("{}\n", self.token)).unwrap();
        plumb_test_support::git(&repo, &["init", "-q", "-b", "main"]);
        plumb_test_support::git(&repo, &["add", "-A"]);
        plumb_test_support::git(&repo, &["commit", "-q", "-m", "outside"]);
        let head = plumb_test_support::git(&repo, &["rev-parse", "HEAD"]);
        self.digest = plumb_test_support::tree_digest(self.dir.path());
        head.trim().to_string()
    }

    /// The token is in none of `output`'s streams and in no file under `home` (the run's
    /// PLUMB_HOME: journal, report, patch, checks), and the outside folder is as it was.
    pub fn assert_untouched(&self, home: &Path, output: &Output) {
        for (stream, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
            assert!(
                !String::from_utf8_lossy(bytes).contains(&self.token),
                "the secret reached {stream}:\n{}",
                String::from_utf8_lossy(bytes)
            );
        }
        let mut leaks = Vec::new();
        files_holding(home, self.token.as_bytes(), &mut leaks);
        assert!(leaks.is_empty(), "the secret reached {leaks:?}");
        assert_eq!(
            plumb_test_support::tree_digest(self.dir.path()),
            self.digest,
            "something outside the repository changed"
        );
    }
}

/// `needle` (e.g. the commit id of a repository outside) is in none of `output`'s streams and in
/// no file under `home` (the run's PLUMB_HOME, the workspace copy included).
pub fn assert_nowhere(home: &Path, output: &Output, needle: &str) {
    for (stream, bytes) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        assert!(
            !String::from_utf8_lossy(bytes).contains(needle),
            "{needle} reached {stream}"
        );
    }
    let mut found = Vec::new();
    files_holding(home, needle.as_bytes(), &mut found);
    assert!(found.is_empty(), "{needle} reached {found:?}");
}

/// A token made from the folder's name (random per temp dir), so parallel tests differ.
fn fastrand_token(dir: &Path) -> String {
    dir.file_name()
        .map(|name| name.to_string_lossy().replace(['.', '-'], ""))
        .unwrap_or_default()
}

/// Every regular file under `dir` (not following links) whose bytes contain `needle`. The run
/// folder's workspace copy is left out: a link there is the attack itself, not a leak, and its
/// target is never followed here.
fn files_holding(dir: &Path, needle: &[u8], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            files_holding(&path, needle, out);
        } else if kind.is_file() {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            if bytes.windows(needle.len()).any(|w| w == needle) {
                out.push(path);
            }
        }
    }
}

/// A git repository holding the billing example plus `files` (path, text) and `links` (path,
/// target), committed once: what a stranger's repository hands plumb.
pub fn repo_with(files: &[(&str, &str)], links: &[(&str, &Path)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    plumb_test_support::copy_tree(&plumb_test_support::billing_example(), dir.path());
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    for (rel, target) in links {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // The link replaces a file of the example of that name (AGENTS.md is one).
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(target, path).unwrap();
    }
    plumb_test_support::git(dir.path(), &["init", "-q", "-b", "main"]);
    plumb_test_support::git(dir.path(), &["add", "-A"]);
    plumb_test_support::git(dir.path(), &["commit", "-q", "-m", "fixture"]);
    dir
}

/// `plumb fix` on `repo` (its BILL-412 ticket) with a script of `turns` and `extra` flags, with a
/// private PLUMB_HOME at `home`; killed and failed after `secs` seconds, so a harness that hangs
/// fails the test instead of hanging the suite.
pub fn fix_within(
    secs: u64,
    repo: &Path,
    home: &Path,
    script: plumb_test_support::Script,
    extra: &[&str],
) -> Output {
    let path = home.join("attack-script.jsonl");
    script.write(&path);
    let model = format!("script:{}", path.display());
    let repo_arg = repo.display().to_string();
    let ticket = repo.join("BILL-412.md").display().to_string();
    let mut child = crate::suite::common::plumb_command(home)
        .args([
            "fix", "--repo", &repo_arg, "--ticket", &ticket, "--model", &model, "--json",
        ])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(secs) {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!(
                "plumb hung: still running after {secs} s\nstderr: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// The full output of every tool call named `tool` in the run's journal, in order.
pub fn tool_outputs(report: &plumb_protocol::FinalReport, tool: &str) -> Vec<String> {
    crate::suite::common::journal_events(report)
        .into_iter()
        .filter_map(|event| match event {
            plumb_protocol::Event::ToolFinished { name, output, .. } if name == tool => {
                Some(output)
            }
            _ => None,
        })
        .collect()
}
