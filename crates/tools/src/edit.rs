//! The tools that write: `edit_file` (search/replace, `old_text` exactly once) and `create_file`
//! (new files only). Both confine the path, refuse protected paths, and refuse content that adds a
//! syntax error; the error texts are the article's, so models trained on them know what to do.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use plumb_workspace::{ConfineError, ReadError};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::blocking::off_runtime;
use crate::read::relative;
use crate::reindent::{self, indentation_match};
use crate::test_parameters::drop_helper_parameters;
use crate::tool::{Project, Tool};
use crate::unshadow;
use crate::{ToolContext, ToolError, ToolOutput, args};

const OUTSIDE: &str = "you can only edit files inside the project folder.";

/// Resolves a path for writing and refuses protected paths.
pub(crate) fn resolve_for_write(
    ctx: &ToolContext<'_>,
    path: &str,
) -> Result<(PathBuf, String), ToolError> {
    let resolved = ctx.workspace.resolve(path).map_err(|err| match err {
        // A name that would show as something else is refused as such, not as "outside".
        ConfineError::Hidden { .. } | ConfineError::Invalid { .. } => {
            ToolError::respond(format!("{err}."))
        }
        _ => ToolError::respond(OUTSIDE),
    })?;
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

    fn parameters(&self, _project: &Project<'_>) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path relative to the project root."},
                "old_text": {"type": "string", "description": "The exact text to replace (empty: add new_text at the end)."},
                "new_text": {"type": "string", "description": "The text to put in its place."}
            },
            "required": ["path", "old_text", "new_text"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext<'_>, value: &Value) -> Result<ToolOutput, ToolError> {
        let mut a: EditArgs = args::parse(self.name(), "path, old_text, new_text", value)?;
        let (path, rel) = resolve_for_write(ctx, &a.path)?;
        let renamed = ctx
            .helpers
            .python_rewrites
            .then(|| python_unshadow(&rel, &mut a.new_text))
            .flatten();
        self.edit(ctx, a, path, rel)
            .await
            .map(|out| with_note(out, renamed))
    }
}

impl EditFile {
    async fn edit(
        &self,
        ctx: &ToolContext<'_>,
        mut a: EditArgs,
        path: std::path::PathBuf,
        rel: String,
    ) -> Result<ToolOutput, ToolError> {
        if !path.is_file() {
            return Err(ToolError::respond(format!(
                "there is no file called {}.",
                a.path
            )));
        }
        let before = read_text(ctx, &rel).await?;
        if a.old_text.is_empty() {
            if a.new_text.trim().is_empty() {
                return Err(ToolError::respond(
                    "old_text and new_text are both empty, so nothing would change. To replace lines, copy them exactly from read_file into old_text; to add lines at the end of the file, leave old_text empty and put them in new_text.",
                ));
            }
            // Appending: the one edit a model can make without copying any of the file.
            // The Python guards and rewrites are the small-model helper `python_rewrites`.
            let rewrites = ctx.helpers.python_rewrites;
            if let Some(note) = rewrites
                .then(|| {
                    loose_test_lines(&rel, &a.new_text)
                        .or_else(|| test_outside_tests(&rel, &a.new_text))
                })
                .flatten()
            {
                return Err(ToolError::respond(note));
            }
            let dropped = rewrites
                .then(|| drop_helper_parameters(&rel, &a.new_text, &before))
                .flatten();
            if let Some((text, _)) = &dropped {
                a.new_text = text.clone();
            }
            let mut renamed_tests: Vec<(String, String)> = Vec::new();
            while let Some(name) = redefined_name(&before, &a.new_text) {
                let baseline = ctx.workspace.baseline_text(&rel).ok().flatten();
                let added_this_run =
                    baseline.is_some_and(|text| redefined_name(&text, &a.new_text).is_none());
                // A new test under an existing test's name (a small model copies the test it was
                // shown, name and all): the intent is a second test, so it gets a name of its own.
                if !added_this_run
                    && name.starts_with("test")
                    && let Some((text, fresh)) = rename_definition(&a.new_text, &name, &before)
                {
                    renamed_tests.push((name, fresh));
                    a.new_text = text;
                    continue;
                }
                return Err(ToolError::respond(if added_this_run {
                    format!(
                        "you already added `{name}` to {rel} in this run, so it is there now. To change it, use edit_file with old_text copied from it (read_file shows the end of the file). Nothing was changed."
                    )
                } else {
                    format!(
                        "{rel} already defines `{name}`, and a second definition would replace the first (and hide a test). Give the new one a name of its own. Nothing was changed."
                    )
                }));
            }
            let body = before.trim_end_matches('\n');
            let added = a.new_text.trim_matches('\n');
            let separator = if body.is_empty() { "" } else { "\n\n\n" };
            let after = format!("{body}{separator}{added}\n");
            let offset = body.len() + separator.len();
            return finish_edit(&path, &rel, &before, after, offset, added)
                .await
                .map(|mut out| {
                out.text = out.text.replacen("Edited", "Appended to", 1);
                if let Some((_, note)) = &dropped {
                    out.text = format!("{note}{}", out.text);
                }
                for (name, fresh) in renamed_tests.iter().rev() {
                    out.text = format!(
                        "{rel} already has a test called `{name}` (a second definition would replace it), so the new one was renamed `{fresh}`. {}",
                        out.text
                    );
                }
                out.summary = format!("appended to {rel}");
                out
            });
        }
        if a.old_text == a.new_text {
            return Err(ToolError::respond(
                "new_text is the same as old_text, so nothing would change. Put the changed lines in new_text.",
            ));
        }
        let matches = before.matches(a.old_text.as_str()).count();
        if matches == 0
            && let Some(found) = indentation_match(&before, &a.old_text, &a.new_text)
            && let Some(after) = reindent::apply(&before, &found)
        {
            return finish_edit(&path, &rel, &before, after, found.start, &found.replacement)
                .await
                .map(|mut out| {
                    out.text = format!(
                        "old_text matched once when its {} was set aside; the new text was placed at the file's indentation. {}",
                        found.adjusted, out.text
                    );
                    out
                });
        }
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
        finish_edit(&path, &rel, &before, after, offset, &a.new_text).await
    }
}

/// In a Python file, renames `x = x(...)` variables in `text` (see [`unshadow`]); the note to
/// put before the tool's result when it did.
pub(crate) fn python_unshadow(rel: &str, text: &mut String) -> Option<String> {
    if !rel.ends_with(".py") {
        return None;
    }
    let done = unshadow::unshadow(text)?;
    *text = done.text;
    Some(unshadow::note(&done.renamed))
}

pub(crate) fn with_note(mut out: ToolOutput, note: Option<String>) -> ToolOutput {
    if let Some(note) = note {
        out.text = format!("{note}{}", out.text);
    }
    out
}

/// A note refusing to append `added` to a Python test file when it starts with a statement
/// outside any function (`assert totals.total == …`): at the end of the file it would run once,
/// at import, and never as a test. A small model sends such lines meaning to change its test.
fn loose_test_lines(rel: &str, added: &str) -> Option<String> {
    if !rel.ends_with(".py") || !plumb_verify::tamper::is_test_file(rel) {
        return None;
    }
    let first = added.lines().find(|line| !line.trim().is_empty())?;
    const TOP_LEVEL: [&str; 9] = [
        "def ",
        "async def ",
        "class ",
        "@",
        "import ",
        "from ",
        "#",
        "\"\"\"",
        "'''",
    ];
    if TOP_LEVEL.iter().any(|start| first.starts_with(start))
        || first.contains(" = ") && !first.starts_with(char::is_whitespace)
    {
        return None;
    }
    Some(format!(
        "an empty old_text adds new_text at the end of {rel}, outside every function, where `{}` would not be part of any test. To change a test, copy its lines from read_file into old_text and put the changed lines in new_text; to add a test, new_text must be a whole function (`def test_...():` and its body). Nothing was changed.",
        first.trim()
    ))
}

/// A note refusing to append a test function (`def test…`) to a Python file that is not a test
/// file: pytest would never collect it, and the linter then flags its names. A small model asked
/// for a test after its fix appended it to the file it had just fixed.
fn test_outside_tests(rel: &str, added: &str) -> Option<String> {
    if !rel.ends_with(".py") || plumb_verify::tamper::is_test_file(rel) {
        return None;
    }
    // Only what is plainly a pytest test: `def test…():` without parameters, with an assert. A
    // source module may well have a `test_connection(host)` of its own.
    let name = defined_names(added)
        .into_iter()
        .find(|name| name.starts_with("test") && added.contains(&format!("def {name}():")))?;
    if !added.contains("assert ") {
        return None;
    }
    Some(format!(
        "{rel} is not a test file, so pytest would never run `{name}` there. Add the test to a test file (the one under tests/ for this code). Nothing was changed."
    ))
}

/// The top-level functions `source` defines (`def`, `fn`, `func`), in order.
fn defined_names(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|line| {
            let rest = DEFINITION_KEYWORDS
                .iter()
                .find_map(|keyword| line.strip_prefix(keyword))?;
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

const DEFINITION_KEYWORDS: [&str; 5] = ["def ", "async def ", "fn ", "pub fn ", "func "];

/// A top-level function `added` defines that `text` already defines.
fn redefined_name(text: &str, added: &str) -> Option<String> {
    let existing = defined_names(text);
    defined_names(added)
        .into_iter()
        .find(|name| existing.contains(name))
}

/// `added` with its top-level definition of `name` renamed `name_2` (or the first free
/// `name_N` in `file` and `added`), and that new name; `None` when no definition line names it.
fn rename_definition(added: &str, name: &str, file: &str) -> Option<(String, String)> {
    let taken: Vec<String> = defined_names(file)
        .into_iter()
        .chain(defined_names(added))
        .collect();
    let fresh = (2..)
        .map(|n| format!("{name}_{n}"))
        .find(|candidate| !taken.contains(candidate))?;
    let mut done = false;
    let lines: Vec<String> = added
        .split('\n')
        .map(|line| {
            if done {
                return line.to_string();
            }
            let renamed = DEFINITION_KEYWORDS.iter().find_map(|keyword| {
                let after = line.strip_prefix(keyword)?.strip_prefix(name)?;
                let whole_name = !after.starts_with(|c: char| c.is_alphanumeric() || c == '_');
                whole_name.then(|| format!("{keyword}{fresh}{after}"))
            });
            done = renamed.is_some();
            renamed.unwrap_or_else(|| line.to_string())
        })
        .collect();
    done.then(|| (lines.join("\n"), fresh))
}

/// Introduces the lines an edit's answer ends with: the edited lines and a few around them.
pub const EDITED_LINES_HEADER: &str = "Lines around the change now read:";

/// Checks the edited text parses, writes it, and shows the lines around the change.
pub(crate) async fn finish_edit(
    path: &Path,
    rel: &str,
    before: &str,
    after: String,
    offset: usize,
    new_text: &str,
) -> Result<ToolOutput, ToolError> {
    let (after, offset, note) = crate::new_test::with_use_super(rel, before, after, offset);
    plumb_context::syntax::check_edit(path, Some(before), &after)
        .map_err(|problem| syntax_refusal("edit", &problem))?;
    write_text(path, &after).await?;
    // The text before the change is the same in both versions; `after` also holds an append's.
    let first_line = after
        .get(..offset)
        .map(|head| head.matches('\n').count() + 1)
        .unwrap_or(1);
    let changed = new_text.lines().count().max(1);
    Ok(ToolOutput {
        text: format!(
            "{note}Edited {rel}. {EDITED_LINES_HEADER}\n{}",
            excerpt(&after, first_line, changed)
        ),
        summary: format!("edited {rel} at line {first_line}"),
        changed: true,
        ..ToolOutput::default()
    })
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

    fn parameters(&self, _project: &Project<'_>) -> Value {
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
        let mut a: CreateArgs = args::parse(self.name(), "path, content", value)?;
        let (path, rel) = resolve_for_write(ctx, &a.path)?;
        let renamed = ctx
            .helpers
            .python_rewrites
            .then(|| python_unshadow(&rel, &mut a.content))
            .flatten();
        // A file this run created (not in the baseline) may be written again whole: a model
        // redoing its own new test file loses nothing of the project's.
        let own_file = path.symlink_metadata().is_ok_and(|m| m.is_file())
            && matches!(ctx.workspace.baseline_text(&rel), Ok(None));
        let tree = ctx.workspace.tree();
        let own_rel = rel.clone();
        if own_file
            && off_runtime(move || tree.read(&own_rel, crate::read::MAX_READ_BYTES))
                .await?
                .is_ok_and(|now| now == a.content.as_bytes())
        {
            return Err(ToolError::respond(format!(
                "{rel} already has exactly this content, so nothing changed. Write something different, or take another step."
            )));
        }
        if path.symlink_metadata().is_ok() && !own_file {
            let mut message = format!(
                "there is already a file called {rel}; add to its end with edit_file and an empty old_text, change it with edit_file"
            );
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
        write_text(&path, &a.content).await?;
        let verb = if own_file {
            "Replaced (a file this run created)"
        } else {
            "Created"
        };
        Ok(with_note(
            ToolOutput {
                text: format!("{verb} {rel} ({} lines).", a.content.lines().count()),
                summary: format!("created {rel}"),
                changed: true,
                ..ToolOutput::default()
            },
            renamed,
        ))
    }
}

/// The file to edit, through the confined reader (a link, FIFO or device is refused unopened).
pub(crate) async fn read_text(ctx: &ToolContext<'_>, rel: &str) -> Result<String, ToolError> {
    let tree = ctx.workspace.tree();
    let path = rel.to_owned();
    off_runtime(move || tree.read_text(&path, crate::read::MAX_READ_BYTES))
        .await?
        .map_err(|err| match err {
            ReadError::NotText { .. } => ToolError::respond(format!(
                "{rel} is not a UTF-8 text file; plumb edits text files only."
            )),
            other => ToolError::respond(format!("could not read {rel}: {other}.")),
        })
}

async fn write_text(path: &Path, text: &str) -> Result<(), ToolError> {
    let (target, bytes) = (path.to_path_buf(), text.to_owned());
    off_runtime(move || std::fs::write(&target, bytes))
        .await?
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

    #[test]
    fn a_test_function_is_not_appended_to_a_source_file() {
        let test = "def test_gst():\n    assert 1 == 1\n";
        assert!(
            test_outside_tests("billing/invoice_totals.py", test)
                .unwrap()
                .starts_with("billing/invoice_totals.py is not a test file, so pytest would never run `test_gst` there.")
        );
        assert_eq!(test_outside_tests("tests/test_totals.py", test), None);
        assert_eq!(
            test_outside_tests("billing/invoice_totals.py", "def total():\n    pass\n"),
            None
        );
        assert_eq!(
            test_outside_tests(
                "net/probe.py",
                "def test_connection(host):\n    return ping(host)\n"
            ),
            None,
            "a module's own function of that name is not a pytest test"
        );
    }

    #[test]
    fn loose_statements_are_not_appended_to_a_python_test() {
        let test = "tests/test_totals.py";
        assert!(
            loose_test_lines(test, "assert totals.total == Decimal('1080.00')")
                .unwrap()
                .contains("where `assert totals.total == Decimal('1080.00')` would not be part of any test")
        );
        assert!(loose_test_lines(test, "    totals = compute(x)\n").is_some());
        for fine in [
            "\ndef test_a():\n    assert 1\n",
            "@pytest.mark.slow\ndef test_a():\n    pass\n",
            "from billing import tax\n",
            "TODAY = date(2024, 1, 1)\n",
            "\"\"\"More tests.\"\"\"\n\ndef test_b():\n    pass\n",
        ] {
            assert_eq!(loose_test_lines(test, fine), None, "{fine}");
        }
        assert_eq!(loose_test_lines("billing/tax.py", "assert x"), None);
        assert_eq!(loose_test_lines("tests/test_a.rs", "assert!(x);"), None);
    }

    #[test]
    fn a_copied_test_name_gets_the_first_free_number() {
        let file = "def test_a():\n    pass\n\n\ndef test_a_2():\n    pass\n";
        let added = "@pytest.mark.slow\ndef test_a():\n    assert test_abc() == 1\n";
        assert_eq!(redefined_name(file, added).as_deref(), Some("test_a"));
        assert_eq!(
            rename_definition(added, "test_a", file),
            Some((
                "@pytest.mark.slow\ndef test_a_3():\n    assert test_abc() == 1\n".to_string(),
                "test_a_3".to_string()
            ))
        );
        assert_eq!(
            rename_definition("def test_ab():\n    pass\n", "test_a", file),
            None,
            "a longer name that starts the same is another function"
        );
    }
}
