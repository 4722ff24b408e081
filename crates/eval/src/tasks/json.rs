//! JSON Lines (`.jsonl`) and JSON (`.json`) task files, cut into records with their line numbers.
//!
//! JSON Lines: one record a line, blank lines skipped; a line that is not JSON is a problem of
//! that record alone. JSON: one array of records (SWE-bench's `.json` files), one object (a set
//! of one record, however it is laid out), or one object a line (read as JSON Lines). In an array each record is numbered by the line it starts on; a
//! syntax error there leaves no way to find where the next record starts, so it fails the file.

use std::path::Path;

use serde_json::Value;

use super::fields::{in_line, without_position};
use super::{LoadError, RawRecord};

/// The records of a JSON Lines text.
pub(crate) fn lines(text: &str) -> Vec<RawRecord> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| RawRecord {
            line: index + 1,
            value: serde_json::from_str::<Value>(line).map_err(|error| {
                format!(
                    "not valid JSON ({}); each line of a .jsonl task set is one JSON object",
                    in_line(&error)
                )
            }),
        })
        .collect()
}

/// The records of a `.json` text: an array, or one object a line.
pub(crate) fn document(path: &Path, text: &str) -> Result<Vec<RawRecord>, LoadError> {
    let bytes = text.as_bytes();
    let start = skip_space(bytes, 0);
    match bytes.get(start) {
        None => Ok(Vec::new()),
        Some(b'[') => array(path, bytes, start + 1),
        // One object (perhaps spread over lines), else one object a line.
        Some(b'{') => match serde_json::from_str::<Value>(text) {
            Ok(value) => Ok(vec![RawRecord {
                line: line_of(bytes, start),
                value: Ok(value),
            }]),
            Err(_) => Ok(lines(text)),
        },
        Some(_) => Err(syntax(
            path,
            bytes,
            start,
            "a .json task set starts with `[` (an array of records) or `{` (one record a line)",
        )),
    }
}

fn array(path: &Path, bytes: &[u8], mut at: usize) -> Result<Vec<RawRecord>, LoadError> {
    let mut records = Vec::new();
    at = skip_space(bytes, at);
    if bytes.get(at) == Some(&b']') {
        return end(path, bytes, at + 1, records);
    }
    loop {
        let mut stream = serde_json::Deserializer::from_slice(&bytes[at..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => records.push(RawRecord {
                line: line_of(bytes, at),
                value: Ok(value),
            }),
            Some(Err(error)) => {
                // The error's position is within the slice; shift it to the file's.
                let offset = at + offset_of(&bytes[at..], error.line(), error.column());
                return Err(syntax(path, bytes, offset, &without_position(&error)));
            }
            None => {
                return Err(syntax(
                    path,
                    bytes,
                    at,
                    "the array ends before its closing `]`",
                ));
            }
        }
        at = skip_space(bytes, at + stream.byte_offset());
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b']') => return end(path, bytes, at + 1, records),
            _ => {
                return Err(syntax(
                    path,
                    bytes,
                    at,
                    "expected `,` or `]` after a record",
                ));
            }
        }
    }
}

fn end(
    path: &Path,
    bytes: &[u8],
    at: usize,
    records: Vec<RawRecord>,
) -> Result<Vec<RawRecord>, LoadError> {
    let at = skip_space(bytes, at);
    if at < bytes.len() {
        return Err(syntax(
            path,
            bytes,
            at,
            "text after the array's closing `]`",
        ));
    }
    Ok(records)
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| b.is_ascii_whitespace()) {
        at += 1;
    }
    at
}

fn line_of(bytes: &[u8], at: usize) -> usize {
    bytes[..at.min(bytes.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The byte offset of serde_json's 1-based line and column (a column counts bytes).
fn offset_of(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start = if line <= 1 {
        0
    } else {
        bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(line - 2)
            .map_or(bytes.len(), |(i, _)| i + 1)
    };
    (line_start + column.saturating_sub(1)).min(bytes.len())
}

fn syntax(path: &Path, bytes: &[u8], at: usize, message: &str) -> LoadError {
    let at = at.min(bytes.len());
    let line_start = bytes[..at]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    LoadError::Json {
        path: path.to_path_buf(),
        line: line_of(bytes, at),
        column: at - line_start + 1,
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn shape(records: Vec<RawRecord>) -> Vec<(usize, Result<Value, String>)> {
        records.into_iter().map(|r| (r.line, r.value)).collect()
    }

    #[test]
    fn json_lines_skip_blanks_and_keep_line_numbers() {
        let text = "{\"a\": 1}\n\n   \n{\"a\": 2}\r\n{broken\n";

        let actual = shape(lines(text));

        let expected = vec![
            (1, Ok(json!({"a": 1}))),
            (4, Ok(json!({"a": 2}))),
            (
                5,
                Err(
                    "not valid JSON (key must be a string at column 2); each line of a \
                     .jsonl task set is one JSON object"
                        .to_owned(),
                ),
            ),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_json_array_numbers_records_by_their_first_line() {
        let text = "[\n  {\"a\": 1},\n  {\n    \"a\": [2, 3]\n  }, 7\n]\n";

        let actual = document(Path::new("set.json"), text)
            .map(shape)
            .map_err(|e| e.to_string());

        let expected = Ok(vec![
            (2, Ok(json!({"a": 1}))),
            (3, Ok(json!({"a": [2, 3]}))),
            (5, Ok(json!(7))),
        ]);
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_json_file_of_objects_is_one_record_or_one_a_line() {
        let inputs = ["\n{\n  \"a\": 1\n}\n", "{\"a\": 1}\n{\"a\": 2}\n"];

        let actual: Vec<_> = inputs
            .iter()
            .map(|text| {
                document(Path::new("set.json"), text)
                    .map(shape)
                    .map_err(|e| e.to_string())
            })
            .collect();

        let expected = vec![
            Ok(vec![(2, Ok(json!({"a": 1})))]),
            Ok(vec![(1, Ok(json!({"a": 1}))), (2, Ok(json!({"a": 2})))]),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_broken_array_fails_the_file_at_the_right_place() {
        let inputs = [
            "[\n {\"a\": 1},\n {\"a\": }\n]",
            "[{\"a\": 1} {\"a\": 2}]",
            "[{}] x",
            "nope",
            "[{}",
        ];

        let actual: Vec<String> = inputs
            .iter()
            .map(|text| match document(Path::new("set.json"), text) {
                Ok(records) => format!("{} records", records.len()),
                Err(error) => error.to_string(),
            })
            .collect();

        let expected = vec![
            "set.json line 3 column 8: not valid JSON (expected value); a .json task \
             set is one array of records, or one record a line",
            "set.json line 1 column 11: not valid JSON (expected `,` or `]` after a record); a .json \
             task set is one array of records, or one record a line",
            "set.json line 1 column 6: not valid JSON (text after the array's closing `]`); a .json \
             task set is one array of records, or one record a line",
            "set.json line 1 column 1: not valid JSON (a .json task set starts with `[` (an array of \
             records) or `{` (one record a line)); a .json task set is one array of records, or one \
             record a line",
            "set.json line 1 column 4: not valid JSON (expected `,` or `]` after a record); a .json \
             task set is one array of records, or one record a line",
        ];
        assert_eq!(actual, expected);
    }
}
