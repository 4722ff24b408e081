//! Which tests the scoring run runs and how it asks the runner to name each one, as SWE-bench's
//! eval scripts (`test_spec/python.py`, `make_eval_script_list_*`) do:
//!
//! - pytest: the test files the test patch touches (`get_test_directives`), and also the files
//!   the FAIL_TO_PASS and PASS_TO_PASS ids live in (a set written by hand may name tests of files
//!   the test patch does not touch; SWE-bench's own records never do, so for them this is the
//!   official selection), else the whole suite; with `-rA` (the short
//!   summary line of every test the parser reads) and `-p no:cacheprovider` (no cache written,
//!   none read from an earlier run), plus `-v`, so that a skipped test is named on its own line
//!   (`-rA` folds skips into `SKIPPED [n] file:line` without ids);
//! - cargo: the whole `cargo test` (libtest prints a line for every test);
//! - go: `-v` added (`--- PASS: Name` lines are only printed with it);
//! - jest `--verbose`, vitest `--reporter=verbose`, after `--` when a package manager runs them;
//! - `node --test`: `--test-reporter=tap` (node prints TAP only when it is not on a terminal);
//! - a command plumb does not recognise runs whole, with `PYTEST_ADDOPTS=-rA` in case pytest is
//!   what runs inside.
//!
//! Narrowing goes through `plumb_verify::narrow`, which knows where each runner takes its ids.

use std::path::Path;

use plumb_verify::{Runner, TestCommand};

use super::files;
use super::parse::LogFormat;
use crate::task::Task;

/// The scoring run's command and how to read its log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection {
    pub(crate) argv: Vec<String>,
    /// Extra variables for the run.
    pub(crate) env: Vec<(String, String)>,
    /// `None` for a runner SWE-bench has no log parser for here.
    pub(crate) format: Option<LogFormat>,
}

/// The command for `task`'s scoring run in `tree` (the patched tree, test patch applied).
pub(crate) fn select(command: &TestCommand, task: &Task, tree: &Path) -> Selection {
    let argv = &command.argv;
    let format = LogFormat::for_runner(command.runner);
    let (argv, env) = match command.runner {
        Runner::Pytest => {
            let mut argv = narrowed(command, &pytest_targets(task, tree));
            argv.extend(["-rA", "-v", "-p", "no:cacheprovider"].map(String::from));
            (argv, Vec::new())
        }
        Runner::Cargo | Runner::Nextest | Runner::Maven | Runner::Gradle => {
            (argv.clone(), Vec::new())
        }
        Runner::Go => (with_go_verbose(argv), Vec::new()),
        Runner::Jest => (with_runner_flag(argv, "--verbose"), Vec::new()),
        Runner::Vitest => (with_runner_flag(argv, "--reporter=verbose"), Vec::new()),
        Runner::Npm => (with_tap_reporter(argv), Vec::new()),
        Runner::Other => (
            argv.clone(),
            vec![(
                "PYTEST_ADDOPTS".to_owned(),
                "-rA -v -p no:cacheprovider".to_owned(),
            )],
        ),
    };
    Selection { argv, env, format }
}

/// The test files of the test patch that are in the tree, then the other files of the ids; none
/// (the whole suite) when there are neither.
fn pytest_targets(task: &Task, tree: &Path) -> Vec<String> {
    let exists = |path: &String| tree.join(path).symlink_metadata().is_ok();
    let mut targets: Vec<String> = task
        .test_patch
        .as_deref()
        .map(files::test_directives)
        .unwrap_or_default()
        .into_iter()
        .filter(exists)
        .collect();
    for id in task.fail_to_pass.iter().chain(&task.pass_to_pass) {
        let file = id.split("::").next().unwrap_or(id).to_owned();
        if exists(&file) && !targets.contains(&file) {
            targets.push(file);
        }
    }
    targets
}

/// `command` narrowed to `targets`; the whole command when there are none, or when they are
/// paths no runner takes (one starting with `-`), which the run's log then shows.
fn narrowed(command: &TestCommand, targets: &[String]) -> Vec<String> {
    plumb_verify::narrow(command, targets).unwrap_or_else(|_| command.argv.clone())
}

/// The program name of an argv word (`/usr/bin/go` → `go`).
fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `go test …` with `-v` right after `test`, unless it asks for it already.
fn with_go_verbose(argv: &[String]) -> Vec<String> {
    let mut argv = argv.to_vec();
    if argv.iter().any(|word| word == "-v" || word == "-v=true") {
        return argv;
    }
    let test = argv
        .iter()
        .position(|word| program(word) == "go")
        .and_then(|go| {
            argv.iter()
                .skip(go + 1)
                .position(|word| word == "test")
                .map(|at| go + 1 + at)
        });
    if let Some(test) = test {
        argv.insert(test + 1, "-v".to_owned());
    }
    argv
}

/// `flag` for jest or vitest: after `--` when a package manager runs the `test` script (`npm
/// test -- --verbose`), else at the end.
fn with_runner_flag(argv: &[String], flag: &str) -> Vec<String> {
    let mut argv = argv.to_vec();
    if argv.iter().any(|word| word == flag) {
        return argv;
    }
    let manager = argv
        .first()
        .is_some_and(|first| matches!(program(first), "npm" | "yarn" | "pnpm" | "bun"));
    if manager && !argv.iter().any(|word| word == "--") {
        argv.push("--".to_owned());
    }
    argv.push(flag.to_owned());
    argv
}

/// `node --test …` with `--test-reporter=tap` after `--test`, unless it names a reporter.
fn with_tap_reporter(argv: &[String]) -> Vec<String> {
    let mut argv = argv.to_vec();
    let has_reporter = argv.iter().any(|word| word.starts_with("--test-reporter"));
    let test = argv.iter().position(|word| word == "--test");
    if let (Some(test), false) = (test, has_reporter) {
        argv.insert(test + 1, "--test-reporter=tap".to_owned());
    }
    argv
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::task::{RepoSource, TaskOrigin};

    fn task(test_patch: Option<&str>, fail_to_pass: &[&str]) -> Task {
        Task {
            instance_id: "t-1".to_owned(),
            repo: RepoSource::Folder("/repo".into()),
            base_commit: None,
            problem_statement: String::new(),
            patch: None,
            test_patch: test_patch.map(str::to_owned),
            fail_to_pass: fail_to_pass.iter().map(|id| (*id).to_owned()).collect(),
            pass_to_pass: Vec::new(),
            setup_command: None,
            test_command: None,
            language: None,
            origin: TaskOrigin::default(),
        }
    }

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    fn command(text: &str) -> TestCommand {
        plumb_verify::parse_command(text).unwrap()
    }

    const TEST_PATCH: &str = "\
diff --git a/tests/test_x.py b/tests/test_x.py
--- a/tests/test_x.py
+++ b/tests/test_x.py
@@ -1 +1 @@
-a
+b
diff --git a/tests/fixtures.json b/tests/fixtures.json
--- a/tests/fixtures.json
+++ b/tests/fixtures.json
@@ -1 +1 @@
-a
+b
";

    /// The test patch's test files, then the ids' other files; the whole suite without either.
    #[test]
    fn pytest_runs_the_test_files_with_ra() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("tests")).unwrap();
        for file in ["test_x.py", "fixtures.json", "test_y.py"] {
            std::fs::write(tree.path().join("tests").join(file), "").unwrap();
        }
        let pytest = command("python -m pytest -q");
        let tasks = [
            task(Some(TEST_PATCH), &["tests/test_y.py::test_a"]),
            task(
                None,
                &["tests/test_y.py::test_a[x", "tests/test_y.py::test_b"],
            ),
            task(None, &["tests/gone.py::test_a"]),
        ];

        let actual: Vec<Selection> = tasks
            .iter()
            .map(|task| select(&pytest, task, tree.path()))
            .collect();

        let selection = |argv: &str| Selection {
            argv: words(argv),
            env: Vec::new(),
            format: Some(LogFormat::Pytest),
        };
        let expected = vec![
            selection(
                "python -m pytest -q tests/test_x.py tests/test_y.py -rA -v -p no:cacheprovider",
            ),
            selection("python -m pytest -q tests/test_y.py -rA -v -p no:cacheprovider"),
            selection("python -m pytest -q -rA -v -p no:cacheprovider"),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn other_runners_are_asked_to_name_each_test() {
        let tree = tempfile::tempdir().unwrap();
        let task = task(None, &["x"]);
        let commands = [
            "cargo test",
            "go test ./...",
            "go test -v ./...",
            "npx jest",
            "npm test",
            "npm test -- --ci",
            "npx vitest run",
            "node --test",
            "make test",
        ];

        let actual: Vec<Selection> = commands
            .iter()
            .map(|text| select(&command(text), &task, tree.path()))
            .collect();

        let plain = |argv: &str, format| Selection {
            argv: words(argv),
            env: Vec::new(),
            format: Some(format),
        };
        let expected = vec![
            plain("cargo test", LogFormat::Cargo),
            plain("go test -v ./...", LogFormat::Go),
            plain("go test -v ./...", LogFormat::Go),
            plain("npx jest --verbose", LogFormat::Jest),
            plain("npm test", LogFormat::Tap),
            plain("npm test -- --ci", LogFormat::Tap),
            plain("npx vitest run --reporter=verbose", LogFormat::Vitest),
            plain("node --test --test-reporter=tap", LogFormat::Tap),
            Selection {
                argv: words("make test"),
                env: vec![(
                    "PYTEST_ADDOPTS".to_owned(),
                    "-rA -v -p no:cacheprovider".to_owned(),
                )],
                format: Some(LogFormat::Pytest),
            },
        ];
        assert_eq!(actual, expected);
    }
}
