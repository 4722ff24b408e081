//! The scorer end to end under bubblewrap, on a small pytest repository made in a temporary
//! folder: the gold patch with the test patch resolves; an empty patch, a patch that skips the
//! new test (through a conftest the agent adds) and a patch that does not apply do not. The
//! PASS_TO_PASS ids include one cut at a space as SWE-bench's records write it
//! (`test_words[a` for `test_words[a b]`), so the cut form is checked against a real pytest log.

use std::fs;
use std::path::{Path, PathBuf};

use plumb_eval::result::{Score, TestGroup, TestResult, TestStatus};
use plumb_eval::score::{ScoreInput, TEST_LOG, score};
use plumb_eval::{RepoSource, Task, TaskOrigin};
use plumb_sandbox::{BwrapSandbox, Limits};
use pretty_assertions::assert_eq;
use tokio_util::sync::CancellationToken;

const CALC: &str = "def add(a, b):\n    return a - b\n";

const TESTS: &str = "\
import pytest

from calc import add


def test_zero():
    assert add(0, 0) == 0


@pytest.mark.parametrize(\"words\", [\"a b\", \"c\"])
def test_words(words):
    assert words
";

const GOLD_PATCH: &str = "\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
";

const TEST_PATCH: &str = "\
diff --git a/tests/test_calc.py b/tests/test_calc.py
--- a/tests/test_calc.py
+++ b/tests/test_calc.py
@@ -7,6 +7,10 @@ def test_zero():
     assert add(0, 0) == 0
 
 
+def test_add():
+    assert add(2, 3) == 5
+
+
 @pytest.mark.parametrize(\"words\", [\"a b\", \"c\"])
 def test_words(words):
     assert words
";

/// The fix, plus a conftest that skips the test that would show it wrong.
const SKIPPING_PATCH: &str = "\
diff --git a/conftest.py b/conftest.py
new file mode 100644
--- /dev/null
+++ b/conftest.py
@@ -0,0 +1,7 @@
+import pytest
+
+
+def pytest_collection_modifyitems(items):
+    for item in items:
+        if item.name == \"test_add\":
+            item.add_marker(pytest.mark.skip(reason=\"later\"))
";

const STALE_PATCH: &str = "\
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(x, y):
-    return x - y
+    return x + y
";

const F2P: &str = "tests/test_calc.py::test_add";
const P2P: [&str; 3] = [
    "tests/test_calc.py::test_zero",
    "tests/test_calc.py::test_words[a",
    "tests/test_calc.py::test_words[c]",
];

struct Fixture {
    _dir: tempfile::TempDir,
    base: PathBuf,
    attempt: PathBuf,
    task: Task,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix("score-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let base = dir.path().join("base");
        fs::create_dir_all(base.join("tests")).unwrap();
        fs::write(base.join("calc.py"), CALC).unwrap();
        fs::write(base.join("tests/test_calc.py"), TESTS).unwrap();
        let attempt = dir.path().join("attempt-1");
        fs::create_dir_all(&attempt).unwrap();
        let task = Task {
            instance_id: "calc-1".to_owned(),
            repo: RepoSource::Folder(base.clone()),
            base_commit: None,
            problem_statement: "add subtracts".to_owned(),
            patch: Some(GOLD_PATCH.to_owned()),
            test_patch: Some(TEST_PATCH.to_owned()),
            fail_to_pass: vec![F2P.to_owned()],
            pass_to_pass: P2P.iter().map(|id| (*id).to_owned()).collect(),
            setup_command: None,
            test_command: Some("python3 -m pytest".to_owned()),
            language: Some("python".to_owned()),
            origin: TaskOrigin::default(),
        };
        Fixture {
            _dir: dir,
            base,
            attempt,
            task,
        }
    }

    async fn score(&self, patch: &str) -> Score {
        self.score_with(patch, "python3 -m pytest").await
    }

    async fn score_with(&self, patch: &str, command: &str) -> Score {
        let sandbox = bwrap();
        let command = plumb_verify::parse_command(command).unwrap();
        score(ScoreInput {
            task: &self.task,
            base_tree: &self.base,
            patch,
            test_command: &command,
            attempt_dir: &self.attempt,
            sandbox: &sandbox,
            limits: Limits::default(),
            cancel: &CancellationToken::new(),
            setup_snapshot: None,
        })
        .await
        .unwrap()
    }

    fn log(&self) -> String {
        fs::read_to_string(self.attempt.join(TEST_LOG)).unwrap()
    }
}

/// Fails loudly where bubblewrap is missing: these tests never skip silently.
fn bwrap() -> BwrapSandbox {
    assert!(
        Path::new("/usr/bin/bwrap").exists(),
        "bubblewrap (bwrap) is not installed, and the scorer's suite needs it: install it with \
         `apt-get install bubblewrap` (.ci/run does)"
    );
    BwrapSandbox::new().unwrap()
}

fn tests(f2p: TestStatus, p2p: [TestStatus; 3]) -> Vec<TestResult> {
    let mut tests = vec![TestResult {
        id: F2P.to_owned(),
        group: TestGroup::FailToPass,
        status: f2p,
    }];
    tests.extend(P2P.iter().zip(p2p).map(|(id, status)| TestResult {
        id: (*id).to_owned(),
        group: TestGroup::PassToPass,
        status,
    }));
    tests
}

const PASSED: [TestStatus; 3] = [TestStatus::Passed; 3];

#[tokio::test]
async fn the_gold_patch_with_the_test_patch_resolves() {
    let fixture = Fixture::new();

    let actual = fixture.score(GOLD_PATCH).await;
    let summary_line = fixture
        .log()
        .lines()
        .any(|line| line == "PASSED tests/test_calc.py::test_words[a b]");

    let expected = Score {
        resolved: true,
        empty_patch: false,
        applied: true,
        reason: "resolved: the FAIL_TO_PASS test and the 3 PASS_TO_PASS tests passed".to_owned(),
        tests: tests(TestStatus::Passed, PASSED),
        log: TEST_LOG.to_owned(),
    };
    assert_eq!((actual, summary_line), (expected, true));
}

#[tokio::test]
async fn an_empty_patch_is_run_and_unresolved() {
    let fixture = Fixture::new();

    let actual = fixture.score("").await;

    let expected = Score {
        resolved: false,
        empty_patch: true,
        applied: true,
        reason: "the patch is empty; 1 of 1 FAIL_TO_PASS test did not pass: \
                 tests/test_calc.py::test_add failed"
            .to_owned(),
        tests: tests(TestStatus::Failed, PASSED),
        log: TEST_LOG.to_owned(),
    };
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn a_patch_that_skips_the_test_is_unresolved() {
    let fixture = Fixture::new();
    let patch = format!("{GOLD_PATCH}{SKIPPING_PATCH}");

    let actual = fixture.score(&patch).await;

    let expected = Score {
        resolved: false,
        empty_patch: false,
        applied: true,
        reason: "1 of 1 FAIL_TO_PASS test did not pass: tests/test_calc.py::test_add was skipped"
            .to_owned(),
        tests: tests(TestStatus::Skipped, PASSED),
        log: TEST_LOG.to_owned(),
    };
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn a_patch_that_does_not_apply_is_unresolved() {
    let fixture = Fixture::new();

    let actual = fixture.score(STALE_PATCH).await;

    let expected = Score {
        resolved: false,
        empty_patch: false,
        applied: false,
        reason: "the patch does not apply: patch failed: calc.py:1; calc.py: patch does not apply"
            .to_owned(),
        tests: Vec::new(),
        log: TEST_LOG.to_owned(),
    };
    assert_eq!(actual, expected);
}

/// The agent's edit of a file the test patch modifies is undone first, as SWE-bench's eval
/// script does with `git checkout`: here the edit weakens the test the test patch then adds to.
#[tokio::test]
async fn the_agents_edits_of_test_files_are_undone_before_the_test_patch() {
    let fixture = Fixture::new();
    let weakening = "\
diff --git a/tests/test_calc.py b/tests/test_calc.py
--- a/tests/test_calc.py
+++ b/tests/test_calc.py
@@ -1,4 +1,5 @@
 import pytest
+pytest.skip(\"weakened\", allow_module_level=True)
 
 from calc import add
 
";

    let actual = fixture.score(&format!("{GOLD_PATCH}{weakening}")).await;

    let expected = Score {
        resolved: true,
        empty_patch: false,
        applied: true,
        reason: "resolved: the FAIL_TO_PASS test and the 3 PASS_TO_PASS tests passed".to_owned(),
        tests: tests(TestStatus::Passed, PASSED),
        log: TEST_LOG.to_owned(),
    };
    assert_eq!(actual, expected);
}

/// A test command the sandbox cannot start is the task's problem, scored with its reason, never
/// an infrastructure error (which would be retried for ever).
#[tokio::test]
async fn a_test_command_that_cannot_start_is_a_score_with_its_reason() {
    let fixture = Fixture::new();

    let actual = fixture
        .score_with(GOLD_PATCH, "plumb-no-such-runner --all")
        .await;

    let expected = Score {
        resolved: false,
        empty_patch: false,
        applied: true,
        reason: "the test command could not start in the sandbox: could not start \
                 `plumb-no-such-runner`: not found; install it or change the command"
            .to_owned(),
        tests: tests(TestStatus::Missing, [TestStatus::Missing; 3]),
        log: TEST_LOG.to_owned(),
    };
    assert_eq!(actual, expected);
}

/// A wrapper whose program is missing inside (exit 127) says so before the tests it never ran.
#[tokio::test]
async fn exit_127_is_named_in_the_reason() {
    let fixture = Fixture::new();

    let actual = fixture
        .score_with(GOLD_PATCH, "sh -c 'plumb-no-such-runner tests'")
        .await;

    let expected = Score {
        resolved: false,
        empty_patch: false,
        applied: true,
        reason: "the test command could not start in the sandbox (exit 127: command not found); \
                 1 of 1 FAIL_TO_PASS test did not pass: tests/test_calc.py::test_add is missing \
                 from the log; 3 of 3 PASS_TO_PASS tests did not pass: \
                 tests/test_calc.py::test_zero is missing from the log, \
                 tests/test_calc.py::test_words[a is missing from the log, \
                 tests/test_calc.py::test_words[c] is missing from the log"
            .to_owned(),
        tests: tests(TestStatus::Missing, [TestStatus::Missing; 3]),
        log: TEST_LOG.to_owned(),
    };
    assert_eq!(actual, expected);
}
