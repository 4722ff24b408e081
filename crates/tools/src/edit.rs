//! The tools that write: `edit_file` (search/replace, `old_text` exactly once) and `create_file`
//! (new files only). Both confine the path, refuse protected paths, and refuse content that adds a
//! syntax error; the error texts are the article's, so models trained on them know what to do.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::read::relative;
use crate::registry::Tool;
use crate::{ToolContext, ToolError, ToolOutput, args};

const OUTSIDE: &str = "you can only edit files inside the project folder.";

/// Resolves a path for writing and refuses protected paths.
fn resolve_for_write(ctx: &ToolContext<'_>, path: &str) -> Result<(PathBuf, String), ToolError> {
    let resolved = ctx
        .workspace
        .resolve(path)
        .map_err(|_| ToolError::respond(OUTSIDE))?;
    let rel = relative(ctx.workspace.root(), &resolved);
    if let Some(rule) = protected_by(&ctx.config.protected_paths, &rel) {
        return Err(ToolError::respond(format!(
            "{rel} is protected (protected_paths = \"{rule}\" in plumb.toml); leave it unchanged."
        )));
    }
    Ok((resolved, rel))
}

/// The protected-path rule that covers `rel`, if any: a rule names a file or a folder prefix.
fn protected_by<'a>(rules: &'a [String], rel: &str) -> Option<&'a str> {
    rules.iter().map(String::as_str).find(|rule| {
        let rule = rule.trim_end_matches('/');
        !rule.is_empty() && (rel == rule || rel.starts_with(&format!("{rule}/")))
    })
}

fn syntax_refusal(verb: &str, problem: &plumb_context::syntax::SyntaxProblem) -> ToolError {
    ToolError::respond(format!(
        "{verb} NOT applied. Line {}: {}",
        problem.line, problem.message
    ))
}

/// A few numbered lines around the changed region, so the model sees the result without a re-read.
fn excerpt(text: &str, first_line: usize, changed_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = first_line.saturating_sub(3).max(1);
    let end = (first_line + changed_lines + 2).min(lines.len());
    let mut out = String::new();
    for n in start..=end {
        if let Some(line) = lines.get(n - 1) {
            out.push_str(&format!("{n:>5}| {line}\n"));
        }
    }
    out
}

pub(crate) struct EditFile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    old_text: String,
    new_text: String,
}

#[async_trait]
impl Tool for EditFile {
    fn name(&self) -> &'static str {
        "edit_file"
    }

    fn description(&self) -> &'static str {
        "Replace old_text with new_text in a file. old_text must be copied exactly from the file (without read_file's line numbers) and occur exactly once; include enough lines to make it unique. Edits that break the file's syntax are refused."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path relative to the project root."},
                "old_text": {"type": "string", "description": "The exact text to replace; must occur exactly once."},
                "new_text": {"type": "string", "description": "The text to put in its place."}
            },
            "required": ["path", "old_text", "new_text"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext<'_>, value: &Value) -> Result<ToolOutput, ToolError> {
        let a: EditArgs = args::parse(self.name(), "path, old_text, new_text", value)?;
        let (path, rel) = resolve_for_write(ctx, &a.path)?;
        if !path.is_file() {
            return Err(ToolError::respond(format!(
                "there is no file called {}.",
                a.path
            )));
        }
        let before = read_text(&path, &rel)?;
        if a.old_text.is_empty() {
            return Err(ToolError::respond(
                "old_text is empty. Copy the exact lines to replace from read_file, without the line numbers.",
            ));
        }
        let matches = before.matches(a.old_text.as_str()).count();
        if matches == 0 {
            let mut message = "old_text found 0 times. Copy the exact text from read_file (same indentation, without the line numbers).".to_string();
            if ctx.helpers.show_file_on_failed_edit {
                message.push_str(&current_text_near(&rel, &before, &a.old_text));
            }
            return Err(ToolError::respond(message));
        }
        if matches > 1 {
            return Err(ToolError::respond(format!(
                "old_text found {matches} times. Copy more lines so it is unique."
            )));
        }
        let offset = before.find(a.old_text.as_str()).unwrap_or(0);
        let after = before.replacen(a.old_text.as_str(), &a.new_text, 1);
        plumb_context::syntax::check_edit(&path, Some(&before), &after)
            .map_err(|problem| syntax_refusal("edit", &problem))?;
        write_text(&path, &after)?;
        let first_line = before
            .get(..offset)
            .map(|head| head.matches('\n').count() + 1)
            .unwrap_or(1);
        let changed = a.new_text.lines().count().max(1);
        Ok(ToolOutput {
            text: format!(
                "Edited {rel}. Lines around the change now read:\n{}",
                excerpt(&after, first_line, changed)
            ),
            summary: format!("edited {rel} at line {first_line}"),
            changed: true,
            ..ToolOutput::default()
        })
    }
}

pub(crate) struct CreateFile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    path: String,
    content: String,
}

#[async_trait]
impl Tool for CreateFile {
    fn name(&self) -> &'static str {
        "create_file"
    }

    fn description(&self) -> &'static str {
        "Create a new file with the given content (folders are made as needed). Existing files are changed with edit_file instead. Content that does not parse is refused."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "New file path relative to the project root."},
                "content": {"type": "string", "description": "The whole content of the new file."}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext<'_>, value: &Value) -> Result<ToolOutput, ToolError> {
        let a: CreateArgs = args::parse(self.name(), "path, content", value)?;
        let (path, rel) = resolve_for_write(ctx, &a.path)?;
        if path.symlink_metadata().is_ok() {
            let mut message =
                format!("there is already a file called {rel}; change it with edit_file");
            if let Some(free) = free_name(&path, &rel) {
                message.push_str(&format!(", or create the new file as {free}"));
            }
            message.push('.');
            return Err(ToolError::respond(message));
        }
        plumb_context::syntax::check_edit(&path, None, &a.content)
            .map_err(|problem| syntax_refusal("file", &problem))?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|err| {
                ToolError::respond(format!("could not make the folder for {rel}: {err}."))
            })?;
            // The folders now exist: resolve again so a link raced in between is still caught.
            ctx.workspace
                .resolve(&a.path)
                .map_err(|_| ToolError::respond(OUTSIDE))?;
        }
        write_text(&path, &a.content)?;
        Ok(ToolOutput {
            text: format!("Created {rel} ({} lines).", a.content.lines().count()),
            summary: format!("created {rel}"),
            changed: true,
            ..ToolOutput::default()
        })
    }
}

fn read_text(path: &Path, rel: &str) -> Result<String, ToolError> {
    let bytes = std::fs::read(path)
        .map_err(|err| ToolError::respond(format!("could not read {rel}: {err}.")))?;
    String::from_utf8(bytes).map_err(|_| {
        ToolError::respond(format!(
            "{rel} is not a UTF-8 text file; plumb edits text files only."
        ))
    })
}

fn write_text(path: &Path, text: &str) -> Result<(), ToolError> {
    std::fs::write(path, text)
        .map_err(|err| ToolError::Infra(format!("could not write {}: {err}", path.display())))
}

/// A name next to `rel` that is not taken: `tests/test_x.py` → `tests/test_x_2.py`.
fn free_name(path: &std::path::Path, rel: &str) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| format!(".{e}"))
        .unwrap_or_default();
    let file_name = path.file_name()?.to_str()?;
    let folder = rel.strip_suffix(file_name)?;
    (2..100).find_map(|n| {
        let candidate = format!("{stem}_{n}{extension}");
        (!path.with_file_name(&candidate).exists()).then(|| format!("{folder}{candidate}"))
    })
}

/// Lines of the file shown with a failed match, so a small model copies from what is there rather
/// than from its memory of it: the whole file when short, else a window around the line most like
/// the first line of `old_text`.
fn current_text_near(rel: &str, text: &str, old_text: &str) -> String {
    const WHOLE_FILE_LINES: usize = 60;
    const WINDOW: usize = 30;
    let lines: Vec<&str> = text.lines().collect();
    let start = if lines.len() <= WHOLE_FILE_LINES {
        1
    } else {
        let wanted = old_text
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .unwrap_or("");
        let best = lines
            .iter()
            .enumerate()
            .max_by_key(|(_, line)| shared_words(line, wanted))
            .map(|(index, _)| index + 1)
            .unwrap_or(1);
        best.saturating_sub(WINDOW / 3).max(1)
    };
    let window = if lines.len() <= WHOLE_FILE_LINES {
        WHOLE_FILE_LINES
    } else {
        WINDOW
    };
    match crate::read::render_window(rel, text, start, window) {
        Ok(shown) => format!("\nThe file as it is now:\n{}", shown.text),
        Err(_) => String::new(),
    }
}

/// How many words two lines share: a cheap similarity that survives changed indentation.
fn shared_words(line: &str, wanted: &str) -> usize {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let wanted = words(wanted);
    words(line).iter().filter(|w| wanted.contains(w)).count()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn protected_rules_match_folders_and_files() {
        let rules = vec!["migrations/".to_string(), "setup.py".to_string()];
        let actual: Vec<Option<&str>> = [
            "migrations/0001.sql",
            "migrations",
            "migrationsx/a",
            "setup.py",
            "src/setup.py",
        ]
        .iter()
        .map(|rel| protected_by(&rules, rel))
        .collect();
        assert_eq!(
            actual,
            vec![
                Some("migrations/"),
                Some("migrations/"),
                None,
                Some("setup.py"),
                None
            ]
        );
    }
}
