//! Which layer gave each effective setting. Settings are TOML tables; a *leaf* is a value that is
//! not a table (a number, a string, a list), named by its dotted key path. Every leaf a layer
//! writes is marked with that layer's [`SettingSource`]; an unmarked leaf is a default.

use std::collections::BTreeMap;

use plumb_protocol::{IgnoredSetting, Provenance, Setting, SettingSource};
use toml::{Table, Value};

use crate::Config;

/// The longest value text shown in a warning; longer ones are cut with `…`.
const SHOWN_CHARS: usize = 200;

/// A key path such as `["limits", "max_rounds"]`.
pub(crate) type KeyPath = Vec<String>;

/// `limits.max_rounds`; a segment that is not a bare TOML key is quoted
/// (`prices."openai:gpt-4.1".input`).
pub(crate) fn dotted(path: &[String]) -> String {
    path.iter()
        .map(|part| {
            let bare = !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if bare {
                part.clone()
            } else {
                Value::String(part.clone()).to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// A value as TOML writes it inline. A float that came from an `f32` setting is written as the
/// `f32` reads (`0.05`, not `0.05000000074505806`).
pub(crate) fn toml_text(value: &Value) -> String {
    match value {
        Value::Float(x) if f64::from(*x as f32) == *x && x.is_finite() => {
            let text = (*x as f32).to_string();
            if text.contains(['.', 'e']) {
                text
            } else {
                format!("{text}.0")
            }
        }
        _ => value.to_string(),
    }
}

/// A value as TOML writes it inline, cut to [`SHOWN_CHARS`].
pub(crate) fn render(value: &Value) -> String {
    let text = toml_text(value);
    if text.chars().count() <= SHOWN_CHARS {
        return text;
    }
    let cut: String = text.chars().take(SHOWN_CHARS).collect();
    format!("{cut}…")
}

/// Every leaf under `table`, in key order.
pub(crate) fn leaves(table: &Table) -> Vec<(KeyPath, &Value)> {
    let mut out = Vec::new();
    leaves_into(table, &mut Vec::new(), &mut out);
    out
}

fn leaves_into<'a>(table: &'a Table, prefix: &mut KeyPath, out: &mut Vec<(KeyPath, &'a Value)>) {
    for (key, value) in table {
        prefix.push(key.clone());
        match value {
            Value::Table(inner) => leaves_into(inner, prefix, out),
            _ => out.push((prefix.clone(), value)),
        }
        prefix.pop();
    }
}

/// The value at `path`, if the table has one.
pub(crate) fn get<'a>(table: &'a Table, path: &[String]) -> Option<&'a Value> {
    let (last, parents) = path.split_last()?;
    let mut cursor = table;
    for part in parents {
        cursor = cursor.get(part)?.as_table()?;
    }
    cursor.get(last)
}

/// Sets `path` to `value`, making the tables on the way. A value in the way is replaced (the
/// merged table was checked, so this only happens for a key no check allows).
pub(crate) fn set(table: &mut Table, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cursor = table;
    for part in parents {
        let entry = cursor
            .entry(part.clone())
            .or_insert_with(|| Value::Table(Table::new()));
        if !entry.is_table() {
            *entry = Value::Table(Table::new());
        }
        let Value::Table(inner) = entry else {
            return;
        };
        cursor = inner;
    }
    cursor.insert(last.clone(), value);
}

/// Whether `table` sets `path`, a table above it, or anything below it.
pub(crate) fn touches(table: &Table, path: &[String]) -> bool {
    let mut cursor = table;
    for part in path {
        match cursor.get(part) {
            None => return false,
            Some(Value::Table(inner)) => cursor = inner,
            Some(_) => return true,
        }
    }
    true
}

/// The source of every leaf a layer set, and who added to the lists that take additions.
#[derive(Debug, Default)]
pub(crate) struct Marks {
    sources: BTreeMap<KeyPath, SettingSource>,
    added: BTreeMap<KeyPath, Vec<SettingSource>>,
}

impl Marks {
    /// `value` was written at `path` by `source`: every leaf in it is now `source`'s.
    pub(crate) fn set_by(&mut self, path: &[String], value: &Value, source: &SettingSource) {
        match value {
            Value::Table(inner) => {
                for (rest, _) in leaves(inner) {
                    let mut full = path.to_vec();
                    full.extend(rest);
                    self.sources.insert(full, source.clone());
                }
            }
            _ => {
                self.sources.insert(path.to_vec(), source.clone());
            }
        }
    }

    /// Every leaf of a whole layer.
    pub(crate) fn layer(&mut self, table: &Table, source: &SettingSource) {
        for (path, _) in leaves(table) {
            self.sources.insert(path, source.clone());
        }
    }

    /// `source` added entries to the list at `path`.
    pub(crate) fn added_by(&mut self, path: &[String], source: &SettingSource) {
        self.added
            .entry(path.to_vec())
            .or_default()
            .push(source.clone());
    }

    /// Every leaf of the effective table with its source.
    pub(crate) fn provenance(&self, effective: &Table, ignored: Vec<IgnoredSetting>) -> Provenance {
        let settings = leaves(effective)
            .into_iter()
            .map(|(path, value)| Setting {
                key: dotted(&path),
                value: toml_text(value),
                source: self
                    .sources
                    .get(&path)
                    .cloned()
                    .unwrap_or(SettingSource::Default),
                added_by: self.added.get(&path).cloned().unwrap_or_default(),
            })
            .collect();
        Provenance { settings, ignored }
    }
}

/// `config` as a table (defaults included; unset optional keys are absent).
pub(crate) fn table_of(config: &Config) -> Table {
    match Value::try_from(config) {
        Ok(Value::Table(table)) => table,
        _ => Table::new(),
    }
}

/// Every setting of `config` with one source, e.g. the journal a replay read it from.
pub fn provenance_of(config: &Config, source: SettingSource) -> Provenance {
    let mut marks = Marks::default();
    let table = table_of(config);
    marks.layer(&table, &source);
    marks.provenance(&table, Vec::new())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn path(text: &str) -> KeyPath {
        text.split('.').map(str::to_string).collect()
    }

    #[test]
    fn keys_are_dotted_and_quoted_where_toml_needs_it() {
        let actual = (
            dotted(&path("limits.max_rounds")),
            dotted(&["prices".into(), "openai:gpt-4.1".into(), "input".into()]),
        );
        assert_eq!(
            actual,
            (
                "limits.max_rounds".to_string(),
                "prices.\"openai:gpt-4.1\".input".to_string()
            )
        );
    }

    #[test]
    fn floats_read_as_they_were_written() {
        let actual: Vec<String> = [0.05f32 as f64, 2.0, 0.1, 1e-9]
            .into_iter()
            .map(|x| toml_text(&Value::Float(x)))
            .collect();
        assert_eq!(actual, vec!["0.05", "2.0", "0.1", "0.000000001"]);
    }

    #[test]
    fn long_values_are_cut_for_warnings() {
        let long = Value::String("x".repeat(500));
        let shown = render(&long);
        assert_eq!(
            (shown.chars().count(), shown.ends_with('…')),
            (SHOWN_CHARS + 1, true)
        );
    }

    #[test]
    fn touches_sees_the_key_a_table_above_and_keys_below() {
        let table: Table = "[limits]\nmax_rounds = 3\n[run]\nallowed_commands = []\n"
            .parse()
            .unwrap();
        let actual: Vec<bool> = [
            "limits.max_rounds",
            "limits.cpus",
            "limits",
            "run.allowed_commands",
            "sandbox",
        ]
        .iter()
        .map(|key| touches(&table, &path(key)))
        .collect();
        assert_eq!(actual, vec![true, false, true, true, false]);
    }

    #[test]
    fn every_leaf_is_the_default_unless_a_layer_marked_it() {
        let mut table = table_of(&Config::default());
        let user: Table = "[limits]\nmax_rounds = 7\n".parse().unwrap();
        set(&mut table, &path("limits.max_rounds"), Value::Integer(7));
        let mut marks = Marks::default();
        let source = SettingSource::UserFile {
            path: "/home/u/.config/plumb/plumb.toml".into(),
        };
        marks.layer(&user, &source);
        let provenance = marks.provenance(&table, Vec::new());
        let actual = (
            provenance.setting("limits.max_rounds").cloned(),
            provenance.setting("sandbox").map(|s| s.source.clone()),
        );
        assert_eq!(
            actual,
            (
                Some(Setting {
                    key: "limits.max_rounds".into(),
                    value: "7".into(),
                    source,
                    added_by: Vec::new(),
                }),
                Some(SettingSource::Default)
            )
        );
    }
}
