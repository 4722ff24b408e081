//! Fixtures and helpers shared by the integration tests: sample sources, tree listings, and git run on
//! *test-owned* repositories with an isolated environment (never the developer's config).

mod bundle;
mod checkpoint;
mod confine;
mod copy_limits;
mod home;
mod home_faults;
mod intake;
mod patch;
mod prepare;
mod staging;
mod tree_archive;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Command;

use plumb_workspace::sha256_hex;

/// Writes `content` at `root/rel`, creating parent folders.
pub fn write(root: &Path, rel: &str, content: &str) {
    write_bytes(root, rel, content.as_bytes());
}

pub fn write_bytes(root: &Path, rel: &str, content: &[u8]) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

pub fn make_executable(root: &Path, rel: &str) {
    fs::set_permissions(root.join(rel), fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn link(root: &Path, rel: &str, target: impl AsRef<Path>) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    symlink(target, path).unwrap();
}

/// Runs git in `dir` on a test-owned repository, isolated from any user or system configuration.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs git against the shadow dir of a workspace (read-only inspection in tests).
pub fn shadow_git(git_dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["--git-dir".to_owned(), git_dir.display().to_string()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    git(git_dir, &all)
}

/// Every entry under `dir`, `.git` included: files as `mode mtime sha256`, links as `-> target`, folders as
/// `/ mtime`. Used to prove nothing in a folder was written (a file created and removed again still changes
/// its folder's mtime).
pub fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out, &|path| {
        let meta = fs::symlink_metadata(path).unwrap();
        format!(
            "{:o} {:?} {}",
            meta.permissions().mode(),
            meta.modified().unwrap(),
            sha256_hex(&fs::read(path).unwrap())
        )
    });
    for (rel, value) in out.iter_mut() {
        if let Some(folder) = rel.strip_suffix('/') {
            let meta = fs::symlink_metadata(dir.join(folder)).unwrap();
            *value = format!("/ {:?}", meta.modified().unwrap());
        }
    }
    let top = fs::symlink_metadata(dir).unwrap();
    out.insert(".".to_owned(), format!("/ {:?}", top.modified().unwrap()));
    out
}

/// Every entry under `dir` except `.git`: files as their text (with `[x]` when executable), links as
/// `-> target`, folders as `/`. Readable in a failing assertion.
pub fn listing(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out, &|path| {
        let meta = fs::symlink_metadata(path).unwrap();
        let text = String::from_utf8_lossy(&fs::read(path).unwrap()).into_owned();
        if meta.permissions().mode() & 0o111 != 0 {
            format!("[x] {text}")
        } else {
            text
        }
    });
    out.retain(|path, _| !path.split('/').any(|c| c == ".git"));
    out
}

fn walk(
    base: &Path,
    dir: &Path,
    out: &mut BTreeMap<String, String>,
    file: &dyn Fn(&Path) -> String,
) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let rel = path.strip_prefix(base).unwrap().display().to_string();
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            out.insert(
                rel,
                format!("-> {}", fs::read_link(&path).unwrap().display()),
            );
        } else if kind.is_dir() {
            out.insert(format!("{rel}/"), String::new());
            walk(base, &path, out, file);
        } else {
            out.insert(rel, file(&path));
        }
    }
}

/// Converts a listing literal into the map `listing` returns.
pub fn entries(items: &[(&str, &str)]) -> BTreeMap<String, String> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A git repository with history, ignore rules, uncommitted and untracked changes:
/// - committed: `.gitignore`, `README.md`, `src/app.py`, `src/util.py`, `run.sh` (executable),
///   `docs/.gitignore`, `link.txt -> README.md`;
/// - then `src/app.py` modified (uncommitted), `src/new.py` untracked, `.env.example` hidden and untracked;
/// - ignored: `build/out.o` (.gitignore), `debug.log` (*.log), `docs/draft.md` (docs/.gitignore),
///   `secret.key` (.git/info/exclude).
pub fn sample_repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    write(&repo, ".gitignore", "build/\n*.log\n");
    write(&repo, "README.md", "# sample\n");
    write(&repo, "src/app.py", "def answer():\n    return 41\n");
    write(&repo, "src/util.py", "def helper():\n    return 'help'\n");
    write(&repo, "run.sh", "#!/bin/sh\necho run\n");
    make_executable(&repo, "run.sh");
    write(&repo, "docs/.gitignore", "draft.md\n");
    write(&repo, "docs/guide.md", "guide\n");
    link(&repo, "link.txt", "README.md");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    write(&repo, "src/app.py", "def answer():\n    return 42\n");
    write(&repo, "src/new.py", "NEW = 1\n");
    write(&repo, ".env.example", "KEY=\n");
    write(&repo, "build/out.o", "object\n");
    write(&repo, "debug.log", "log\n");
    write(&repo, "docs/draft.md", "draft\n");
    write(&repo, "secret.key", "hunter2\n");
    fs::OpenOptions::new()
        .append(true)
        .open(repo.join(".git/info/exclude"))
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"secret.key\n"))
        .unwrap();
    repo
}

/// A plain folder (no git) with a few text files.
pub fn plain_source(dir: &Path) -> PathBuf {
    let src = dir.join("plain");
    write(&src, "a.py", "A = 1\n");
    write(&src, "b.py", "B = 2\n");
    write(&src, "pkg/c.py", "def c():\n    return 'c'\n");
    write(&src, "pkg/d.py", &"line\n".repeat(20));
    src
}
