//! `cargo check --message-format json`: one JSON object per stdout line; the compiler's
//! diagnostics are the `compiler-message` lines, and `build-finished` says the build got to the
//! end. Only errors and warnings with a primary span count (not the "aborting due to…" and
//! "N warnings emitted" summaries, which have none).

use serde::Deserialize;

use super::{Diagnostic, stderr_summary};

#[derive(Deserialize)]
struct Line {
    reason: String,
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    success: Option<bool>,
}

#[derive(Deserialize)]
struct Message {
    message: String,
    #[serde(default)]
    code: Option<Code>,
    level: String,
    #[serde(default)]
    spans: Vec<Span>,
}

#[derive(Deserialize)]
struct Code {
    code: String,
}

#[derive(Deserialize)]
struct Span {
    file_name: String,
    line_start: usize,
    is_primary: bool,
}

/// rustc's one warning for several unused imports of a `use` line ("unused imports: `a`, `b`,
/// and `c`") as one diagnostic per name: a change that uses one of them, or stops using one,
/// changes the list, and the whole list read as a new diagnostic held a right fix back (the
/// oracle on HumanEvalFix's Rust tasks, whose files open with a `use` of many unused names).
fn one_per_name(message: &str) -> Vec<String> {
    let Some(names) = message.strip_prefix("unused imports: ") else {
        return vec![message.to_string()];
    };
    let split: Vec<String> = names
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|name| format!("unused import: `{name}`"))
        .collect();
    if split.is_empty() {
        vec![message.to_string()]
    } else {
        split
    }
}

pub(super) fn parse(stdout: &str, stderr: &str) -> Result<Vec<Diagnostic>, String> {
    let mut diagnostics = Vec::new();
    let mut errors = 0;
    let mut finished = None;
    for line in stdout
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with('{'))
    {
        let Ok(line) = serde_json::from_str::<Line>(line) else {
            continue;
        };
        match line.reason.as_str() {
            "build-finished" => finished = line.success,
            "compiler-message" => {
                let Some(message) = line.message else {
                    continue;
                };
                let is_error = message.level.starts_with("error");
                if !is_error && message.level != "warning" {
                    continue;
                }
                let Some(span) = message.spans.iter().find(|span| span.is_primary) else {
                    continue;
                };
                errors += usize::from(is_error);
                let code = message
                    .code
                    .map_or_else(|| message.level.clone(), |code| code.code);
                for text in one_per_name(&message.message) {
                    diagnostics.push(Diagnostic {
                        path: span.file_name.clone(),
                        line: span.line_start,
                        code: code.clone(),
                        message: text,
                    });
                }
            }
            _ => {}
        }
    }
    match finished {
        None => Err(format!(
            "cargo check did not finish a build ({})",
            stderr_summary(stderr)
        )),
        Some(false) if errors == 0 => Err(format!(
            "cargo check failed without a compiler error in the project ({})",
            stderr_summary(stderr)
        )),
        Some(_) => Ok(diagnostics),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn several_unused_imports_are_one_diagnostic_each() {
        assert_eq!(
            one_per_name("unused imports: `HashMap`, `max`, and `self`"),
            vec![
                "unused import: `HashMap`".to_string(),
                "unused import: `max`".to_string(),
                "unused import: `self`".to_string(),
            ]
        );
        assert_eq!(
            one_per_name("unused variable: `x`"),
            vec!["unused variable: `x`".to_string()]
        );
    }
}
