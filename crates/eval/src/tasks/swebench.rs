//! Records with SWE-bench's field names: plumb's own task sets and SWE-bench's published files
//! (JSON, JSON Lines, parquet rows) alike. Fields SWE-bench has and plumb does not use
//! (`hints_text`, `version`, `eval_script`, `environment_setup_commit`, …) are ignored.

use super::Draft;
use super::fields::{FieldError, Object, optional_string, required_string, test_list};

/// Reads one record. The error carries the record's `instance_id` when it had a usable one.
pub(crate) fn read(record: &Object) -> Result<Draft, (Option<String>, FieldError)> {
    let instance_id = required_string(record, "instance_id").map_err(|e| (None, e))?;
    read_rest(record, &instance_id).map_err(|e| (Some(instance_id), e))
}

fn read_rest(record: &Object, instance_id: &str) -> Result<Draft, FieldError> {
    Ok(Draft {
        instance_id: instance_id.to_owned(),
        repo: required_string(record, "repo")?,
        base_commit: optional_string(record, "base_commit")?,
        problem_statement: required_string(record, "problem_statement")?,
        patch: optional_string(record, "patch")?,
        test_patch: optional_string(record, "test_patch")?,
        fail_to_pass: test_list(record, "FAIL_TO_PASS")?,
        pass_to_pass: test_list(record, "PASS_TO_PASS")?,
        setup_command: optional_string(record, "setup_command")?,
        test_command: optional_string(record, "test_command")?,
        language: optional_string(record, "language")?,
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    use super::*;

    fn object(value: Value) -> Object {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("fixtures are objects"),
        }
    }

    #[test]
    fn a_plumb_record_with_every_field() {
        let record = object(json!({
            "instance_id": "calc-1",
            "repo": "repos/calc",
            "base_commit": "0123abc",
            "problem_statement": "add() subtracts",
            "patch": "diff --git a/calc.py b/calc.py\n",
            "test_patch": "diff --git a/test_calc.py b/test_calc.py\n",
            "FAIL_TO_PASS": ["test_calc.py::test_add"],
            "PASS_TO_PASS": "[\"test_calc.py::test_sub\"]",
            "setup_command": "pip install -e .",
            "test_command": "pytest -q",
            "language": "python",
            "hints_text": "ignored",
        }));

        let actual = read(&record);

        let expected = Draft {
            instance_id: "calc-1".into(),
            repo: "repos/calc".into(),
            base_commit: Some("0123abc".into()),
            problem_statement: "add() subtracts".into(),
            patch: Some("diff --git a/calc.py b/calc.py\n".into()),
            test_patch: Some("diff --git a/test_calc.py b/test_calc.py\n".into()),
            fail_to_pass: vec!["test_calc.py::test_add".into()],
            pass_to_pass: vec!["test_calc.py::test_sub".into()],
            setup_command: Some("pip install -e .".into()),
            test_command: Some("pytest -q".into()),
            language: Some("python".into()),
        };
        assert_eq!(actual, Ok(expected));
    }

    #[test]
    fn a_missing_statement_names_the_record_and_the_field() {
        let record = object(json!({"instance_id": "calc-2", "repo": "calc"}));

        let actual = read(&record);

        let expected = Err((
            Some("calc-2".to_owned()),
            FieldError::new(
                "problem_statement",
                "`problem_statement` is missing or empty; every record needs one",
            ),
        ));
        assert_eq!(actual, expected);
    }
}
