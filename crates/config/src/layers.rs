//! Loading and merging the layers of `plumb.toml`.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::Config;

/// Where the layers come from, lowest first.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    /// The user's global file (`~/.config/plumb/plumb.toml`); skipped when absent.
    pub global: Option<PathBuf>,
    /// The repository's file (`plumb.toml` or `.plumb/plumb.toml` in the repository); skipped when absent.
    pub repo: Option<PathBuf>,
    /// `-c key=value` overrides, in order.
    pub overrides: Vec<String>,
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
pub fn load(sources: &ConfigSources) -> Result<Config, ConfigError> {
    let mut merged = Table::new();
    let mut origins = Vec::new();
    for path in [&sources.global, &sources.repo].into_iter().flatten() {
        if !path.is_file() {
            continue;
        }
        let table = read_table(path)?;
        // Check each file on its own first, so an error names the file that holds it.
        check(&table, &path.display().to_string())?;
        merge(&mut merged, table);
        origins.push(path.display().to_string());
    }
    for text in &sources.overrides {
        apply_override(&mut merged, text)?;
        check(&merged, &format!("after -c {text}"))?;
    }
    let origin = if origins.is_empty() {
        "defaults".to_string()
    } else {
        origins.join(" + ")
    };
    check(&merged, &origin)
}

fn read_table(path: &Path) -> Result<Table, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    text.parse::<Table>().map_err(|err| ConfigError::Parse {
        path: path.to_path_buf(),
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
fn apply_override(table: &mut Table, text: &str) -> Result<(), ConfigError> {
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
    let parts: Vec<&str> = key.split('.').collect();
    let (last, parents) = parts
        .split_last()
        .ok_or_else(|| ConfigError::OverrideShape {
            text: text.to_string(),
        })?;
    let mut cursor = table;
    for part in parents {
        let entry = cursor
            .entry(part.to_string())
            .or_insert_with(|| Value::Table(Table::new()));
        cursor = match entry {
            Value::Table(inner) => inner,
            _ => {
                return Err(ConfigError::OverrideKey {
                    text: text.to_string(),
                    key: key.to_string(),
                    reason: format!("`{part}` is a value, not a table"),
                });
            }
        };
    }
    cursor.insert(last.to_string(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn layers_merge_and_overrides_win() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("global.toml");
        let repo = dir.path().join("repo.toml");
        std::fs::write(
            &global,
            "model = \"openai:gpt\"\n[limits]\nmax_rounds = 12\n",
        )
        .unwrap();
        std::fs::write(&repo, "[limits]\nfile_window = 80\n").unwrap();
        let sources = ConfigSources {
            global: Some(global),
            repo: Some(repo),
            overrides: vec![
                "limits.max_rounds=7".into(),
                "test_command=pytest -q".into(),
            ],
        };
        let config = load(&sources).unwrap();
        let actual = (
            config.model.as_str(),
            config.limits.max_rounds,
            config.limits.file_window,
            config.test_command.as_deref(),
        );
        assert_eq!(actual, ("openai:gpt", 7, 80, Some("pytest -q")));
    }

    #[test]
    fn unknown_key_names_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("plumb.toml");
        std::fs::write(&repo, "[limits]\nmax_roundz = 3\n").unwrap();
        let sources = ConfigSources {
            repo: Some(repo.clone()),
            ..Default::default()
        };
        let message = load(&sources).unwrap_err().to_string();
        assert!(message.contains(&repo.display().to_string()), "{message}");
        assert!(message.contains("max_roundz"), "{message}");
    }

    #[test]
    fn malformed_override_says_the_shape() {
        let sources = ConfigSources {
            overrides: vec!["limits.max_rounds".into()],
            ..Default::default()
        };
        let message = load(&sources).unwrap_err().to_string();
        assert_eq!(
            message,
            "the override `limits.max_rounds` must look like key=value (for example -c limits.max_rounds=20)"
        );
    }
}
