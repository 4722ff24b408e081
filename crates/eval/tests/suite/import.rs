//! The HumanEvalFix importer on the development split in `data/humanevalpack/`: every language's
//! file gives 148 valid tasks whose repositories hold one commit, the base commit; on three fixed
//! tasks per language, run on the host with the language's real runner, the buggy tree with the
//! test patch fails the hidden test and the tree with the gold patch and the test patch passes it;
//! the test patch applies whatever the agent added at the end of the tree's files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use plumb_eval::import::{ImportError, Lang, TaskRecord, import_humanevalpack};
use plumb_eval::{RepoSource, Task};
use pretty_assertions::assert_eq;

fn data(lang: Lang) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/humanevalpack")
        .join(format!("{lang}.jsonl"))
}

/// git with no user or system configuration, its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?} in {}: {output:?}",
        dir.display()
    );
    String::from_utf8(output.stdout).unwrap()
}

fn read_tasks(tasks_file: &Path) -> Vec<Task> {
    fs::read_to_string(tasks_file)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(index, line)| {
            let record: TaskRecord = serde_json::from_str(line).unwrap();
            // Written as it reads: the same line again.
            assert_eq!(serde_json::to_string(&record).unwrap(), line);
            record.into_task(tasks_file, index + 1)
        })
        .collect()
}

/// What is wrong with one imported task (nothing, for a good one).
fn task_faults(task: &Task, lang: Lang) -> Vec<String> {
    let mut faults = Vec::new();
    let RepoSource::Git(repo) = &task.repo else {
        return vec![format!(
            "{}: repo is not a git repository",
            task.instance_id
        )];
    };
    let head = git(repo, &["rev-parse", "HEAD"]).trim().to_string();
    let count = git(repo, &["rev-list", "--count", "HEAD"])
        .trim()
        .to_string();
    let status = git(repo, &["status", "--porcelain"]);
    let tree = git(repo, &["ls-tree", "-r", "--name-only", "HEAD"]);
    let mut check = |ok: bool, what: &str| {
        if !ok {
            faults.push(format!("{}: {what}", task.instance_id));
        }
    };
    check(
        task.base_commit.as_deref() == Some(head.as_str()),
        "base_commit is not HEAD",
    );
    check(count == "1", "the repository has more than one commit");
    check(status.is_empty(), "the working tree is not clean");
    check(task.language.as_deref() == Some(lang.as_str()), "language");
    check(!task.fail_to_pass.is_empty(), "no FAIL_TO_PASS");
    check(task.pass_to_pass.is_empty(), "PASS_TO_PASS is not empty");
    check(task.problem_statement.contains("is buggy"), "ticket");
    let test_patch = task.test_patch.as_deref().unwrap_or_default();
    let patch = task.patch.as_deref().unwrap_or_default();
    check(
        test_patch.starts_with("diff --git a/"),
        "test_patch is not a diff",
    );
    check(patch.starts_with("diff --git a/"), "patch is not a diff");
    // The hidden test file is added by the test patch only: never in the tree.
    for added in test_patch
        .lines()
        .filter_map(|line| line.strip_prefix("+++ b/"))
    {
        if test_patch.contains(&format!("--- /dev/null\n+++ b/{added}")) {
            check(
                !tree.lines().any(|path| path == added),
                "the hidden test is in the tree",
            );
        }
    }
    check(
        !task.problem_statement.contains("diff --git"),
        "ticket holds a diff",
    );
    let work = tempfile::tempdir().unwrap();
    check(
        test_patch_applies_after_added_tests(task, work.path()),
        "the test patch does not apply after tests added at the end of the files",
    );
    faults
}

fn check_language(lang: Lang) {
    let out = tempfile::tempdir().unwrap();
    let summary = import_humanevalpack(&data(lang), lang, out.path()).unwrap();
    let tasks = read_tasks(&summary.tasks_file);
    let faults: Vec<String> = tasks
        .iter()
        .flat_map(|task| task_faults(task, lang))
        .collect();

    let actual = (summary.tasks, summary.problems, tasks.len(), faults);
    let expected = (148, Vec::<String>::new(), 148, Vec::<String>::new());
    assert_eq!(actual, expected);
}

#[test]
fn python_imports_148_valid_tasks() {
    check_language(Lang::Python);
}

#[test]
fn js_imports_148_valid_tasks() {
    check_language(Lang::Js);
}

#[test]
fn rust_imports_148_valid_tasks() {
    check_language(Lang::Rust);
}

#[test]
fn go_imports_148_valid_tasks() {
    check_language(Lang::Go);
}

#[test]
fn a_bad_line_is_named_and_the_others_import_the_same_every_time() {
    let temp = tempfile::tempdir().unwrap();
    let lines: Vec<String> = fs::read_to_string(data(Lang::Python))
        .unwrap()
        .lines()
        .take(2)
        .map(String::from)
        .collect();
    let mut broken: serde_json::Value = serde_json::from_str(&lines[1]).unwrap();
    broken["buggy_solution"] = serde_json::Value::Null;
    let input = temp.path().join("some.jsonl");
    fs::write(&input, format!("{}\n{broken}\n\n{}\n", lines[0], lines[1])).unwrap();

    let one = import_humanevalpack(&input, Lang::Python, &temp.path().join("one")).unwrap();
    let two = import_humanevalpack(&input, Lang::Python, &temp.path().join("two")).unwrap();
    let again = import_humanevalpack(&input, Lang::Python, &temp.path().join("one"));

    let actual = (
        one.tasks,
        one.problems,
        fs::read_to_string(&one.tasks_file).unwrap()
            == fs::read_to_string(&two.tasks_file).unwrap(),
        matches!(again, Err(ImportError::OutNotEmpty { .. })),
    );
    let expected = (
        2,
        vec![
            "some.jsonl line 2 (field `buggy_solution`): missing; HumanEvalPack records have it; \
             the line is left out"
                .to_string(),
        ],
        true,
        true,
    );
    assert_eq!(actual, expected);
}

/// The three tasks of each language run on the host: first, middle and last of the file.
const CHOSEN: [usize; 3] = [0, 73, 147];

/// How one id's outcome reads in a runner's log: passed, failed, or not there.
type ReadOutcome = fn(&str, &str) -> Option<bool>;

/// The test command for the host, and how one id's outcome reads in its log.
fn host_command(lang: Lang, work: &Path) -> (Command, ReadOutcome) {
    let command = |words: &[&str]| {
        let mut command = Command::new(words[0]);
        command.args(&words[1..]);
        command
            .env("CARGO_TARGET_DIR", work.join("cargo-target"))
            .env("GOCACHE", work.join("gocache"))
            .env("GOFLAGS", "-mod=vendor")
            .env("GOPROXY", "off")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        command
    };
    match lang {
        Lang::Python => (
            command(&["python3", "-m", "pytest", "-rA", "-p", "no:cacheprovider"]),
            |log, id| {
                let passed = log.lines().any(|line| line == format!("PASSED {id}"));
                let failed = log
                    .lines()
                    .any(|line| line.starts_with(&format!("FAILED {id}")));
                (passed || failed).then_some(passed)
            },
        ),
        Lang::Js => (
            command(&["node", "--test", "--test-reporter=tap"]),
            |log, id| {
                log.lines().find_map(|line| {
                    let (head, name) = line.split_once(" - ")?;
                    (name == id).then(|| head.starts_with("ok "))
                })
            },
        ),
        Lang::Rust => (command(&["cargo", "test"]), |log, id| {
            log.lines().find_map(|line| {
                let rest = line.strip_prefix(&format!("test {id} ... "))?;
                Some(rest == "ok")
            })
        }),
        Lang::Go => (command(&["go", "test", "-v", "./..."]), |log, id| {
            log.lines().find_map(|line| {
                let line = line.trim_start();
                if line.starts_with(&format!("--- PASS: {id} ")) {
                    Some(true)
                } else if line.starts_with(&format!("--- FAIL: {id} ")) {
                    Some(false)
                } else {
                    None
                }
            })
        }),
    }
}

/// The task's tree at its base commit, written to a fresh `tree` folder (without `.git`).
fn check_out(task: &Task, tree: &Path) {
    let RepoSource::Git(repo) = &task.repo else {
        panic!("not a git task");
    };
    if tree.exists() {
        fs::remove_dir_all(tree).unwrap();
    }
    fs::create_dir_all(tree).unwrap();
    let archive = Command::new("git")
        .current_dir(repo)
        .args(["archive", task.base_commit.as_deref().unwrap()])
        .output()
        .unwrap();
    let mut tar = Command::new("tar")
        .args(["-x", "-C"])
        .arg(tree)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(tar.stdin.as_mut().unwrap(), &archive.stdout).unwrap();
    drop(tar.stdin.take());
    assert!(tar.wait().unwrap().success());
}

/// Every file under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// Whether the test patch still applies when, besides the gold fix, the agent added lines at the
/// end of every file of the tree — where it adds its own test (a Rust tree's `mod tests` ends
/// its `src/lib.rs`). The score must not depend on where the agent put its test.
fn test_patch_applies_after_added_tests(task: &Task, work: &Path) -> bool {
    let tree = work.join("tree");
    check_out(task, &tree);
    let patch_file = work.join("fix.diff");
    fs::write(&patch_file, task.patch.as_deref().unwrap()).unwrap();
    git(&tree, &["apply", patch_file.to_str().unwrap()]);
    for path in files_under(&tree) {
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let Some((body, last)) = text.trim_end_matches('\n').rsplit_once('\n') else {
            continue;
        };
        fs::write(
            &path,
            format!("{body}\nadded by the agent\n{last}\nand after\n"),
        )
        .unwrap();
    }
    let test_patch = work.join("test.diff");
    fs::write(&test_patch, task.test_patch.as_deref().unwrap()).unwrap();
    Command::new("git")
        .current_dir(&tree)
        .args(["apply", "--check", test_patch.to_str().unwrap()])
        .output()
        .unwrap()
        .status
        .success()
}

/// The hidden tests' outcomes ("passed"/"failed"/"missing") in a fresh tree at the base commit
/// with `patches` applied.
fn hidden_outcomes(task: &Task, lang: Lang, work: &Path, patches: &[&str]) -> Vec<String> {
    let tree = work.join("tree");
    check_out(task, &tree);
    for patch in patches {
        let patch_file = work.join("change.diff");
        fs::write(&patch_file, patch).unwrap();
        git(&tree, &["apply", patch_file.to_str().unwrap()]);
    }
    let (mut command, read) = host_command(lang, work);
    let output = command.current_dir(&tree).output().unwrap_or_else(|error| {
        panic!(
            "cannot run the {lang} tests on this host ({error}): scripts/setup-test-deps.sh \
             installs what they need"
        )
    });
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    task.fail_to_pass
        .iter()
        .map(|id| match read(&log, id) {
            Some(true) => "passed".to_string(),
            Some(false) => "failed".to_string(),
            None => format!("missing from: {log}"),
        })
        .collect()
}

fn check_on_host(lang: Lang) {
    let temp = tempfile::tempdir().unwrap();
    let lines: Vec<String> = fs::read_to_string(data(lang))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let input = temp.path().join("chosen.jsonl");
    let chosen: Vec<&str> = CHOSEN.iter().map(|&index| lines[index].as_str()).collect();
    fs::write(&input, chosen.join("\n")).unwrap();
    let summary = import_humanevalpack(&input, lang, &temp.path().join("out")).unwrap();
    let tasks = read_tasks(&summary.tasks_file);

    let actual: Vec<(String, Vec<String>, Vec<String>)> = tasks
        .iter()
        .map(|task| {
            let test_patch = task.test_patch.as_deref().unwrap();
            let patch = task.patch.as_deref().unwrap();
            (
                task.instance_id.clone(),
                hidden_outcomes(task, lang, temp.path(), &[test_patch]),
                hidden_outcomes(task, lang, temp.path(), &[patch, test_patch]),
            )
        })
        .collect();
    let expected: Vec<(String, Vec<String>, Vec<String>)> = tasks
        .iter()
        .map(|task| {
            let each = |word: &str| vec![word.to_string(); task.fail_to_pass.len()];
            (task.instance_id.clone(), each("failed"), each("passed"))
        })
        .collect();
    assert_eq!(actual.len(), 3);
    assert_eq!(actual, expected);
}

#[test]
fn python_hidden_tests_fail_on_the_bug_and_pass_with_the_fix() {
    check_on_host(Lang::Python);
}

#[test]
fn js_hidden_tests_fail_on_the_bug_and_pass_with_the_fix() {
    check_on_host(Lang::Js);
}

#[test]
fn rust_hidden_tests_fail_on_the_bug_and_pass_with_the_fix() {
    check_on_host(Lang::Rust);
}

#[test]
fn go_hidden_tests_fail_on_the_bug_and_pass_with_the_fix() {
    check_on_host(Lang::Go);
}
