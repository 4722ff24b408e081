//! Dev-only helpers for plumb's tests: temporary git repositories made from fixture folders, a
//! digest of every file of a tree (to prove a repository was left byte-identical), and a builder
//! for scripted-model files, and a mock HTTP model provider ([`mock_http`]). Test code only, so it
//! may panic with a clear message.

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod mock_http;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The repository's root folder (the cargo workspace).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// `examples/billing`, the BILL-412 scenario.
pub fn billing_example() -> PathBuf {
    workspace_root().join("examples").join("billing")
}

/// Copies `src` into `dst` (created), leaving out caches that test runs leave behind.
pub fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for entry in std::fs::read_dir(src).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let name_text = name.to_string_lossy();
        if name_text == "__pycache__" || name_text == ".pytest_cache" || name_text == ".ruff_cache"
        {
            continue;
        }
        let kind = entry.file_type().unwrap();
        let target = dst.join(&name);
        if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs git in `dir` with an isolated configuration; panics with git's output on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A temporary git repository holding a copy of `fixture`, committed once.
pub fn git_repo_from(fixture: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(fixture, dir.path());
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "fixture"]);
    dir
}

/// SHA-256 of every file under `root` (`.git` included), by relative path; symlinks by target.
pub fn tree_digest(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    digest_into(root, root, &mut out);
    out
}

fn digest_into(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            let target = std::fs::read_link(&path).unwrap();
            out.insert(rel, format!("link:{}", target.display()));
        } else if kind.is_dir() {
            digest_into(root, &path, out);
        } else {
            let bytes = std::fs::read(&path).unwrap();
            out.insert(rel, format!("{:x}", Sha256::digest(&bytes)));
        }
    }
}

/// Writes scripted-model files: one assistant turn per line.
#[derive(Debug, Default, Clone)]
pub struct Script {
    lines: Vec<String>,
}

impl Script {
    pub fn new() -> Self {
        Self::default()
    }

    /// A turn with one tool call, in the short form.
    pub fn tool(mut self, name: &str, args: Value) -> Self {
        self.lines
            .push(serde_json::json!({"tool": name, "args": args}).to_string());
        self
    }

    /// A turn with one tool call and other replies `sample_again` gives for the same request,
    /// each `(tool, args)`.
    pub fn tool_or(mut self, name: &str, args: Value, alternatives: &[(&str, Value)]) -> Self {
        let alternatives: Vec<Value> = alternatives
            .iter()
            .map(|(tool, args)| serde_json::json!({"tool": tool, "args": args}))
            .collect();
        self.lines.push(
            serde_json::json!({"tool": name, "args": args, "alternatives": alternatives})
                .to_string(),
        );
        self
    }

    /// A turn of text with no tool call.
    pub fn say(mut self, content: &str) -> Self {
        self.lines
            .push(serde_json::json!({"content": content}).to_string());
        self
    }

    /// The turns of an existing script file, then whatever is added.
    pub fn from_file(path: &Path) -> Self {
        let text = std::fs::read_to_string(path).unwrap();
        Self {
            lines: text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_string)
                .collect(),
        }
    }

    /// Keeps only the first `n` turns.
    pub fn take(mut self, n: usize) -> Self {
        self.lines.truncate(n);
        self
    }

    pub fn write(&self, path: &Path) {
        std::fs::write(path, self.lines.join("\n") + "\n").unwrap();
    }
}
