//! Multi-SWE-bench records, as its dataset publishes them: `org`, `repo`, `number`, `base`
//! (`label`, `ref`, `sha`), `resolved_issues` (`number`, `title`, `body`), `fix_patch`,
//! `test_patch`, and the test sets `f2p_tests`, `p2p_tests`, `s2p_tests`, `n2p_tests`: objects
//! keyed by test name whose values are the test's status in the three runs (before, with the test
//! patch, with the fix), which plumb does not need.
//!
//! Mapping onto a [`Draft`]: the id is the record's `instance_id` when it has one, else
//! `{org}__{repo}-{number}`; the problem statement is the resolved issues' titles and bodies (the
//! pull request's own text describes the fix, so it is never used); FAIL_TO_PASS is every test
//! the fix makes pass that did not pass before: `f2p` (failed), `s2p` (skipped) and `n2p` (did not
//! exist yet); PASS_TO_PASS is `p2p`; the repository is the GitHub name `org/repo`.

use serde_json::Value;

use super::Draft;
use super::fields::{FieldError, Object, kind, optional_string, required_string};

/// Whether a record has Multi-SWE-bench's shape rather than SWE-bench's (which has neither
/// field); a Multi-SWE-bench record missing `base` is then reported as such.
pub(crate) fn is_multi_swe(record: &Object) -> bool {
    record.contains_key("org") && record.contains_key("number")
}

/// Reads one record. The error carries the record's id when it could be made.
pub(crate) fn read(record: &Object) -> Result<Draft, (Option<String>, FieldError)> {
    let org = required_string(record, "org").map_err(|e| (None, e))?;
    let repo = required_string(record, "repo").map_err(|e| (None, e))?;
    let number = pull_number(record).map_err(|e| (None, e))?;
    let instance_id = match optional_string(record, "instance_id").map_err(|e| (None, e))? {
        Some(id) => id,
        None => format!("{org}__{repo}-{number}"),
    };
    read_rest(record, format!("{org}/{repo}"), &instance_id).map_err(|e| (Some(instance_id), e))
}

fn read_rest(record: &Object, repo: String, instance_id: &str) -> Result<Draft, FieldError> {
    let mut fail_to_pass = Vec::new();
    for field in ["f2p_tests", "s2p_tests", "n2p_tests"] {
        for name in test_names(record, field)? {
            if !fail_to_pass.contains(&name) {
                fail_to_pass.push(name);
            }
        }
    }
    Ok(Draft {
        instance_id: instance_id.to_owned(),
        repo,
        base_commit: Some(base_sha(record)?),
        problem_statement: problem_statement(record)?,
        patch: optional_string(record, "fix_patch")?,
        test_patch: optional_string(record, "test_patch")?,
        fail_to_pass,
        pass_to_pass: test_names(record, "p2p_tests")?,
        setup_command: optional_string(record, "setup_command")?,
        test_command: optional_string(record, "test_command")?,
        language: optional_string(record, "language")?,
    })
}

fn pull_number(record: &Object) -> Result<u64, FieldError> {
    let value = record.get("number");
    let number = match value {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(text)) => text.trim().parse::<u64>().ok(),
        _ => None,
    };
    number.ok_or_else(|| {
        FieldError::new(
            "number",
            format!(
                "`number` is {}; write the pull request's number (an integer)",
                value.map_or("missing", kind)
            ),
        )
    })
}

fn base_sha(record: &Object) -> Result<String, FieldError> {
    match record.get("base") {
        Some(Value::Object(base)) => required_string(base, "sha").map_err(|_| {
            FieldError::new(
                "base.sha",
                "`base.sha` is missing or empty; write the commit the pull request is based on",
            )
        }),
        other => Err(FieldError::new(
            "base",
            format!(
                "`base` is {}; write an object with the base commit in `sha`",
                other.map_or("missing", kind)
            ),
        )),
    }
}

/// Each resolved issue's title, then its body, issues separated by a blank line.
fn problem_statement(record: &Object) -> Result<String, FieldError> {
    let issues = match record.get("resolved_issues") {
        Some(Value::Array(issues)) => issues,
        other => {
            return Err(FieldError::new(
                "resolved_issues",
                format!(
                    "`resolved_issues` is {}; write a list of issues, each with a `title` and a `body`",
                    other.map_or("missing", kind)
                ),
            ));
        }
    };
    let mut parts = Vec::new();
    for (index, issue) in issues.iter().enumerate() {
        let Value::Object(issue) = issue else {
            return Err(FieldError::new(
                "resolved_issues",
                format!(
                    "issue {} of `resolved_issues` is {}; each issue is an object with a `title` and a `body`",
                    index + 1,
                    kind(issue)
                ),
            ));
        };
        for field in ["title", "body"] {
            let text = optional_string(issue, field).map_err(|e| {
                FieldError::new(
                    "resolved_issues",
                    format!("issue {}: {}", index + 1, e.message),
                )
            })?;
            if let Some(text) = text {
                parts.push(text.trim().to_owned());
            }
        }
    }
    if parts.is_empty() {
        return Err(FieldError::new(
            "resolved_issues",
            "`resolved_issues` holds no issue text; the task's problem statement is the issues' \
             titles and bodies, so give at least one issue a `title` or a `body`",
        ));
    }
    Ok(parts.join("\n\n"))
}

/// The test names of one of the `*_tests` objects, in name order; missing or `null` is none.
fn test_names(record: &Object, field: &str) -> Result<Vec<String>, FieldError> {
    match record.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(tests)) => {
            let mut names: Vec<String> = tests.keys().cloned().collect();
            names.sort();
            Ok(names)
        }
        Some(other) => Err(FieldError::new(
            field,
            format!(
                "`{field}` is {}; write an object keyed by test name, as Multi-SWE-bench does",
                kind(other)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Object {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("fixtures are objects"),
        }
    }

    fn record(changes: Value) -> Object {
        let mut record = object(json!({
            "org": "acme", "repo": "widget", "number": "7",
            "base": {"label": "acme:main", "ref": "main", "sha": "abcdef0"},
            "resolved_issues": [{"number": 6, "title": " It breaks ", "body": null}],
            "fix_patch": "", "test_patch": "diff",
            "f2p_tests": {"b": {}, "a": {}}, "n2p_tests": {"a": {}, "c": {}},
        }));
        record.extend(object(changes));
        record
    }

    #[test]
    fn ids_statements_and_test_sets() {
        let actual = (
            read(&record(json!({}))),
            read(&record(json!({"instance_id": "acme__widget-pr7"}))).map(|d| d.instance_id),
        );

        let expected = (
            Ok(Draft {
                instance_id: "acme__widget-7".into(),
                repo: "acme/widget".into(),
                base_commit: Some("abcdef0".into()),
                problem_statement: "It breaks".into(),
                patch: None,
                test_patch: Some("diff".into()),
                fail_to_pass: vec!["a".into(), "b".into(), "c".into()],
                pass_to_pass: vec![],
                setup_command: None,
                test_command: None,
                language: None,
            }),
            Ok("acme__widget-pr7".to_owned()),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn bad_records_name_the_field() {
        let actual: Vec<(Option<String>, String)> = [
            json!({"number": -3}),
            json!({"base": {"ref": "main"}}),
            json!({"base": "main"}),
            json!({"resolved_issues": []}),
            json!({"resolved_issues": ["#6"]}),
            json!({"p2p_tests": ["a"]}),
        ]
        .into_iter()
        .map(|changes| match read(&record(changes)) {
            Ok(draft) => (Some(draft.instance_id), "read".to_owned()),
            Err((id, error)) => (id, error.field),
        })
        .collect();

        let id = Some("acme__widget-7".to_owned());
        let expected = vec![
            (None, "number".to_owned()),
            (id.clone(), "base.sha".to_owned()),
            (id.clone(), "base".to_owned()),
            (id.clone(), "resolved_issues".to_owned()),
            (id.clone(), "resolved_issues".to_owned()),
            (id, "p2p_tests".to_owned()),
        ];
        assert_eq!(actual, expected);
    }
}
