//! The trees the ladder's test steps run in, and how files are put into them.
//!
//! A fix must pass on tests the agent could not reconfigure: a new conftest.py whose hook
//! reports every test as passed, a `-p plugin` added to pytest.ini or pyproject.toml, a jest
//! setting, are left out when the ladder judges (they stay a tamper flag for a person). So the
//! reproduce tree (the baseline source plus only the test changes) and, when the agent changed
//! any test configuration, the pass and full-suite tree (a copy of the patched tree) get the
//! baseline's test configuration: each file `plumb_verify::baseline_config` names is written as
//! it says (the baseline's file, the agent's with the baseline's test part, or removed). When no
//! test configuration changed, the pass and full suite run in the workspace itself, as before.
//!
//! Every write here is into a tree the ladder built from git (`checks/` in the run folder, on the
//! host, outside the sandbox), which may hold links a repository committed or the agent made: a
//! file is never written through a link. A link or file where a folder must be is replaced by a
//! folder, the file's old entry is removed first and the new one created afresh; from the
//! workspace a link is copied as a link and anything but a regular file (a FIFO) is skipped.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Component, Path};

use plumb_verify::baseline_config::{JudgedFile, baseline_test_config};
use plumb_verify::tamper::{ChangeStatus, FileChange, TestSetupFiles, is_test_file};
use plumb_workspace::Tree;

/// One test configuration file the judged trees hold as the baseline's configuration has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Restore {
    pub path: String,
    /// The text to write; `None` when the file must be absent (the agent added it).
    pub text: Option<String>,
    /// Whether the baseline had the file at all (for the evidence: "left out" or "as at the
    /// baseline").
    pub existed: bool,
}

/// The test configuration files of `changes` to put back as the baseline had them (`setup`: the
/// files the jest and vitest configurations run around the tests).
pub(crate) fn restores(changes: &[FileChange], setup: &TestSetupFiles) -> Vec<Restore> {
    let mut out = Vec::new();
    let mut add = |path: &str, before: Option<&String>, after: Option<&String>| {
        let judged = baseline_test_config(
            path,
            before.map(String::as_str),
            after.map(String::as_str),
            setup,
        );
        let text = match judged {
            JudgedFile::Keep => return,
            JudgedFile::Write(text) => Some(text),
            JudgedFile::Remove => None,
        };
        out.push(Restore {
            path: path.to_string(),
            text,
            existed: before.is_some(),
        });
    };
    for change in changes {
        match &change.status {
            ChangeStatus::Added | ChangeStatus::Modified | ChangeStatus::Deleted => {
                add(&change.path, change.before.as_ref(), change.after.as_ref());
            }
            // Judged as the old file deleted and the new one added, as the tamper scan does.
            ChangeStatus::Renamed { from } => {
                add(from, change.before.as_ref(), None);
                add(&change.path, None, change.after.as_ref());
            }
        }
    }
    out
}

/// The clause the evidence of a step run with `restores` ends with: "with the baseline's test
/// configuration (your tests/conftest.py left out, pytest.ini as at the baseline)".
pub(crate) fn describe(restores: &[Restore]) -> String {
    let mut left_out = Vec::new();
    let mut as_before = Vec::new();
    for restore in restores {
        if restore.existed {
            as_before.push(restore.path.as_str());
        } else {
            left_out.push(restore.path.as_str());
        }
    }
    let mut parts = Vec::new();
    if !left_out.is_empty() {
        parts.push(format!("your {} left out", short_list(&left_out)));
    }
    if !as_before.is_empty() {
        parts.push(format!("{} as at the baseline", short_list(&as_before)));
    }
    format!(
        "run with the baseline's test configuration ({}): a fix must pass on tests it did not reconfigure",
        parts.join(", ")
    )
}

/// At most five paths, then how many more.
fn short_list(paths: &[&str]) -> String {
    let shown: Vec<&str> = paths.iter().take(5).copied().collect();
    match paths.len().saturating_sub(5) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// Writes each of `restores` into the tree at `dest`.
pub(crate) fn apply(dest: &Path, restores: &[Restore]) -> io::Result<()> {
    for restore in restores {
        match &restore.text {
            Some(text) => put(dest, &restore.path, Source::Text(text))?,
            None => put(dest, &restore.path, Source::Absent)?,
        }
    }
    Ok(())
}

/// Copies the changed test files from `root` (the workspace) into `dest` (a baseline tree) and
/// removes deleted ones.
pub(crate) fn overlay_test_changes(
    root: &Path,
    dest: &Path,
    changes: &[FileChange],
) -> io::Result<()> {
    let tree = Tree::new(root)?;
    for change in changes.iter().filter(|c| is_test_file(&c.path)) {
        if let ChangeStatus::Renamed { from } = &change.status {
            put(dest, from, Source::Absent)?;
        }
        match change.status {
            ChangeStatus::Deleted => put(dest, &change.path, Source::Absent)?,
            ChangeStatus::Added | ChangeStatus::Modified | ChangeStatus::Renamed { .. } => {
                put(dest, &change.path, Source::Copy(&tree, &change.path))?;
            }
        }
    }
    Ok(())
}

/// Writes each (path, text) into `dest`, never through a link: the source files whose test part
/// the reproduce tree takes from the change (`inline_tests`).
pub(crate) fn overlay_texts(dest: &Path, files: &[(String, String)]) -> io::Result<()> {
    for (path, text) in files {
        put(dest, path, Source::Text(text))?;
    }
    Ok(())
}

/// What [`put`] puts at a path.
enum Source<'a> {
    /// The entry at this path of the tree (a regular file's bytes and mode, read through the
    /// confined reader, or a link as a link).
    Copy(&'a Tree, &'a str),
    Text(&'a str),
    /// Nothing: whatever is there is removed.
    Absent,
}

/// Puts `source` at `rel` (relative, from git) under `dest`, never writing through a link.
fn put(dest: &Path, rel: &str, source: Source<'_>) -> io::Result<()> {
    let rel = Path::new(rel);
    let parts: Vec<&std::ffi::OsStr> = rel
        .components()
        .map(|part| match part {
            Component::Normal(name) => Ok(name),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a plain relative path", rel.display()),
            )),
        })
        .collect::<io::Result<_>>()?;
    let Some((name, folders)) = parts.split_last() else {
        return Ok(());
    };
    let mut at = dest.to_path_buf();
    for folder in folders {
        at.push(folder);
        match fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => {
                if matches!(source, Source::Absent) {
                    // Nothing under a non-folder to remove.
                    return Ok(());
                }
                fs::remove_file(&at)?;
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if matches!(source, Source::Absent) {
                    return Ok(());
                }
            }
            Err(err) => return Err(err),
        }
        fs::create_dir(&at)?;
    }
    at.push(name);
    remove_entry(&at)?;
    match source {
        Source::Absent => Ok(()),
        Source::Text(text) => create_new(&at, text.as_bytes(), None),
        Source::Copy(tree, rel) => {
            let from = tree.root().join(rel);
            let meta = match fs::symlink_metadata(&from) {
                Ok(meta) => meta,
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(err) => return Err(err),
            };
            if meta.file_type().is_symlink() {
                symlink(fs::read_link(&from)?, &at)
            } else if meta.is_file() {
                let bytes = tree
                    .read_entry(&from, plumb_tools::MAX_READ_BYTES)
                    .map_err(io::Error::other)?;
                create_new(&at, &bytes, Some(meta.permissions().mode()))
            } else {
                Ok(())
            }
        }
    }
}

/// Removes whatever is at `path` (a link itself, never its target), if anything.
fn remove_entry(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
    }
}

/// Creates `path`, which must not exist (so not a link either), with `bytes`.
fn create_new(path: &Path, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(bytes)?;
    if let Some(mode) = mode {
        file.set_permissions(fs::Permissions::from_mode(mode & 0o777))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn change(
        status: ChangeStatus,
        path: &str,
        before: Option<&str>,
        after: Option<&str>,
    ) -> FileChange {
        FileChange {
            status,
            path: path.to_string(),
            before: before.map(String::from),
            after: after.map(String::from),
            before_mode: None,
            after_mode: None,
        }
    }

    #[test]
    fn the_agents_test_configuration_is_put_back_and_described() {
        let changes = [
            change(
                ChangeStatus::Added,
                "tests/conftest.py",
                None,
                Some("def pytest_runtest_makereport(): pass\n"),
            ),
            change(
                ChangeStatus::Modified,
                "pytest.ini",
                Some("[pytest]\n"),
                Some("[pytest]\naddopts = -p evil\n"),
            ),
            change(
                ChangeStatus::Modified,
                "billing/tax.py",
                Some("a = 1\n"),
                Some("a = 2\n"),
            ),
            change(
                ChangeStatus::Renamed {
                    from: "conftest.py".to_string(),
                },
                "sub/conftest.py",
                Some("import pytest\n"),
                Some("import pytest\n"),
            ),
        ];
        let actual = restores(&changes, &TestSetupFiles::default());
        let expected = vec![
            Restore {
                path: "tests/conftest.py".to_string(),
                text: None,
                existed: false,
            },
            Restore {
                path: "pytest.ini".to_string(),
                text: Some("[pytest]\n".to_string()),
                existed: true,
            },
            Restore {
                path: "conftest.py".to_string(),
                text: Some("import pytest\n".to_string()),
                existed: true,
            },
            Restore {
                path: "sub/conftest.py".to_string(),
                text: None,
                existed: false,
            },
        ];
        assert_eq!(actual, expected);
        assert_eq!(
            describe(&actual),
            "run with the baseline's test configuration (your tests/conftest.py, sub/conftest.py left out, pytest.ini, conftest.py as at the baseline): a fix must pass on tests it did not reconfigure"
        );
    }

    #[test]
    fn files_are_never_written_through_links() {
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        fs::write(&secret, "secret\n").unwrap();
        let dest = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        // A baseline tree holding links out, as a stranger's repository can commit them.
        fs::create_dir(dest.path().join("tests")).unwrap();
        symlink(&secret, dest.path().join("tests/test_notes.py")).unwrap();
        symlink(outside.path(), dest.path().join("sub")).unwrap();
        symlink(&secret, dest.path().join("pytest.ini")).unwrap();
        // The workspace: the agent replaced the link with a file, and added a link of its own.
        fs::create_dir(root.path().join("tests")).unwrap();
        fs::write(
            root.path().join("tests/test_notes.py"),
            "def test_x(): pass\n",
        )
        .unwrap();
        symlink(&secret, root.path().join("tests/test_link.py")).unwrap();
        let changes = [
            change(ChangeStatus::Modified, "tests/test_notes.py", None, None),
            change(ChangeStatus::Added, "tests/test_link.py", None, None),
        ];

        overlay_test_changes(root.path(), dest.path(), &changes).unwrap();
        apply(
            dest.path(),
            &[
                Restore {
                    path: "sub/conftest.py".to_string(),
                    text: Some("x = 1\n".to_string()),
                    existed: true,
                },
                Restore {
                    path: "pytest.ini".to_string(),
                    text: Some("[pytest]\n".to_string()),
                    existed: true,
                },
            ],
        )
        .unwrap();

        let kind = |rel: &str| {
            let meta = fs::symlink_metadata(dest.path().join(rel)).unwrap();
            if meta.file_type().is_symlink() {
                "link"
            } else if meta.is_dir() {
                "folder"
            } else {
                "file"
            }
        };
        let actual = (
            fs::read_to_string(&secret).unwrap(),
            fs::read_dir(outside.path()).unwrap().count(),
            [
                kind("tests/test_notes.py"),
                kind("tests/test_link.py"),
                kind("sub"),
                kind("pytest.ini"),
            ],
            fs::read_to_string(dest.path().join("tests/test_notes.py")).unwrap(),
            fs::read_to_string(dest.path().join("sub/conftest.py")).unwrap(),
        );
        let expected = (
            "secret\n".to_string(),
            1,
            ["file", "link", "folder", "file"],
            "def test_x(): pass\n".to_string(),
            "x = 1\n".to_string(),
        );
        assert_eq!(actual, expected);
    }
}
