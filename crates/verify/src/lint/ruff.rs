//! `ruff check --output-format json`: one JSON array of diagnostics on stdout.

use serde::Deserialize;

use super::{Diagnostic, stderr_summary};

#[derive(Deserialize)]
struct Item {
    /// `None` for a syntax error in older ruff versions; newer ones say `invalid-syntax`.
    code: Option<String>,
    name: Option<String>,
    filename: String,
    location: Option<Location>,
    message: String,
}

#[derive(Deserialize)]
struct Location {
    row: usize,
}

pub(super) fn parse(stdout: &str, stderr: &str) -> Result<Vec<Diagnostic>, String> {
    let items: Vec<Item> = serde_json::from_str(stdout.trim()).map_err(|_| {
        format!(
            "ruff printed no JSON list of diagnostics ({})",
            stderr_summary(stderr)
        )
    })?;
    Ok(items
        .into_iter()
        .map(|item| Diagnostic {
            path: item.filename,
            line: item.location.map_or(0, |location| location.row),
            code: item
                .code
                .or(item.name)
                .unwrap_or_else(|| "invalid-syntax".to_string()),
            message: item.message,
        })
        .collect())
}
