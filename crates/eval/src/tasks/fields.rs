//! Reading one field of a record, whatever format the record came in (JSON, JSON Lines, a
//! parquet row turned into JSON), and saying what is wrong with it when it cannot be read.
//!
//! The test lists (`FAIL_TO_PASS`, `PASS_TO_PASS`) come in two forms: a JSON list of strings, as
//! plumb's own sets write them, and a string holding that list JSON-encoded, as SWE-bench's
//! published files do (`"[\"tests/a.py::t\"]"`). Both read into the same `Vec<String>`.

use serde_json::{Map, Value};

/// A record: one JSON object.
pub(crate) type Object = Map<String, Value>;

/// What is wrong with one field of a record: the field's name and a sentence saying what was
/// found and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub(crate) fn new(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// The JSON type of a value, as a message names it.
pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// serde_json's sentence without the position it appends, for messages that say the position
/// their own way.
pub(crate) fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    text.strip_suffix(&suffix)
        .map(str::to_owned)
        .unwrap_or(text)
}

/// serde_json's sentence about a one-line text, positioned by column alone.
pub(crate) fn in_line(error: &serde_json::Error) -> String {
    if error.line() == 1 {
        format!("{} at column {}", without_position(error), error.column())
    } else {
        error.to_string()
    }
}

/// A string field that must be there and hold more than white space.
pub(crate) fn required_string(record: &Object, field: &str) -> Result<String, FieldError> {
    match optional_string(record, field)? {
        Some(text) => Ok(text),
        None => Err(FieldError::new(
            field,
            format!("`{field}` is missing or empty; every record needs one"),
        )),
    }
}

/// A string field that may be missing; missing, `null` and an empty (or all-blank) string all
/// read as `None`, since the official files write an absent gold patch as `""`.
pub(crate) fn optional_string(record: &Object, field: &str) -> Result<Option<String>, FieldError> {
    match record.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(FieldError::new(
            field,
            format!("`{field}` is {}; write it as a string", kind(other)),
        )),
    }
}

/// A list of test ids: a JSON list of strings, or a string holding such a list JSON-encoded.
/// Missing or `null` is the empty list.
pub(crate) fn test_list(record: &Object, field: &str) -> Result<Vec<String>, FieldError> {
    match record.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => string_items(items, field),
        Some(Value::String(encoded)) if encoded.trim().is_empty() => Ok(Vec::new()),
        Some(Value::String(encoded)) => match serde_json::from_str::<Value>(encoded) {
            Ok(Value::Array(items)) => string_items(&items, field),
            Ok(other) => Err(FieldError::new(
                field,
                format!(
                    "`{field}` is a string holding {} instead of a list; write a list of test ids \
                     (`[\"tests/test_a.py::test_b\"]`) or that list JSON-encoded in a string",
                    kind(&other)
                ),
            )),
            Err(error) => Err(FieldError::new(
                field,
                format!(
                    "`{field}` is a string that is not a JSON-encoded list ({}); write a list \
                     of test ids (`[\"tests/test_a.py::test_b\"]`) or that list JSON-encoded in a string",
                    in_line(&error)
                ),
            )),
        },
        Some(other) => Err(FieldError::new(
            field,
            format!(
                "`{field}` is {}; write a list of test ids (`[\"tests/test_a.py::test_b\"]`)",
                kind(other)
            ),
        )),
    }
}

fn string_items(items: &[Value], field: &str) -> Result<Vec<String>, FieldError> {
    items
        .iter()
        .enumerate()
        .map(|(index, item)| match item {
            Value::String(id) if !id.trim().is_empty() => Ok(id.clone()),
            other => Err(FieldError::new(
                field,
                format!(
                    "entry {} of `{field}` is {}; every entry is a test id (a non-empty string)",
                    index + 1,
                    if other.is_string() {
                        "an empty string"
                    } else {
                        kind(other)
                    }
                ),
            )),
        })
        .collect()
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

    #[test]
    fn the_list_and_the_encoded_string_read_alike() {
        let listed = object(json!({"FAIL_TO_PASS": ["tests/a.py::t[x y]", "tests/b.py::u"]}));
        let encoded =
            object(json!({"FAIL_TO_PASS": "[\"tests/a.py::t[x y]\", \"tests/b.py::u\"]"}));

        let actual = (
            test_list(&listed, "FAIL_TO_PASS"),
            test_list(&encoded, "FAIL_TO_PASS"),
        );

        let ids = vec!["tests/a.py::t[x y]".to_owned(), "tests/b.py::u".to_owned()];
        assert_eq!(actual, (Ok(ids.clone()), Ok(ids)));
    }

    #[test]
    fn bad_test_lists_name_the_field_and_the_fix() {
        let record = object(json!({
            "A": 3,
            "B": "tests/a.py::t",
            "C": ["ok", 4],
            "D": "{\"x\": 1}",
            "E": null,
        }));

        let actual: Vec<Result<Vec<String>, String>> = ["A", "B", "C", "D", "E", "F"]
            .iter()
            .map(|field| {
                test_list(&record, field).map_err(|e| format!("{}: {}", e.field, e.message))
            })
            .collect();

        let expected: Vec<Result<Vec<String>, String>> = vec![
            Err("A: `A` is a number; write a list of test ids (`[\"tests/test_a.py::test_b\"]`)".into()),
            Err("B: `B` is a string that is not a JSON-encoded list (expected ident at column 2); \
                 write a list of test ids (`[\"tests/test_a.py::test_b\"]`) or that list JSON-encoded in a string"
                .into()),
            Err("C: entry 2 of `C` is a number; every entry is a test id (a non-empty string)".into()),
            Err("D: `D` is a string holding an object instead of a list; write a list of test ids \
                 (`[\"tests/test_a.py::test_b\"]`) or that list JSON-encoded in a string"
                .into()),
            Ok(vec![]),
            Ok(vec![]),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn strings_required_optional_and_of_the_wrong_type() {
        let record = object(json!({"id": "x", "blank": "  ", "n": 5, "patch": ""}));

        let actual = (
            required_string(&record, "id"),
            required_string(&record, "blank").map_err(|e| e.message),
            optional_string(&record, "patch"),
            optional_string(&record, "n").map_err(|e| e.message),
        );

        let expected = (
            Ok("x".to_owned()),
            Err("`blank` is missing or empty; every record needs one".to_owned()),
            Ok(None),
            Err("`n` is a number; write it as a string".to_owned()),
        );
        assert_eq!(actual, expected);
    }
}
