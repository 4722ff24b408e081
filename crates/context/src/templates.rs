//! The texts the model reads, as named templates filled from typed values.
//!
//! The templates are the files under `crates/context/prompts/`, compiled into the binary (MiniJinja:
//! `{{ value }}`, `{% if %}`, `{% for %}`, `{% include name %}`; blocks trimmed, so a tag alone on
//! its line leaves no line behind). A text built of parts names its parts as templates of their
//! own, and a helper changes what the model reads by choosing another part for a named slot — the
//! guided phases put [`Steps::FixFirst`] in the rules' `steps` slot — never by editing a sentence
//! of another part. Every value a template uses must be given: an undefined one is an error, not
//! an empty string.
//!
//! Rendering can fail only through a mistake in a template or its values, which is a bug in plumb;
//! the tests render every template with every variant of its values, and a failure is still an
//! error the caller passes on ([`TemplateError`]), never a panic or a half-filled prompt.

use std::sync::LazyLock;

use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde::Serialize;

use crate::notes::NotesFile;

/// `(name, text)` of each file named, read from `prompts/` at build time.
macro_rules! templates {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../prompts/", $name)))),*]
    };
}

/// Every template: its name and text.
const TEMPLATES: &[(&str, &str)] = templates![
    "rules.md",
    "rules/find.md",
    "rules/find_code_up_front.md",
    "rules/steps_test_first.md",
    "rules/steps_fix_first.md",
    "first_message.md",
    "tools/search_code.md",
    "tools/read_file.md",
    "tools/list_files.md",
    "tools/edit_file.md",
    "tools/create_file.md",
    "tools/replace_function.md",
    "tools/run_tests.md",
    "tools/run.md",
    "tools/done.md",
    "review/rules.md",
    "review/submit_review.md",
    "review/request.md",
    "review/back_to_fixer.md",
    "compaction/rules.md",
    "compaction/summarise_rounds.md",
    "compaction/request.md",
    "compaction/summary_note.md",
    "phases/shared.md",
    "phases/recorded.md",
    "phases/next_step.md",
    "phases/notes.md",
    "phases/undone.md",
    "phases/check.md",
    "figures/notes.md",
    "trace/pointer.md",
    "python_notes/notes.md",
    "ladder/answer.md",
];

/// A template that could not be loaded or filled: a bug in plumb, named for its report.
#[derive(Debug, thiserror::Error)]
#[error("plumb's prompt template {name} failed (a bug in plumb, please report it): {message}")]
pub struct TemplateError {
    pub name: String,
    pub message: String,
}

/// The environment, every template loaded once; `Err` holds the first that did not parse.
static PROMPTS: LazyLock<Result<Environment<'static>, TemplateError>> = LazyLock::new(load);

fn load() -> Result<Environment<'static>, TemplateError> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Plain text for a model: nothing is escaped, whatever a template's name ends with.
    env.set_auto_escape_callback(|_| AutoEscape::None);
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
        .map_err(|error| TemplateError {
            name: "(syntax settings)".into(),
            message: error.to_string(),
        })?;
    env.set_syntax(syntax);
    for (name, text) in TEMPLATES {
        env.add_template(name, text)
            .map_err(|error| TemplateError {
                name: (*name).into(),
                message: error.to_string(),
            })?;
    }
    Ok(env)
}

/// Template `name` filled with `values`.
pub fn render(name: &str, values: impl Serialize) -> Result<String, TemplateError> {
    let fail = |error: minijinja::Error| TemplateError {
        name: name.into(),
        message: format!("{error:#}"),
    };
    let env = PROMPTS.as_ref().map_err(|error| TemplateError {
        name: error.name.clone(),
        message: error.message.clone(),
    })?;
    env.get_template(name)
        .and_then(|template| template.render(minijinja::Value::from(Serde(values))))
        .map_err(fail)
}

/// The description of tool `tool` (template `tools/<tool>.md`) filled with `values`.
pub fn tool_description(tool: &str, values: impl Serialize) -> Result<String, TemplateError> {
    render(&format!("tools/{tool}.md"), values)
}

/// How the rules' first step finds the code: the rules' `find` slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Find {
    /// search_code, list_files and read_file.
    Search,
    /// Start from the code shown in the first message (the code-up-front helper).
    CodeUpFront,
}

/// The order of test and fix: the rules' `steps` slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steps {
    /// A failing test first, then the fix.
    TestFirst,
    /// The fix first, then a test plumb runs with and without it (the guided phases).
    FixFirst,
}

/// The values of the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub find: Find,
    pub steps: Steps,
    /// The figures helper is on: the steps speak of the figure the ticket gives.
    pub figures: bool,
}

impl Rules {
    pub fn render(&self) -> Result<String, TemplateError> {
        #[derive(Serialize)]
        struct Values {
            find: &'static str,
            steps: &'static str,
            figures: bool,
        }
        render(
            "rules.md",
            Values {
                find: match self.find {
                    Find::Search => "rules/find.md",
                    Find::CodeUpFront => "rules/find_code_up_front.md",
                },
                steps: match self.steps {
                    Steps::TestFirst => "rules/steps_test_first.md",
                    Steps::FixFirst => "rules/steps_fix_first.md",
                },
                figures: self.figures,
            },
        )
    }
}

/// The values of the first user message, each part's text already trimmed at its end.
#[derive(Serialize)]
pub(crate) struct FirstMessageValues<'a> {
    pub ticket: &'a str,
    pub notes: Vec<NotesFile>,
    pub test_command: &'a str,
    pub baseline: &'a str,
    pub repo_map: &'a str,
    pub code: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_under_prompts_is_a_template() {
        fn walk(dir: &std::path::Path, root: &std::path::Path, found: &mut Vec<String>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, root, found);
                } else {
                    let name = path.strip_prefix(root).unwrap().to_string_lossy();
                    found.push(name.into_owned());
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
        let mut on_disk = Vec::new();
        walk(&root, &root, &mut on_disk);
        on_disk.sort();
        let mut listed: Vec<String> = TEMPLATES.iter().map(|(name, _)| name.to_string()).collect();
        listed.sort();
        assert_eq!(listed, on_disk);
    }

    #[test]
    fn every_template_parses() {
        assert!(PROMPTS.is_ok(), "{:?}", PROMPTS.as_ref().err());
    }

    #[test]
    fn the_rules_render_in_every_variant_with_their_slots_filled() {
        for find in [Find::Search, Find::CodeUpFront] {
            for steps in [Steps::TestFirst, Steps::FixFirst] {
                for figures in [false, true] {
                    let text = Rules {
                        find,
                        steps,
                        figures,
                    }
                    .render()
                    .unwrap();
                    assert!(text.starts_with("You are plumb's fixer."), "{text}");
                    let order: Vec<Option<usize>> =
                        ["\n1. Find", "\n2. ", "\n3. ", "\n4. ", "\n5. Call done"]
                            .iter()
                            .map(|step| text.find(step))
                            .collect();
                    assert!(order.iter().all(Option::is_some), "{text}");
                    assert!(order.is_sorted(), "{text}");
                    assert!(
                        !text.contains("\n\n1.") && !text.contains("\n\n5."),
                        "{text}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_value_left_out_is_an_error_not_an_empty_string() {
        #[derive(Serialize)]
        struct WithoutBaseline {
            ticket: &'static str,
            notes: Vec<NotesFile>,
            test_command: &'static str,
            repo_map: &'static str,
            code: Option<&'static str>,
        }
        let error = render(
            "first_message.md",
            WithoutBaseline {
                ticket: "t",
                notes: Vec::new(),
                test_command: "pytest",
                repo_map: "m",
                code: None,
            },
        )
        .unwrap_err();
        assert_eq!(error.name, "first_message.md");
        assert!(error.message.contains("undefined"), "{}", error.message);
    }
}
