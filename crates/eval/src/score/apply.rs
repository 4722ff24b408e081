//! `git apply` of one patch to the scoring tree, as SWE-bench's harness applies the agent's
//! patch and its eval script the test patch.
//!
//! git runs outside any repository and with no configuration: `GIT_DIR` names a folder that
//! does not exist (so a `.git` in the tree, or a repository around the attempt folder, is never
//! found: its config could point `core.worktree` elsewhere), the environment is cleared to
//! `PATH`, an empty `HOME`, `GIT_CONFIG_NOSYSTEM` and `GIT_CONFIG_GLOBAL=/dev/null`, hooks and
//! fsmonitor are off, as plumb-workspace's `git.rs` runs it. Outside a repository `git apply`
//! still refuses paths with `..` and paths beyond a symbolic link, so a patch cannot write
//! outside the tree. The patch is read from a file beside the tree, kept for the record.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

/// `git apply` never needs long; a patch of many megabytes takes seconds.
const TIME_LIMIT: Duration = Duration::from_secs(120);
/// Most bytes of git's messages kept for the reason.
const MAX_MESSAGE: u64 = 16 * 1024;

/// Whether the patch applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Applied {
    Yes,
    /// git's own words on why not, trimmed.
    No(String),
}

/// The folders git runs with: `home` (empty, created here) and `no_git_dir` (never created).
pub(crate) struct GitPlaces<'a> {
    pub(crate) home: &'a Path,
    pub(crate) no_git_dir: &'a Path,
}

/// Applies the patch in `patch_file` to `tree`. `Err` is the machine's fault (git missing, a
/// timeout, a failed read), never the patch's.
pub(crate) async fn apply(
    tree: &Path,
    patch_file: &Path,
    places: &GitPlaces<'_>,
) -> Result<Applied, String> {
    git_apply(tree, patch_file, places, &[]).await
}

/// Whether the whole patch in `patch_file` is already in `tree` (`git apply --reverse --check`):
/// an agent (or the oracle) that wrote the test patch's own change into a file the test patch
/// touches and that is not put back first (a source file holding its unit tests).
pub(crate) async fn already_applied(
    tree: &Path,
    patch_file: &Path,
    places: &GitPlaces<'_>,
) -> Result<bool, String> {
    let checked = git_apply(tree, patch_file, places, &["--reverse", "--check"]).await?;
    Ok(checked == Applied::Yes)
}

async fn git_apply(
    tree: &Path,
    patch_file: &Path,
    places: &GitPlaces<'_>,
    extra: &[&str],
) -> Result<Applied, String> {
    tokio::fs::create_dir_all(places.home)
        .await
        .map_err(|err| format!("could not create {}: {err}", places.home.display()))?;
    let path = std::env::var_os("PATH")
        .filter(|path| !path.is_empty())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut command = std::process::Command::new("git");
    command
        .env_clear()
        .env("PATH", path)
        .env("HOME", places.home)
        .env("GIT_DIR", places.no_git_dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ])
        .args(["-c", "core.autocrlf=false", "-c", "core.symlinks=true"])
        .args(["apply", "--verbose"])
        .args(extra)
        .arg("--")
        .arg(patch_file)
        .current_dir(tree)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // A killed plumb must not leave git running on (issue 20).
    plumb_sandbox::die_with_parent(&mut command);
    let mut command = Command::from(command);
    command.process_group(0).kill_on_drop(true);
    let mut child = command.spawn().map_err(|err| {
        format!("could not start git to apply the patch (is git installed and on PATH?): {err}")
    })?;
    let mut stderr = child.stderr.take();
    let run = async {
        let mut message = Vec::new();
        if let Some(stderr) = stderr.as_mut() {
            // Read to the end (git stops on a full pipe) but keep only the first part.
            let mut kept = stderr.take(MAX_MESSAGE);
            kept.read_to_end(&mut message).await.ok();
            tokio::io::copy(stderr, &mut tokio::io::sink()).await.ok();
        }
        let status = child.wait().await;
        (status, message)
    };
    let (status, message) = tokio::time::timeout(TIME_LIMIT, run).await.map_err(|_| {
        format!(
            "git apply did not finish in {} s in {}",
            TIME_LIMIT.as_secs(),
            tree.display()
        )
    })?;
    let status = status.map_err(|err| format!("could not wait for git apply: {err}"))?;
    if status.success() {
        return Ok(Applied::Yes);
    }
    let message = String::from_utf8_lossy(&message);
    Ok(Applied::No(rejection(&message)))
}

/// git's `error:` lines (what a person needs), else its whole message; on one line.
fn rejection(message: &str) -> String {
    let errors: Vec<&str> = message
        .lines()
        .filter_map(|line| {
            line.strip_prefix("error: ")
                .or_else(|| line.strip_prefix("fatal: "))
        })
        .map(str::trim)
        // "while searching for:" is followed by the patch's own lines, not git's words.
        .filter(|line| !line.ends_with(':'))
        .collect();
    let text = if errors.is_empty() {
        message.split_whitespace().collect::<Vec<_>>().join(" ")
    } else {
        errors.join("; ")
    };
    if text.is_empty() {
        "git apply refused it without a message".to_owned()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_reason_is_gits_error_lines() {
        let message = "\
Checking patch src/a.py...
error: while searching for:
error: patch failed: src/a.py:1
error: src/a.py: patch does not apply
";

        let actual = rejection(message);

        let expected = "patch failed: src/a.py:1; src/a.py: patch does not apply";
        assert_eq!(actual, expected);
    }
}
