//! Parquet task files (SWE-bench's published `*.parquet`), read row by row with the `parquet`
//! crate's record API and each row turned into the JSON object the other formats yield, so one
//! reader of fields serves them all. A row is numbered as its index + 1, as a line would be.
//!
//! Only the snappy codec is compiled in: it is what SWE-bench's files (written by pyarrow) use. A
//! file compressed otherwise fails with a message that says so.

use std::fs::File;
use std::path::Path;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row};
use serde_json::{Map, Number, Value};

use super::{LoadError, RawRecord};

/// Every row of the file, as records.
pub(crate) fn rows(path: &Path) -> Result<Vec<RawRecord>, LoadError> {
    let bad = |message: String| LoadError::Parquet {
        path: path.to_path_buf(),
        message,
    };
    let file = File::open(path).map_err(|source| LoadError::Unreadable {
        path: path.to_path_buf(),
        source,
    })?;
    let reader = SerializedFileReader::new(file).map_err(|e| bad(e.to_string()))?;
    let iter = reader.get_row_iter(None).map_err(|e| bad(e.to_string()))?;
    let mut records = Vec::new();
    for (index, row) in iter.enumerate() {
        let row = row.map_err(|e| bad(format!("row {}: {e}", index + 1)))?;
        records.push(RawRecord {
            line: index + 1,
            value: Ok(Value::Object(object(&row))),
        });
    }
    Ok(records)
}

fn object(row: &Row) -> Map<String, Value> {
    row.get_column_iter()
        .map(|(name, field)| (name.clone(), value(field)))
        .collect()
}

/// A parquet value as JSON. Strings, lists and nulls are what task records hold; the rest is
/// kept as faithfully as JSON allows so a wrong type is reported as the type it is.
fn value(field: &Field) -> Value {
    match field {
        Field::Null => Value::Null,
        Field::Bool(b) => Value::Bool(*b),
        Field::Str(text) => Value::String(text.clone()),
        Field::Bytes(bytes) => match std::str::from_utf8(bytes.data()) {
            Ok(text) => Value::String(text.to_owned()),
            Err(_) => Value::String(field.to_string()),
        },
        Field::Byte(n) => Value::from(*n),
        Field::Short(n) => Value::from(*n),
        Field::Int(n) => Value::from(*n),
        Field::Long(n) => Value::from(*n),
        Field::UByte(n) => Value::from(*n),
        Field::UShort(n) => Value::from(*n),
        Field::UInt(n) => Value::from(*n),
        Field::ULong(n) => Value::from(*n),
        Field::Float(n) => Number::from_f64(f64::from(*n)).map_or(Value::Null, Value::Number),
        Field::Double(n) => Number::from_f64(*n).map_or(Value::Null, Value::Number),
        Field::ListInternal(list) => Value::Array(list.elements().iter().map(value).collect()),
        Field::Group(row) => Value::Object(object(row)),
        Field::MapInternal(map) => Value::Object(
            map.entries()
                .iter()
                .map(|(key, item)| {
                    let key = match key {
                        Field::Str(text) => text.clone(),
                        other => other.to_string(),
                    };
                    (key, value(item))
                })
                .collect(),
        ),
        // Dates, times, decimals and half floats: their text, which no task field expects.
        other => Value::String(other.to_string()),
    }
}
