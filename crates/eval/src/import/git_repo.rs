//! The one-commit repository an imported task starts from, and the diffs (gold patch, test patch)
//! against it.
//!
//! git runs with a cleared environment: `PATH`, `HOME` set to the repository's own git folder (it
//! holds no configuration), `GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`, no templates
//! (so no sample hooks), `core.hooksPath=/dev/null`, `LC_ALL=C`, and a fixed author, committer
//! and date, so that equal input gives equal commit ids on every machine. A diff is made by
//! writing the changed files, staging them and asking for `git diff --cached`; the working tree is
//! then reset to the commit, so the repository is left as it was made.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::ImportError;

/// A file of a tree: its path relative to the root (with `/`) and its text.
pub type File = (String, String);

const IDENTITY: &[(&str, &str)] = &[
    ("GIT_AUTHOR_NAME", "plumb eval import"),
    ("GIT_AUTHOR_EMAIL", "plumb@localhost"),
    ("GIT_COMMITTER_NAME", "plumb eval import"),
    ("GIT_COMMITTER_EMAIL", "plumb@localhost"),
    ("GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z"),
    ("GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z"),
];

/// A repository made by [`Repo::create`].
#[derive(Debug)]
pub struct Repo {
    dir: PathBuf,
    commit: String,
}

impl Repo {
    /// Makes `dir` (which must not exist yet) a git working copy holding `files` in one commit
    /// on `main` with `message`.
    pub fn create(dir: &Path, files: &[File], message: &str) -> Result<Repo, ImportError> {
        fs::create_dir_all(dir).map_err(|source| ImportError::Write {
            path: dir.to_path_buf(),
            source,
        })?;
        git(dir, &["init", "-q", "--template=", "-b", "main"])?;
        write_files(dir, files)?;
        git(dir, &["add", "-A"])?;
        git(
            dir,
            &[
                "commit",
                "-q",
                "--no-gpg-sign",
                "--no-verify",
                "-m",
                message,
            ],
        )?;
        let commit = git(dir, &["rev-parse", "HEAD"])?.trim().to_string();
        Ok(Repo {
            dir: dir.to_path_buf(),
            commit,
        })
    }

    /// The commit's full id.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    /// A unified diff (`git apply`-able, `a/` and `b/` prefixes) from the commit to the commit's
    /// tree with `files` written over it (new files or replaced ones). The repository is left at
    /// the commit, its working tree clean.
    pub fn diff(&self, files: &[File]) -> Result<String, ImportError> {
        write_files(&self.dir, files)?;
        let diff = git(&self.dir, &["add", "-A"]).and_then(|_| {
            git(
                &self.dir,
                &[
                    "diff",
                    "--cached",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-renames",
                    "--src-prefix=a/",
                    "--dst-prefix=b/",
                    "HEAD",
                ],
            )
        });
        // Reset even when the diff failed, so no half-written tree is left behind.
        git(&self.dir, &["reset", "-q", "--hard", "HEAD"])?;
        diff
    }
}

fn write_files(root: &Path, files: &[File]) -> Result<(), ImportError> {
    for (path, text) in files {
        let path = root.join(path);
        let write = |path: &Path| -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)?;
            }
            fs::write(path, text)
        };
        write(&path).map_err(|source| ImportError::Write { path, source })?;
    }
    Ok(())
}

/// Runs git in `dir` as the module header says, and returns its stdout.
fn git(dir: &Path, args: &[&str]) -> Result<String, ImportError> {
    let failed = |message: String| ImportError::Git {
        command: args.first().copied().unwrap_or_default().to_string(),
        dir: dir.to_path_buf(),
        message,
    };
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.join(".git"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .envs(IDENTITY.iter().copied())
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args);
    plumb_sandbox::die_with_parent(&mut cmd);
    let output = cmd.output().map_err(|error| failed(error.to_string()))?;
    if !output.status.success() {
        return Err(failed(format!(
            "{}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    String::from_utf8(output.stdout).map_err(|_| failed("its output is not UTF-8".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<File> {
        list.iter()
            .map(|(path, text)| (path.to_string(), text.to_string()))
            .collect()
    }

    #[test]
    fn equal_trees_give_equal_commits_and_diffs_leave_the_tree_as_it_was() {
        let temp = tempfile::tempdir().unwrap();
        let tree = files(&[
            ("a.py", "x = 1\n"),
            ("tests/test_a.py", "def test(): pass\n"),
        ]);
        let one = Repo::create(&temp.path().join("one"), &tree, "task").unwrap();
        let two = Repo::create(&temp.path().join("two"), &tree, "task").unwrap();

        let diff = one
            .diff(&files(&[("a.py", "x = 2\n"), ("new.txt", "n\n")]))
            .unwrap();
        let status = git(&temp.path().join("one"), &["status", "--porcelain"]).unwrap();

        let actual = (
            one.commit() == two.commit(),
            diff.contains("-x = 1\n+x = 2\n"),
            status,
        );
        let expected = (true, true, String::new());
        assert_eq!(actual, expected);
        assert!(diff.contains("+++ b/new.txt"), "{diff}");
    }
}
