//! The file that holds the tests that show the bug, when the task named them or they failed at
//! baseline: it must stay as it is (the ladder's tamper check rejects a change to it), so a write
//! aimed at it is refused or sent to the code's file, and every note about it gives the same one
//! direction — change the code's file, not this one.
//!
//! HumanEvalFix keeps the example test in its own file, `tests/test_unique.py`, with a helper
//! `def check(unique)` that the test calls. A `replace_function` of `check` was sent to the code's
//! file (`unique.py`), which does not define it, and the tool then answered "tests/test_unique.py
//! does: call replace_function with path tests/test_unique.py": the phases and the tool pointed
//! the model at each other's file, and on Python/34 the 1.5B model went back and forth until the
//! run stopped as stuck. Now the note after such a refusal names the reproduction's file as the
//! place not to change, and the code's functions as the ones to rewrite.

use plumb_context::callables::callables;
use plumb_context::syntax::Language;
use plumb_protocol::ToolCall;

use super::state::{Origin, Phases};
use super::words::Note;

/// How many of the code file's functions a note lists.
const LISTED_FUNCTIONS: usize = 12;

impl Phases {
    /// A note refusing an edit of the lines of the file holding the tests that show the bug, when
    /// the task named them or they failed at baseline: they are the reproduction, and the ladder's
    /// tamper check rejects a change to them at the end (HumanEvalFix Python/7: the 1.5B model
    /// rewrote the example test's `check` with `edit_file` in round 5 and worked on from there).
    /// A test added at the end of that file (an empty `old_text`) stays allowed, and
    /// `replace_function` there is sent to the code's file ([`Phases::to_the_code`]): on HumanEvalFix
    /// Python/14 refusing it only repeated the test file's path back, eight rounds running.
    pub(super) fn changes_the_reproduction(&self, call: &ToolCall) -> Option<Note> {
        let path = super::verdict::written_path(call)?;
        let rewrites = match call.name.as_str() {
            "edit_file" => call
                .arguments
                .get("old_text")
                .and_then(|old| old.as_str())
                .is_some_and(|old| !old.is_empty()),
            "create_file" => true,
            _ => false,
        };
        // The note names the code's file first: a small model copies the first path it reads.
        (rewrites && self.holds_the_reproduction(path)).then(|| Note::KeepTheReproduction {
            path: path.to_string(),
            code: self.source_file.clone(),
        })
    }

    /// Whether `path` holds the tests that show the bug, when the task named them or they failed
    /// at baseline (the model's own test is its to change).
    pub(super) fn holds_the_reproduction(&self, path: &str) -> bool {
        self.reproduction_files().contains(&path)
    }

    /// The files of the tests that show the bug, when the task named them or they failed at
    /// baseline.
    fn reproduction_files(&self) -> Vec<&str> {
        self.test
            .iter()
            .filter(|t| t.origin != Origin::Model)
            .flat_map(|test| test.targets.iter())
            .filter_map(|target| target.split("::").next())
            .collect()
    }

    /// A `replace_function` call aimed at the file holding the tests that show the bug (named, or
    /// failing at baseline), sent to the code's file shown up front instead, with the note saying
    /// so. The reproduction's file must not change, and a function of the code under test is
    /// what such a call means: on HumanEvalFix Python/14 the 1.5B model sent the right fix of
    /// `all_prefixes` with the test file's path eight rounds running. The tool still checks that
    /// the code's file defines the function; when it does not, [`Phases::name_in_the_reproduction`]
    /// says what to do instead.
    pub(crate) fn to_the_code(&self, call: &ToolCall) -> Option<(serde_json::Value, Note)> {
        if call.name != "replace_function" {
            return None;
        }
        let path = call.arguments.get("path")?.as_str()?;
        let code = self.source_file.as_deref().filter(|file| *file != path)?;
        if !self.holds_the_reproduction(path) {
            return None;
        }
        let mut arguments = call.arguments.clone();
        arguments["path"] = serde_json::Value::String(code.to_string());
        Some((
            arguments,
            Note::SentToTheCode {
                path: path.to_string(),
                code: code.to_string(),
            },
        ))
    }

    /// The note that replaces the tool's refusal of a `replace_function` call (as it ran, after
    /// [`Phases::to_the_code`]) whose name the target file does not define but the reproduction's
    /// file does: the tool would send the model to that file, which must stay as it is. The note
    /// says so and names the code's file and its functions instead, so that every note points the
    /// same way. `read` gives a file's text. `None` when the call is not such a call.
    pub(crate) fn name_in_the_reproduction(
        &self,
        call: &ToolCall,
        read: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Note> {
        if call.name != "replace_function" {
            return None;
        }
        let path = call.arguments.get("path")?.as_str()?;
        let name = call.arguments.get("name")?.as_str()?;
        let short = name.rsplit(['.', ':']).next().unwrap_or(name);
        let functions = |file: &str| -> Vec<String> {
            let (Some(language), Some(text)) =
                (Language::from_path(std::path::Path::new(file)), read(file))
            else {
                return Vec::new();
            };
            callables(language, &text)
                .into_iter()
                .map(|callable| callable.name)
                .collect()
        };
        if functions(path).iter().any(|defined| defined == short) {
            return None;
        }
        let home = self
            .reproduction_files()
            .into_iter()
            .find(|file| functions(file).iter().any(|defined| defined == short))?;
        let code = self
            .source_file
            .as_deref()
            .or_else(|| (!self.holds_the_reproduction(path)).then_some(path))
            .filter(|file| *file != home);
        let functions = code
            .map(|code| functions(code).into_iter().take(LISTED_FUNCTIONS).collect())
            .unwrap_or_default();
        Some(Note::NameInTheReproduction {
            name: name.to_string(),
            home: home.to_string(),
            code: code.map(str::to_string),
            functions,
        })
    }
}
