//! Loading and merging the layers of `plumb.toml`, in this order: the defaults, the user's own
//! file, `-c key=value` overrides, flags (`--sandbox`, `--max-rounds`, `--test-cmd`, `--model`),
//! and last the repository's file under [`crate::rules`]: each of its values is judged against
//! what the user's layers give and kept only where it tightens; the user's `-c` and flags still
//! win over what it keeps. Every file is checked on its own first, so an error (a typo, a wrong
//! type) names the file; the merged table is checked again at the end. Every effective leaf is
//! marked with the layer that set it ([`crate::provenance`]).

use std::path::{Path, PathBuf};

use plumb_protocol::{IgnoredSetting, Provenance, SettingSource};
use toml::{Table, Value};

use crate::Config;
use crate::provenance::{KeyPath, Marks, dotted, get, leaves, render, set, table_of, touches};
use crate::repo_file::{RepoFile, find_repo_file};
use crate::rules::{self, NO_RULE, Rule};

/// Where the layers come from, lowest first.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    /// The user's global file (`~/.config/plumb/plumb.toml`); skipped when absent.
    pub global: Option<PathBuf>,
    /// The repository's folder: its `plumb.toml` or `.plumb/plumb.toml`, read only from inside
    /// it, may tighten the user's settings.
    pub repo_dir: Option<PathBuf>,
    /// `-c key=value` overrides, in order.
    pub overrides: Vec<String>,
    /// Settings given by flags, applied after the overrides.
    pub flags: Vec<FlagSetting>,
}

/// A setting given by a command-line flag, e.g. `--max-rounds 9` is `limits.max_rounds = 9`.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagSetting {
    /// The flag as the user typed it: `--max-rounds`.
    pub flag: String,
    /// The dotted key it sets: `limits.max_rounds`.
    pub key: String,
    pub value: FlagValue,
}

/// A flag's value.
#[derive(Debug, Clone, PartialEq)]
pub enum FlagValue {
    Text(String),
    Integer(i64),
}

impl FlagSetting {
    pub fn text(flag: &str, key: &str, value: impl Into<String>) -> Self {
        Self {
            flag: flag.to_string(),
            key: key.to_string(),
            value: FlagValue::Text(value.into()),
        }
    }

    pub fn integer(flag: &str, key: &str, value: i64) -> Self {
        Self {
            flag: flag.to_string(),
            key: key.to_string(),
            value: FlagValue::Integer(value),
        }
    }
}

/// The effective settings and where each came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub provenance: Provenance,
}

/// Why the settings could not be read. Each message names the file or override and what to change.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("could not read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("the override `{text}` must look like key=value (for example -c limits.max_rounds=20)")]
    OverrideShape { text: String },
    #[error("the override `{text}` cannot set `{key}`: {reason}")]
    OverrideKey {
        text: String,
        key: String,
        reason: String,
    },
    #[error("invalid settings ({origin}): {message}")]
    Invalid { origin: String, message: String },
}

/// Reads and merges every layer, then checks the result.
pub fn load(sources: &ConfigSources) -> Result<Loaded, ConfigError> {
    let mut merged = table_of(&Config::default());
    let mut marks = Marks::default();
    let mut origins = Vec::new();
    if let Some(path) = &sources.global
        && path.is_file()
    {
        let table = read_table(path, path)?;
        check(&table, &path.display().to_string())?;
        let source = SettingSource::UserFile {
            path: path.display().to_string(),
        };
        marks.layer(&table, &source);
        merge(&mut merged, table);
        origins.push(path.display().to_string());
    }
    let mut ignored = Vec::new();
    let repo = match &sources.repo_dir {
        Some(root) => match find_repo_file(root) {
            RepoFile::Found { rel, shown, real } => {
                let table = read_table(&shown, &real)?;
                check(&table, &shown.display().to_string())?;
                origins.push(shown.display().to_string());
                Some((rel, shown, table))
            }
            RepoFile::Refused { rel, reason } => {
                ignored.push(IgnoredSetting {
                    file: rel,
                    key: String::new(),
                    value: String::new(),
                    reason,
                });
                None
            }
            RepoFile::Absent => None,
        },
        None => None,
    };
    // The user's own layers after their file: `-c`, then flags. Kept apart too, so a repository
    // value they set is not applied under them.
    let mut late = Table::new();
    for text in &sources.overrides {
        let (path, value) = parse_override(text)?;
        let source = SettingSource::Override { text: text.clone() };
        apply_late(
            &mut merged,
            &mut late,
            &mut marks,
            (text, &path),
            value,
            &source,
        )?;
        check(&merged, &format!("after -c {text}"))?;
    }
    for flag in &sources.flags {
        let path: KeyPath = flag.key.split('.').map(str::to_string).collect();
        let value = match &flag.value {
            FlagValue::Text(text) => Value::String(text.clone()),
            FlagValue::Integer(n) => Value::Integer(*n),
        };
        let source = SettingSource::Flag {
            flag: flag.flag.clone(),
        };
        apply_late(
            &mut merged,
            &mut late,
            &mut marks,
            (&flag.flag, &path),
            value,
            &source,
        )?;
        check(&merged, &format!("after {}", flag.flag))?;
    }
    if let Some((rel, shown, table)) = repo {
        let source = SettingSource::RepoFile {
            path: shown.display().to_string(),
        };
        for (path, value) in repo_entries(&table) {
            let key = dotted(&path);
            let Some(rule) = rules::rule_for(&key) else {
                ignored.push(left_out(&rel, &key, value, NO_RULE));
                continue;
            };
            let verdict = rules::judge(rule, value, get(&merged, &path));
            if let Some((shown_value, why)) = &verdict.left_out {
                // A table judged whole (`providers`) is reported by its leaves, so the warning
                // names the key the file set (`providers.openai.base_url`).
                match shown_value {
                    Value::Table(inner) => {
                        for (rest, leaf) in leaves(inner) {
                            let full: KeyPath = path.iter().cloned().chain(rest).collect();
                            ignored.push(left_out(&rel, &dotted(&full), leaf, why));
                        }
                    }
                    _ => ignored.push(left_out(&rel, &key, shown_value, why)),
                }
            }
            let Some(kept) = verdict.use_value else {
                continue;
            };
            if rule == Rule::Union {
                set(&mut merged, &path, kept);
                marks.added_by(&path, &source);
            } else if !touches(&late, &path) {
                marks.set_by(&path, &kept, &source);
                set(&mut merged, &path, kept);
            }
        }
    }
    let origin = if origins.is_empty() {
        "defaults".to_string()
    } else {
        origins.join(" + ")
    };
    let config = check(&merged, &origin)?;
    // The table of the checked config, so every key shows as plumb will use it.
    let provenance = marks.provenance(&table_of(&config), ignored);
    Ok(Loaded { config, provenance })
}

fn left_out(file: &str, key: &str, value: &Value, why: &str) -> IgnoredSetting {
    IgnoredSetting {
        file: file.to_string(),
        key: key.to_string(),
        value: render(value),
        reason: why.to_string(),
    }
}

/// A `-c` or flag value (`text` as given): into the merged table and the late one, marked as
/// `source`'s.
fn apply_late(
    merged: &mut Table,
    late: &mut Table,
    marks: &mut Marks,
    (text, path): (&str, &[String]),
    value: Value,
    source: &SettingSource,
) -> Result<(), ConfigError> {
    for n in 1..path.len() {
        if get(merged, &path[..n]).is_some_and(|v| !v.is_table()) {
            return Err(ConfigError::OverrideKey {
                text: text.to_string(),
                key: dotted(path),
                reason: format!("`{}` is a value, not a table", path[n - 1]),
            });
        }
    }
    marks.set_by(path, &value, source);
    let mut one = Table::new();
    set(&mut one, path, value);
    merge(late, one.clone());
    merge(merged, one);
    Ok(())
}

/// The repository's values, each at the key its rule is written for: a key with a rule is taken
/// whole (`prices`, `providers` are judged as tables), any other table is opened.
fn repo_entries(table: &Table) -> Vec<(KeyPath, &Value)> {
    let mut out = Vec::new();
    repo_entries_into(table, &mut Vec::new(), &mut out);
    out
}

fn repo_entries_into<'a>(
    table: &'a Table,
    prefix: &mut KeyPath,
    out: &mut Vec<(KeyPath, &'a Value)>,
) {
    for (key, value) in table {
        prefix.push(key.clone());
        match value {
            Value::Table(inner) if rules::rule_for(&dotted(prefix)).is_none() => {
                repo_entries_into(inner, prefix, out);
            }
            _ => out.push((prefix.clone(), value)),
        }
        prefix.pop();
    }
}

/// Reads `real`; errors name `shown`.
fn read_table(shown: &Path, real: &Path) -> Result<Table, ConfigError> {
    let text = std::fs::read_to_string(real).map_err(|source| ConfigError::Read {
        path: shown.to_path_buf(),
        source,
    })?;
    text.parse::<Table>().map_err(|err| ConfigError::Parse {
        path: shown.to_path_buf(),
        message: err.message().to_string(),
    })
}

fn check(table: &Table, origin: &str) -> Result<Config, ConfigError> {
    Value::Table(table.clone())
        .try_into::<Config>()
        .map_err(|err| ConfigError::Invalid {
            origin: origin.to_string(),
            message: err.message().to_string(),
        })
}

fn merge(into: &mut Table, from: Table) {
    for (key, value) in from {
        match (into.get_mut(&key), value) {
            (Some(Value::Table(existing)), Value::Table(incoming)) => merge(existing, incoming),
            (_, value) => {
                into.insert(key, value);
            }
        }
    }
}

/// `a.b=value`: the value is read as TOML when it parses (numbers, booleans, arrays), else as a string.
fn parse_override(text: &str) -> Result<(KeyPath, Value), ConfigError> {
    let Some((key, raw)) = text.split_once('=') else {
        return Err(ConfigError::OverrideShape {
            text: text.to_string(),
        });
    };
    let key = key.trim();
    let raw = raw.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(ConfigError::OverrideShape {
            text: text.to_string(),
        });
    }
    let value = format!("v = {raw}")
        .parse::<Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(raw.to_string()));
    Ok((key.split('.').map(str::to_string).collect(), value))
}

#[cfg(test)]
mod tests;
