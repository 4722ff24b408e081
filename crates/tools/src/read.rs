//! The tools that only look: `search_code`, `read_file`, `list_files`. Reads are confined to the
//! workspace exactly like writes, so no file outside it can reach a prompt.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};

use plumb_workspace::{ConfineError, ReadError};

use crate::blocking::off_runtime;
use crate::tool::{Project, Tool};
use crate::{ToolContext, ToolError, ToolOutput, args, search};

/// The most bytes of one file the tools read (`read_file`, `edit_file`): a file larger than this is
/// refused with its size rather than read in part.
pub const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// Resolves a model-given path for reading, or says why it cannot be read.
pub(crate) fn resolve_for_read(ctx: &ToolContext<'_>, path: &str) -> Result<PathBuf, ToolError> {
    ctx.workspace.resolve(path).map_err(|err| match err {
        ConfineError::Hidden { .. } | ConfineError::Invalid { .. } => {
            ToolError::respond(format!("{err}."))
        }
        _ => ToolError::respond("you can only read files inside the project folder."),
    })
}

/// An optional file or folder to narrow a search or an outline to; `None`, "" and "." mean the
/// whole project.
fn resolve_scope(ctx: &ToolContext<'_>, path: Option<&str>) -> Result<Option<PathBuf>, ToolError> {
    match path {
        Some(p) if !p.is_empty() && p != "." => {
            let resolved = resolve_for_read(ctx, p)?;
            if !resolved.exists() {
                return Err(ToolError::respond(format!(
                    "there is no file or folder called {p}."
                )));
            }
            Ok(Some(resolved))
        }
        _ => Ok(None),
    }
}

/// The workspace-relative form of an absolute path inside the workspace, with `/` separators.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let text = rel.to_string_lossy().replace('\\', "/");
    if text.is_empty() {
        ".".to_string()
    } else {
        text
    }
}

pub(crate) struct SearchCode;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    regex: bool,
}

#[async_trait]
impl Tool for SearchCode {
    fn name(&self) -> &'static str {
        "search_code"
    }

    fn parameters(&self, _project: &Project<'_>) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Text to find (case-insensitive unless it has capitals)."},
                "path": {"type": "string", "description": "Only search this file or folder."},
                "regex": {"type": "boolean", "description": "Treat query as a regular expression.", "default": false}
            },
            "required": ["query"],
            "additionalProperties": false
        })
    }

    fn output_line_limit(&self, ctx: &ToolContext<'_>) -> usize {
        ctx.config.limits.search_results + 3
    }

    async fn call(&self, ctx: &ToolContext<'_>, value: &Value) -> Result<ToolOutput, ToolError> {
        let a: SearchArgs = args::parse(self.name(), "query, path?, regex?", value)?;
        if a.query.is_empty() {
            return Err(ToolError::respond(
                "query is empty. Give the text to search for.",
            ));
        }
        let dir = resolve_scope(ctx, a.path.as_deref())?;
        let limit = ctx.config.limits.search_results;
        let tree = ctx.workspace.tree();
        let (query, regex) = (a.query.clone(), a.regex);
        let result = off_runtime(move || {
            search::search(&search::SearchRequest {
                tree: &tree,
                dir: dir.as_deref(),
                query: &query,
                regex,
                limit,
            })
        })
        .await?
        .map_err(|err| ToolError::respond(err.to_string()))?;
        let summary = format!("{} matches in {} files", result.total, result.files);
        Ok(ToolOutput {
            text: search::render(&result, &a.query, limit),
            summary,
            ..ToolOutput::default()
        })
    }
}

pub(crate) struct ReadFile;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    #[serde(default)]
    start_line: Option<usize>,
    #[serde(default)]
    lines: Option<usize>,
}

#[async_trait]
impl Tool for ReadFile {
    fn name(&self) -> &'static str {
        "read_file"
    }

    fn parameters(&self, _project: &Project<'_>) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path relative to the project root."},
                "start_line": {"type": "integer", "minimum": 1, "description": "First line to show (1-based)."},
                "lines": {"type": "integer", "minimum": 1, "maximum": 400, "description": "How many lines to show (default 100)."}
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn output_line_limit(&self, ctx: &ToolContext<'_>) -> usize {
        // The window is the limit here; shortening it again would hide the middle of what was asked for.
        ctx.config.limits.file_window_max + 3
    }

    async fn call(&self, ctx: &ToolContext<'_>, value: &Value) -> Result<ToolOutput, ToolError> {
        let a: ReadArgs = args::parse(self.name(), "path, start_line?, lines?", value)?;
        let path = resolve_for_read(ctx, &a.path)?;
        let tree = ctx.workspace.tree();
        let asked = a.path.clone();
        let text = off_runtime(move || tree.read_text(&asked, MAX_READ_BYTES))
            .await?
            .map_err(|err| read_refusal(&a.path, err))?;
        let limits = &ctx.config.limits;
        let window = a
            .lines
            .unwrap_or(limits.file_window)
            .clamp(1, limits.file_window_max);
        let rel = relative(ctx.workspace.root(), &path);
        let rendered = render_window(&rel, &text, a.start_line.unwrap_or(1), window)?;
        Ok(rendered)
    }
}

/// What the model is told when a file cannot be read.
fn read_refusal(path: &str, err: ReadError) -> ToolError {
    ToolError::respond(match err {
        ReadError::Confine(_) => "you can only read files inside the project folder.".to_owned(),
        ReadError::Folder { .. } => {
            format!("{path} is a folder; use list_files to see what is in it.")
        }
        ReadError::Missing { .. } => format!("there is no file called {path}."),
        ReadError::NotText { .. } => {
            format!("{path} is not a UTF-8 text file; plumb shows text files only.")
        }
        ReadError::Special { .. }
        | ReadError::TooLarge { .. }
        | ReadError::Changed { .. }
        | ReadError::Io { .. } => format!("{err}."),
    })
}

/// A numbered window of `text`, with a header "path: lines a–b of N" and a hint to read on.
pub(crate) fn render_window(
    rel: &str,
    text: &str,
    start_line: usize,
    window: usize,
) -> Result<ToolOutput, ToolError> {
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    if total == 0 {
        return Ok(ToolOutput {
            text: format!("{rel} is empty (0 lines)."),
            summary: format!("{rel}: empty"),
            ..ToolOutput::default()
        });
    }
    let start = start_line.max(1);
    if start > total {
        return Err(ToolError::respond(format!(
            "{rel} has only {total} lines; start_line must be at most {total}."
        )));
    }
    let end = (start + window - 1).min(total);
    let width = end.to_string().len();
    let mut out = format!("{rel}: lines {start}–{end} of {total}\n");
    for (offset, line) in lines[start - 1..end].iter().enumerate() {
        out.push_str(&format!("{:>width$}| {line}\n", start + offset));
    }
    if end < total {
        out.push_str(&format!(
            "(more below: read_file with start_line={})\n",
            end + 1
        ));
    }
    Ok(ToolOutput {
        text: out,
        summary: format!("{rel}: lines {start}–{end} of {total}"),
        ..ToolOutput::default()
    })
}

pub(crate) struct ListFiles;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    path: Option<String>,
}

#[async_trait]
impl Tool for ListFiles {
    fn name(&self) -> &'static str {
        "list_files"
    }

    fn parameters(&self, _project: &Project<'_>) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Folder (or file) relative to the project root."}
            },
            "additionalProperties": false
        })
    }

    fn output_line_limit(&self, ctx: &ToolContext<'_>) -> usize {
        // The outline has its own character budget.
        ctx.config.limits.tool_output_lines * 4
    }

    async fn call(&self, ctx: &ToolContext<'_>, value: &Value) -> Result<ToolOutput, ToolError> {
        let a: ListArgs = args::parse(self.name(), "path?", value)?;
        let root = ctx.workspace.root();
        let sub = resolve_scope(ctx, a.path.as_deref())?;
        let tree = ctx.workspace.tree();
        let scope = sub.clone();
        let ticket = ctx.ticket.to_string();
        let cache_file = ctx.tag_cache.map(Path::to_path_buf);
        let max_chars = ctx.config.limits.repo_map_chars * 2;
        let max_tokens = ctx.config.limits.repo_map_tokens * 2;
        let text = off_runtime(move || {
            let options = plumb_context::run_map::FolderMapOptions {
                max_chars,
                max_files: 400,
                max_tokens,
                cache_file: cache_file.as_deref(),
            };
            // The tool has no model to count with: the estimate, which errs high.
            plumb_context::run_map::folder_map(
                &tree,
                scope.as_deref(),
                &ticket,
                &options,
                &plumb_context::size::estimated_count,
            )
        })
        .await?
        .map_err(|err| ToolError::respond(err.to_string()))?;
        let shown = sub
            .as_deref()
            .map(|s| relative(root, s))
            .unwrap_or_else(|| ".".to_string());
        Ok(ToolOutput {
            summary: format!("outline of {shown}"),
            text,
            ..ToolOutput::default()
        })
    }
}
