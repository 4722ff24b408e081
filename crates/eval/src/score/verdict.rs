//! The verdict on one attempt, as SWE-bench's `get_eval_tests_report` and
//! `get_resolution_status` reach it: each FAIL_TO_PASS and PASS_TO_PASS id looked up, exactly as
//! written, in the ids the log parser read; resolved only when every one passed.
//!
//! Two choices are stricter than the current official grading, as issue 21 asks: a skipped
//! PASS_TO_PASS test is a failure (the official `test_maintained` lets it pass, so a patch that
//! skips a test it breaks would be resolved), and a task with no FAIL_TO_PASS test is never
//! resolved (the official `compute_fail_to_pass` counts an empty list as all passed).

use crate::result::{TestGroup, TestResult, TestStatus};
use crate::task::Task;

use super::parse::StatusMap;

/// How many failing ids a reason names per group before "and N more".
const SHOWN_IDS: usize = 3;

/// The outcome of the verdict: whether it is resolved, each named test, and the sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) resolved: bool,
    pub(crate) tests: Vec<TestResult>,
    pub(crate) reason: String,
}

/// `id`'s status in `found`. TAP writes `ok 1 - name` and the official parser keeps `- name`;
/// a task that names the test `name` (plumb's importer) means the same test, and so does a task
/// naming `- name` for a log that has `name`.
fn lookup(found: &StatusMap, id: &str) -> TestStatus {
    let bare = id.strip_prefix("- ").unwrap_or(id);
    [id.to_owned(), format!("- {bare}"), bare.to_owned()]
        .iter()
        .find_map(|candidate| found.get(candidate.as_str()).copied())
        .unwrap_or(TestStatus::Missing)
}

/// Looks up every test the task names in `found`; a test the log does not name is `Missing`.
pub(crate) fn judge(task: &Task, found: &StatusMap) -> Verdict {
    let groups = [
        (TestGroup::FailToPass, &task.fail_to_pass),
        (TestGroup::PassToPass, &task.pass_to_pass),
    ];
    let tests: Vec<TestResult> = groups
        .iter()
        .flat_map(|(group, ids)| {
            ids.iter().map(|id| TestResult {
                id: id.clone(),
                group: *group,
                status: lookup(found, id),
            })
        })
        .collect();
    if task.fail_to_pass.is_empty() {
        return Verdict {
            resolved: false,
            tests,
            reason: "the task names no FAIL_TO_PASS tests, so no run can show it fixed; \
                     add the tests the fix makes pass to FAIL_TO_PASS"
                .to_owned(),
        };
    }
    let failing: Vec<String> = [TestGroup::FailToPass, TestGroup::PassToPass]
        .into_iter()
        .filter_map(|group| failing_sentence(group, &tests))
        .collect();
    let resolved = failing.is_empty();
    let reason = if resolved {
        format!(
            "resolved: {} passed",
            counted(task.fail_to_pass.len(), task.pass_to_pass.len())
        )
    } else {
        failing.join("; ")
    };
    Verdict {
        resolved,
        tests,
        reason,
    }
}

/// "the FAIL_TO_PASS test and the 3 PASS_TO_PASS tests".
fn counted(fail_to_pass: usize, pass_to_pass: usize) -> String {
    let group = |count: usize, name: &str| match count {
        1 => format!("the {name} test"),
        _ => format!("the {count} {name} tests"),
    };
    if pass_to_pass == 0 {
        group(fail_to_pass, "FAIL_TO_PASS")
    } else {
        format!(
            "{} and {}",
            group(fail_to_pass, "FAIL_TO_PASS"),
            group(pass_to_pass, "PASS_TO_PASS")
        )
    }
}

/// "2 of 3 FAIL_TO_PASS tests did not pass: a failed, b is missing from the log", or `None`
/// when every test of the group passed.
fn failing_sentence(group: TestGroup, tests: &[TestResult]) -> Option<String> {
    let of_group: Vec<&TestResult> = tests.iter().filter(|test| test.group == group).collect();
    let failing: Vec<&&TestResult> = of_group
        .iter()
        .filter(|test| test.status != TestStatus::Passed)
        .collect();
    if failing.is_empty() {
        return None;
    }
    let mut named: Vec<String> = failing
        .iter()
        .take(SHOWN_IDS)
        .map(|test| {
            let id = plumb_verify::shown_id(&test.id);
            match test.status {
                TestStatus::Failed => format!("{id} failed"),
                TestStatus::Error => format!("{id} errored"),
                TestStatus::Skipped => format!("{id} was skipped"),
                TestStatus::Missing => format!("{id} is missing from the log"),
                TestStatus::Passed => format!("{id} passed"),
            }
        })
        .collect();
    if failing.len() > SHOWN_IDS {
        named.push(format!("and {} more", failing.len() - SHOWN_IDS));
    }
    let name = match group {
        TestGroup::FailToPass => "FAIL_TO_PASS",
        TestGroup::PassToPass => "PASS_TO_PASS",
    };
    let noun = if of_group.len() == 1 { "test" } else { "tests" };
    Some(format!(
        "{} of {} {name} {noun} did not pass: {}",
        failing.len(),
        of_group.len(),
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::task::{RepoSource, TaskOrigin};

    fn task(fail_to_pass: &[&str], pass_to_pass: &[&str]) -> Task {
        Task {
            instance_id: "t-1".to_owned(),
            repo: RepoSource::Folder("/repo".into()),
            base_commit: None,
            problem_statement: String::new(),
            patch: None,
            test_patch: None,
            fail_to_pass: fail_to_pass.iter().map(|id| (*id).to_owned()).collect(),
            pass_to_pass: pass_to_pass.iter().map(|id| (*id).to_owned()).collect(),
            setup_command: None,
            test_command: None,
            language: None,
            origin: TaskOrigin::default(),
        }
    }

    fn found(entries: &[(&str, TestStatus)]) -> StatusMap {
        entries
            .iter()
            .map(|(id, status)| ((*id).to_owned(), *status))
            .collect()
    }

    fn result(id: &str, group: TestGroup, status: TestStatus) -> TestResult {
        TestResult {
            id: id.to_owned(),
            group,
            status,
        }
    }

    #[test]
    fn every_named_test_passing_resolves() {
        let task = task(&["t::a"], &["t::b", "t::c"]);
        let found = found(&[
            ("t::a", TestStatus::Passed),
            ("t::b", TestStatus::Passed),
            ("t::c", TestStatus::Passed),
            ("t::other", TestStatus::Failed),
        ]);

        let actual = judge(&task, &found);

        let expected = Verdict {
            resolved: true,
            tests: vec![
                result("t::a", TestGroup::FailToPass, TestStatus::Passed),
                result("t::b", TestGroup::PassToPass, TestStatus::Passed),
                result("t::c", TestGroup::PassToPass, TestStatus::Passed),
            ],
            reason: "resolved: the FAIL_TO_PASS test and the 2 PASS_TO_PASS tests passed"
                .to_owned(),
        };
        assert_eq!(actual, expected);
    }

    /// Skipped, missing and errored are failures, in both groups; the reason names the first
    /// few of each group.
    #[test]
    fn anything_but_a_pass_is_a_failure() {
        let task = task(&["f1", "f2", "f3", "f4", "f5"], &["p1", "p2"]);
        let found = found(&[
            ("f1", TestStatus::Failed),
            ("f2", TestStatus::Skipped),
            ("f3", TestStatus::Error),
            ("f5", TestStatus::Passed),
            ("p1", TestStatus::Skipped),
            ("p2", TestStatus::Passed),
        ]);

        let actual = judge(&task, &found);

        let expected = Verdict {
            resolved: false,
            tests: vec![
                result("f1", TestGroup::FailToPass, TestStatus::Failed),
                result("f2", TestGroup::FailToPass, TestStatus::Skipped),
                result("f3", TestGroup::FailToPass, TestStatus::Error),
                result("f4", TestGroup::FailToPass, TestStatus::Missing),
                result("f5", TestGroup::FailToPass, TestStatus::Passed),
                result("p1", TestGroup::PassToPass, TestStatus::Skipped),
                result("p2", TestGroup::PassToPass, TestStatus::Passed),
            ],
            reason: "4 of 5 FAIL_TO_PASS tests did not pass: f1 failed, f2 was skipped, \
                     f3 errored, and 1 more; 1 of 2 PASS_TO_PASS tests did not pass: p1 was \
                     skipped"
                .to_owned(),
        };
        assert_eq!(actual, expected);
    }

    /// Ids are looked up as the records write them: the cut form of marshmallow-1359 matches
    /// what the pytest parser reads from `PASSED tests/test_x.py::test_y[a b]`.
    #[test]
    fn ids_match_in_the_cut_form_the_records_hold() {
        let task = task(
            &["tests/test_x.py::test_y[a"],
            &["tests/test_x.py::test_y[a b]"],
        );
        let found = super::super::parse::parse(
            super::super::parse::LogFormat::Pytest,
            "PASSED tests/test_x.py::test_y[a b]\n",
        );

        let actual = judge(&task, &found);

        let expected = Verdict {
            resolved: false,
            tests: vec![
                result(
                    "tests/test_x.py::test_y[a",
                    TestGroup::FailToPass,
                    TestStatus::Passed,
                ),
                result(
                    "tests/test_x.py::test_y[a b]",
                    TestGroup::PassToPass,
                    TestStatus::Missing,
                ),
            ],
            reason: "1 of 1 PASS_TO_PASS test did not pass: tests/test_x.py::test_y[a b] is \
                     missing from the log"
                .to_owned(),
        };
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_task_without_fail_to_pass_tests_is_never_resolved() {
        let task = task(&[], &["p1"]);
        let found = found(&[("p1", TestStatus::Passed)]);

        let actual = judge(&task, &found);

        let expected = Verdict {
            resolved: false,
            tests: vec![result("p1", TestGroup::PassToPass, TestStatus::Passed)],
            reason: "the task names no FAIL_TO_PASS tests, so no run can show it fixed; add the \
                     tests the fix makes pass to FAIL_TO_PASS"
                .to_owned(),
        };
        assert_eq!(actual, expected);
    }

    /// marshmallow-1359 as published: its record (in `data/swebench/lite-dev.jsonl`) against the
    /// log of the official command (`pytest -rA tests/test_fields.py`) on its base tree with the
    /// gold and test patches (pytest 9.2, Python 3.11). 8 of its PASS_TO_PASS ids are cut at a
    /// space (`test_make_error[required-Missing`); every id is found, so the gold patch resolves.
    #[test]
    fn marshmallow_1359_gold_resolves_from_the_official_log() {
        let records = include_str!("../../../../data/swebench/lite-dev.jsonl");
        let record: serde_json::Value = records
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .find(|record| record["instance_id"] == "marshmallow-code__marshmallow-1359")
            .unwrap();
        let ids = |field: &str| -> Vec<String> {
            serde_json::from_str(record[field].as_str().unwrap()).unwrap()
        };
        let mut task = task(&[], &[]);
        task.fail_to_pass = ids("FAIL_TO_PASS");
        task.pass_to_pass = ids("PASS_TO_PASS");
        let cut = task
            .pass_to_pass
            .iter()
            .filter(|id| id.contains('[') && !id.ends_with(']'))
            .count();
        let log = include_str!("fixtures/marshmallow-1359-test_fields.log");
        let found = super::super::parse::parse(super::super::parse::LogFormat::Pytest, log);

        let actual = judge(&task, &found);

        let expected = (
            true,
            "resolved: the FAIL_TO_PASS test and the 76 PASS_TO_PASS tests passed".to_owned(),
            8,
        );
        assert_eq!((actual.resolved, actual.reason, cut), expected);
    }
}

#[cfg(test)]
mod tap_names {
    use super::*;

    #[test]
    fn a_tap_name_is_found_with_or_without_its_dash() {
        let mut found = StatusMap::new();
        found.insert("- test_check".to_owned(), TestStatus::Passed);
        found.insert("adds".to_owned(), TestStatus::Failed);
        let actual = (
            lookup(&found, "test_check"),
            lookup(&found, "- test_check"),
            lookup(&found, "- adds"),
            lookup(&found, "other"),
        );
        let expected = (
            TestStatus::Passed,
            TestStatus::Passed,
            TestStatus::Failed,
            TestStatus::Missing,
        );
        assert_eq!(actual, expected);
    }
}
